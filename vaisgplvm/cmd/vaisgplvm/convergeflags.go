package main

import (
	"flag"
	"os"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/progress"
)

// convergeFlags are the flags of a fit to convergence (train --converge, reproduce --converge).
type convergeFlags struct {
	on                         bool
	maxSeconds, tol            float64
	maxIters, window, halvings int
}

// register adds --converge (its usage: what), --max-seconds (default maxSeconds), --max-lbfgs-iters,
// --converge-window, --converge-tol and --converge-halvings.
func (c *convergeFlags) register(fs *flag.FlagSet, what string, maxSeconds float64) {
	fs.BoolVar(&c.on, "converge", false, what)
	fs.Float64Var(&c.maxSeconds, "max-seconds", maxSeconds, "with --converge: stop each fit after this many seconds, reported as not converged (0: no limit)")
	fs.IntVar(&c.maxIters, "max-lbfgs-iters", 0, "with --converge: stop the L-BFGS fit after this many iterations, reported as not converged (0: no limit; a cap that does not depend on the machine's load)")
	fs.IntVar(&c.window, "converge-window", 50, "with --converge: L-BFGS iterations over which the rise of the bound is measured")
	fs.Float64Var(&c.tol, "converge-tol", 1e-4, "with --converge: largest rise of the bound per point (nats) over --converge-window iterations that counts as converged")
	fs.IntVar(&c.halvings, "converge-halvings", 4, "with --converge: an Adam fit (every bound but MF on full-batch data, and every mini-batch fit) has converged at a plateau after this many halvings of its step size")
}

// check refuses the rule flags without --converge (set: the flags given), and values out of range.
func (c *convergeFlags) check(set map[string]bool) error {
	if !c.on && (set["max-seconds"] || set["max-lbfgs-iters"] || set["converge-window"] || set["converge-tol"] || set["converge-halvings"] || set["converge-from"]) {
		return usagef("--max-seconds, --max-lbfgs-iters, --converge-window, --converge-tol, --converge-halvings and --converge-from go with --converge")
	}
	if c.maxSeconds < 0 || c.maxIters < 0 || c.window < 1 || !(c.tol > 0) || c.halvings < 1 {
		return usagef("--max-seconds and --max-lbfgs-iters must be >= 0, --converge-window and --converge-halvings >= 1 and --converge-tol > 0")
	}
	return nil
}

// options returns the fit's options capped at maxSeconds, with progress lines (both stages') on
// stderr unless quiet.
func (c *convergeFlags) options(maxSeconds float64, quiet bool) *converge.Options {
	o := &converge.Options{Rule: converge.Rule{Window: c.window, Tol: c.tol}, MaxSeconds: maxSeconds, MaxIters: c.maxIters}
	if !quiet {
		o.Observe = progress.Converge(os.Stderr, "", o.Rule, c.halvings)
	}
	return o
}
