package converge

import (
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/optimize"
)

// Rule says when a fit has converged: the bound per point has risen by at most Tol nats over the
// last Window optimiser iterations.
type Rule struct {
	Window int     // iterations compared; default 50
	Tol    float64 // nats per point over Window; default 1e-4
}

// withDefaults fills Rule's zero fields.
func (r Rule) withDefaults() Rule {
	if r.Window == 0 {
		r.Window = 50
	}
	if r.Tol == 0 {
		r.Tol = 1e-4
	}
	return r
}

// String states the rule, as metrics.json records it.
func (r Rule) String() string {
	r = r.withDefaults()
	return fmt.Sprintf("the bound per point rose by at most %g nats over the last %d L-BFGS iterations", r.Tol, r.Window)
}

// Objective is a function to minimise and its gradient: it returns f(x) and writes the gradient
// into grad (len(x)); a non-finite f rejects x (the line search then steps back).
type Objective func(x, grad []float64) (float64, error)

// minimized is the end of a minimisation.
type minimized struct {
	x          []float64
	f          float64
	converged  bool
	change     float64 // f[k - Window] - f[k] at the end (nats per point; NaN before Window iterations)
	iters      int
	evals      int
	status     string
	curve      []float64 // f after each iteration
	err        error     // an error of the objective, which stopped the run
	stoppedBy  string    // "converged", "max seconds", "max iterations", "interrupted", the optimiser's status
	restarts   int       // restarts after a failed line search
	restartAt  []int     // the iteration (len(curve)) at each restart
	nonFinite  int       // evaluations at points where f was not finite
	sinceMajor int       // evaluations since the last iteration ended
	estimates  int       // the preconditioner's estimates of the curvature
}

// lbfgs minimises obj from x0 with gonum's L-BFGS (Moré-Thuente line search) until rule holds, or
// maxSeconds (0: no limit) or maxIters (0: no limit) pass, or stop is closed. observe, when not nil,
// sees every iteration: its number, f and the change over the rule's window (NaN before). With pc
// not nil L-BFGS works in coordinates scaled by pc's estimate of the curvature, estimated afresh
// (and L-BFGS restarted) every pc.every iterations.
func lbfgs(obj Objective, x0 []float64, rule Rule, maxSeconds float64, maxIters int, stop <-chan struct{},
	observe func(iter int, f, change float64), pc *preconditioner) *minimized {
	rule = rule.withDefaults()
	res := &minimized{change: math.NaN()}
	var last struct {
		x    []float64
		f    float64
		grad []float64
	}
	eval := func(x []float64) (float64, []float64) {
		if last.x != nil && equal(last.x, x) {
			return last.f, last.grad
		}
		grad := make([]float64, len(x))
		f, err := obj(x, grad)
		res.evals++
		if err != nil && res.err == nil {
			res.err = err
		}
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			res.nonFinite++
			f = math.Inf(1)
			for i := range grad {
				grad[i] = 0
			}
		}
		last.x, last.f, last.grad = append(last.x[:0], x...), f, grad
		return f, grad
	}
	conv := &windowConverger{rule: rule, res: res, observe: observe, stop: stop, maxIters: maxIters}
	if maxSeconds > 0 {
		conv.deadline = time.Now().Add(time.Duration(maxSeconds * float64(time.Second)))
	}
	// L-BFGS works on y, x = d ⊙ y (d nil: y = x).
	var d []float64
	toX := func(y []float64) []float64 {
		if d == nil {
			return y
		}
		x := make([]float64, len(y))
		for i := range y {
			x[i] = d[i] * y[i]
		}
		return x
	}
	p := optimize.Problem{
		Func: func(y []float64) float64 { f, _ := eval(toX(y)); return f },
		Grad: func(grad, y []float64) {
			_, g := eval(toX(y))
			copy(grad, g)
			for i := range d {
				grad[i] *= d[i]
			}
		},
	}
	// A failed line search (the curvature pairs of a long run no longer describe the function, or a
	// trial point was not finite) restarts L-BFGS from the best point with its memory cleared; a
	// restart that makes no progress ends the run. The preconditioner's rounds restart it too.
	x, rescale := x0, false
	if pc != nil {
		conv.scaleBelow = pc.below // plain L-BFGS until the rise falls below it
	}
	for {
		before := len(res.curve)
		if rescale {
			_, g0 := eval(x)
			d = pc.scale(eval, x, g0)
			res.estimates++
			conv.roundEnd, rescale = len(res.curve)+pc.every, false
		}
		y := x
		if d != nil {
			y = make([]float64, len(x))
			for i := range x {
				y[i] = x[i] / d[i]
			}
		}
		method := &optimize.LBFGS{Linesearcher: &cappedSearch{Linesearcher: &optimize.MoreThuente{}}, Store: memory}
		out, err := optimize.Minimize(p, y, &optimize.Settings{Converger: conv, GradientThreshold: 1e-300}, method)
		res.iters += out.MajorIterations
		if out.X != nil && !math.IsInf(out.F, 1) && (res.x == nil || out.F <= res.f) {
			res.x, res.f = slices.Clone(toX(out.X)), out.F
		}
		res.status = out.Status.String()
		if conv.why == roundEnd {
			conv.why, rescale, x = "", true, res.x
			continue
		}
		if out.Status == optimize.Failure && conv.why == "" && len(res.curve) > before && res.restarts < maxRestarts {
			res.restarts++
			res.restartAt = append(res.restartAt, len(res.curve))
			x = res.x
			continue
		}
		switch {
		case conv.why != "":
			res.stoppedBy = conv.why
		case err != nil:
			res.stoppedBy = fmt.Sprintf("the optimiser stopped: %v", err)
		default:
			res.stoppedBy = fmt.Sprintf("the optimiser stopped: %s", out.Status)
		}
		res.converged = conv.why == "converged" || out.Status == optimize.GradientThreshold
		if n := res.failedIn(rule.Window); res.converged && n >= rule.Window/2 {
			// The window was flat because no step could be verified, not because the gradient
			// vanished: the bound's rounding noise hides what descent is left.
			res.converged = false
			res.stoppedBy = fmt.Sprintf("stalled: the line search failed on %d of the last %d iterations (the bound's rounding noise hides the descent left)", n, rule.Window)
		}
		if res.x == nil {
			res.x, res.f = x0, math.Inf(1)
		}
		return res
	}
}

// memory is the number of curvature pairs L-BFGS keeps (gonum's default is 15).
const memory = 15 // gonum's default; 100 gained nothing per second on oil flow (400 iterations each)

// failedIn counts the restarts (failed line searches) among the last w iterations.
func (m *minimized) failedIn(w int) int {
	n := 0
	for _, at := range m.restartAt {
		if at > len(m.curve)-w {
			n++
		}
	}
	return n
}

// maxLineEvals bounds the evaluations of one line search.
const maxLineEvals = 40

// cappedSearch is a line search that fails after maxLineEvals trial steps: on a function with
// rounding noise gonum's Moré-Thuente search can otherwise go on without end.
type cappedSearch struct {
	optimize.Linesearcher
	n int
}

func (c *cappedSearch) Init(value, derivative, step float64) optimize.Operation {
	c.n = 0
	return c.Linesearcher.Init(value, derivative, step)
}

func (c *cappedSearch) Iterate(value, derivative float64) (optimize.Operation, float64, error) {
	if c.n++; c.n > maxLineEvals {
		return 0, 0, fmt.Errorf("no step found in %d trial steps", maxLineEvals)
	}
	return c.Linesearcher.Iterate(value, derivative)
}

// maxRestarts bounds lbfgs's restarts after failed line searches.
const maxRestarts = 1000

// windowConverger implements optimize.Converger: Rule, a deadline, an iteration cap, a stop channel.
type windowConverger struct {
	rule     Rule
	res      *minimized
	observe  func(iter int, f, change float64)
	stop     <-chan struct{}
	deadline time.Time
	maxIters int
	roundEnd int // with a preconditioner: the iteration at which its round ends (0: none)
	// scaleBelow, when > 0, ends the first (plain) round at the first window whose rise is at
	// most this.
	scaleBelow float64
	why        string
}

// roundEnd is windowConverger.why at the end of a preconditioner's round.
const roundEnd = "end of round"

func (c *windowConverger) Init(int) {}

// Converged records the iteration's f and says whether to stop.
func (c *windowConverger) Converged(loc *optimize.Location) optimize.Status {
	r := c.res
	r.curve = append(r.curve, loc.F)
	k := len(r.curve) // iterations done; curve[i] is f after iteration i+1
	if k > c.rule.Window {
		r.change = r.curve[k-1-c.rule.Window] - r.curve[k-1]
	}
	if c.observe != nil {
		c.observe(k, loc.F, r.change)
	}
	switch {
	case k > c.rule.Window && r.change <= c.rule.Tol:
		c.why = "converged"
		return optimize.FunctionConvergence
	case c.stop != nil && closed(c.stop):
		c.why = Interrupted
	case !c.deadline.IsZero() && time.Now().After(c.deadline):
		c.why = "max seconds"
	case c.maxIters > 0 && k >= c.maxIters:
		c.why = "max iterations"
	case c.roundEnd > 0 && k >= c.roundEnd:
		c.why = roundEnd
	case c.scaleBelow > 0 && k > c.rule.Window && r.change <= c.scaleBelow:
		c.why, c.scaleBelow = roundEnd, 0
	default:
		return optimize.NotTerminated
	}
	return optimize.IterationLimit
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// equal reports whether a and b hold the same numbers.
func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
