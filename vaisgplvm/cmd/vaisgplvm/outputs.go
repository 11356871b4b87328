package main

import (
	"errors"
	"fmt"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/rundir"
	"os"
	"strings"
)

// openRunDir opens the output directory out for a run writing names (package rundir: refused when
// it holds files the run cannot prove it may replace, or when an input is among the outputs);
// every refusal is a usage error.
func openRunDir(out string, names []string, opt rundir.Options) (*rundir.Dir, error) {
	d, err := rundir.Open(out, names, opt)
	if err != nil {
		return nil, asUsage(err)
	}
	return d, nil
}

// openTrainDir is openRunDir for a training (experiment.OpenTrainDir: its outputs, partial ones
// marked).
func openTrainDir(out string, opt rundir.Options) (*rundir.Dir, error) {
	d, err := experiment.OpenTrainDir(out, opt)
	if err != nil {
		return nil, asUsage(err)
	}
	return d, nil
}

// asUsage makes err a usage error, leaving an *option.Error as it is (run rewords it with the
// flags).
func asUsage(err error) error {
	var oe *option.Error
	if errors.As(err, &oe) {
		return err
	}
	return usagef("%v", err)
}

// wrote says on stderr where a finished run's files went: "wrote DIR: a, b, c".
func wrote(dir *rundir.Dir) {
	fmt.Fprintf(os.Stderr, "wrote %s: %s\n", dir.Path, strings.Join(dir.Written(), ", "))
}
