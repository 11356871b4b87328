package converge

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Minimize minimises obj from x0 by L-BFGS, Fit's optimiser (gonum/optimize, Moré-Thuente line
// search, restarts after a failed line search), until opt.Rule holds on obj's values, or
// opt.MaxSeconds or opt.MaxIters pass, or ctx ends (after the iteration in progress). It returns
// the best point found, len(x0), and the result: NegELBO is obj there and Start obj at x0 (obj's
// units, e.g. nats per point), Curve obj after each iteration. For models that are not a
// model.Model with a collapsed bound, such as the standard GPLVM's MAP objective. With
// opt.Variables given, L-BFGS is preconditioned in the fit's tail as Fit's is. Errors: obj not
// finite at x0, opt.Variables that do not hold len(x0) values, or obj's error when no iteration
// completed.
func Minimize(ctx context.Context, obj Objective, x0 []float64, opt Options) ([]float64, *Result, error) {
	start := time.Now()
	var pc *preconditioner
	if len(opt.Variables) > 0 && !opt.Plain {
		if pc = newPreconditioner(opt.Variables, opt.Seed); len(pc.group) != len(x0) {
			return nil, nil, fmt.Errorf("converge: opt.Variables have %d values, x0 %d", len(pc.group), len(x0))
		}
	}
	f0, err := obj(x0, make([]float64, len(x0)))
	if err != nil {
		return nil, nil, fmt.Errorf("converge: at the start: %w", err)
	}
	if math.IsNaN(f0) || math.IsInf(f0, 0) {
		return nil, nil, fmt.Errorf("converge: the objective is %g at the start", f0)
	}
	observe := func(iter int, f, change float64) {
		if opt.Observe != nil {
			opt.Observe(Progress{Stage: "L-BFGS", Iter: iter, NegELBO: f, Change: change, Seconds: time.Since(start).Seconds()})
		}
	}
	res := lbfgs(obj, x0, opt.Rule, opt.MaxSeconds, opt.MaxIters, ctx.Done(), observe, pc)
	if res.err != nil && len(res.curve) == 0 {
		return nil, nil, fmt.Errorf("converge: %w", res.err)
	}
	return res.x, res.result(f0, opt.Rule, start), nil
}

// result is the Result of a minimisation that started at f0 at the time start; NegELBO is the
// best value found.
func (m *minimized) result(f0 float64, rule Rule, start time.Time) *Result {
	var change *float64
	if !math.IsNaN(m.change) {
		change = &m.change
	}
	return &Result{NegELBO: m.f, Start: f0, Converged: m.converged, Rule: rule.String(), Change: change, StoppedBy: m.stoppedBy,
		Iterations: m.iters, Evaluations: m.evals, Restarts: m.restarts, NonFinite: m.nonFinite, Estimates: m.estimates, Seconds: time.Since(start).Seconds(), Curve: m.curve,
		Stage: "L-BFGS"}
}
