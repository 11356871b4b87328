package main

import (
	"fmt"
	"os"
)

// printWarnings writes each warning on stderr, one line each.
func printWarnings(w []string) {
	for _, s := range w {
		printWarning(s)
	}
}

// printWarning writes a warning on stderr.
func printWarning(s string) { fmt.Fprintln(os.Stderr, "vaisgplvm: warning:", s) }
