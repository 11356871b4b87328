// Command vaisgplvm trains Bayesian GPLVMs with the MF, IWVI and VAIS bounds and reproduces the
// paper's tables.
//
//	vaisgplvm train --dataset oilflow --method vais --iters 3000 --seed 1 --out DIR
//	vaisgplvm train --data mine.csv [--labels COLUMN] [--standardize] --method vais --out DIR
//	vaisgplvm reproduce --table 1 [--runs N] [--iters N] [--paper]
//	vaisgplvm bench [--dataset oilflow|wine|frey|mnist] [--methods mf,iwvi,vais] [--iters N]
//	vaisgplvm infer --checkpoint FILE --data NEW.csv --out DIR
//	vaisgplvm evidence --checkpoint FILE --out DIR [--temps 1000] [--runs 8] [--points N]
//	vaisgplvm cmf --dataset frey|mnist [--latent-dim 5] [--families cmf,meanfield,amortised] [--out DIR]
//	vaisgplvm pair --a DIR[:METHOD] --b DIR[:METHOD] [--iters N]
//
// Exit status: 0 success; 2 the command line is wrong (a flag value or combination, a size that
// does not fit the data or memory, an unusable output directory), checked before any training; 1
// what it points at cannot be used (a data file, a checkpoint) or the run fails; 130 a run stopped
// by SIGINT or SIGTERM (train writes its checkpoint first and says how to resume). Errors are one
// line naming the problem and the fix.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/interrupt"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
)

const usageLine = "usage: vaisgplvm train|reproduce|bench|infer|evidence|cmf|pair [flags]; vaisgplvm COMMAND -h lists a command's flags"

// helpText is what vaisgplvm -h, --help and help print.
const helpText = `vaisgplvm: Bayesian GPLVMs trained with the MF, IWVI and VAIS bounds (Xu et al., UAI 2025).

Commands:
  train      fit one model (--dataset NAME or --data FILE.csv) and write metrics, figures, a checkpoint
  reproduce  one of the paper's tables (--table 1, 2, 3, 5 or 6) with its numbers beside ours
  bench      time training iterations (JSON)
  infer      latents and reconstructions of new, partly observed points under a trained checkpoint
  evidence   the AIS estimate of a checkpoint's evidence and each bound's gap to it
  cmf        GP-LVM-CMF beside mean-field and amortised baselines on held-out points
  pair       seed-paired differences between a method of one reproduced table and one of another

vaisgplvm COMMAND -h lists a command's flags. Exit status: 0 success, 1 a failure while running
(data, checkpoint, divergence), 2 a wrong command line (checked before any work), 130 interrupted.
Documentation: docs/options.md in the repository.
`

// usagef returns a usage error (exit status 2) already in the command's words: an *option.Error
// without fields, the one type of every error a caller can fix by changing what it asked for.
func usagef(format string, args ...any) error {
	return &option.Error{Msg: fmt.Sprintf(format, args...)}
}

// errHelp is returned by a command whose flags were asked for (-h, --help): exit status 0.
var errHelp = errors.New("help requested")

func main() { os.Exit(withKernels(os.Args)) }

// withKernels runs the command under the matrix kernels chosen for this machine
// (experiment.WithKernels).
func withKernels(argv []string) int {
	return experiment.WithKernels(argv, func(args []string) int { return run(args, os.Stderr) })
}

// run executes one command and returns the exit status: 0, 1 (a failure) or 2 (bad usage).
func run(args []string, stderr io.Writer) int {
	if len(args) < 1 {
		fmt.Fprintln(stderr, "vaisgplvm: no command: "+usageLine)
		return 2
	}
	experiment.PinProvenance()
	var err error
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(os.Stdout, helpText)
		return 0
	case "train":
		err = runTrain(args[1:])
	case "reproduce":
		err = runReproduce(args[1:])
	case "bench":
		err = runBench(args[1:])
	case "infer":
		err = runInfer(args[1:])
	case "evidence":
		err = runEvidence(args[1:])
	case "cmf":
		err = runCMF(args[1:])
	case "pair":
		err = runPair(args[1:])
	default:
		err = usagef("unknown command %q: want train, reproduce, bench, infer, evidence, cmf or pair", args[0])
	}
	if errors.Is(err, errHelp) { // COMMAND -h: the flags were printed on stdout
		return 0
	}
	var oe *option.Error
	if errors.As(err, &oe) { // a setting refused (or too big to fit): a usage error naming its flags
		fmt.Fprintln(stderr, "vaisgplvm:", strings.Replace(err.Error(), oe.Msg, oe.Reword(flagFor), 1))
		return 2
	}
	var fe *option.Failure
	if errors.As(err, &fe) { // a failure while running, with advice naming settings: their flags
		fmt.Fprintln(stderr, "vaisgplvm:", strings.Replace(err.Error(), fe.Msg, fe.Reword(flagFor), 1))
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "vaisgplvm:", err)
		var ie interrupt.Error
		if errors.As(err, &ie) {
			return 130
		}
		return 1
	}
	return 0
}
