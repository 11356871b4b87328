// Command vaisgplvm trains Bayesian GPLVMs with the MF, IWVI and VAIS bounds and reproduces the
// paper's tables.
//
//	vaisgplvm train --dataset oilflow --method vais --iters 3000 --seed 1 --out DIR
//	vaisgplvm reproduce --table 1 [--runs N] [--iters N] [--paper]
//	vaisgplvm bench [--iters N]
//
// A bad flag value prints a one-line error and exits with status 2.
package main

import (
	"errors"
	"fmt"
	"os"
)

// usageError marks errors caused by bad command-line input (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: vaisgplvm train|reproduce|bench [flags] (use -h after a command for its flags)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "train":
		err = runTrain(os.Args[2:])
	case "reproduce":
		err = runReproduce(os.Args[2:])
	case "bench":
		err = runBench(os.Args[2:])
	default:
		err = usagef("unknown command %q: want train, reproduce or bench", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vaisgplvm:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
