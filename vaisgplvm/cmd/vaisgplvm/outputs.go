package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// wrote says on stderr where a finished run's files went: "wrote DIR: a, b, c".
func wrote(dir *rundir.Dir) {
	fmt.Fprintf(os.Stderr, "wrote %s: %s\n", dir.Path, strings.Join(dir.Written(), ", "))
}
