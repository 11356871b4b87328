package converge

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Options control Fit.
type Options struct {
	Rule       Rule
	MaxSeconds float64 // stop (not converged) after this many seconds; 0: no limit
	MaxIters   int     // stop (not converged) after this many L-BFGS iterations; 0: no limit
	// Plain runs Fit's L-BFGS in the model's own coordinates, without the preconditioner (the
	// curvature of each group of parameters scaled to one, estimated every 500 iterations; see
	// Fit): for comparison.
	Plain bool
	// Variables, for Minimize: the variables whose values x0 flattens (vars.Flatten's order).
	// When given (and Plain is not set), Minimize preconditions its L-BFGS as Fit does, one group
	// per entry of a scalar or vector variable and per trailing index of a variable of rank 2 or
	// more (e.g. one latent dimension over all points), the probes seeded by Seed. Fit ignores
	// both: it knows its variables and takes the model's seed.
	Variables []*mlmodel.Variable
	Seed      uint64
	// Observe, when not nil, sees every L-BFGS iteration.
	Observe func(Progress)
}

// Progress is one L-BFGS iteration of Fit (or Minimize), or the end of one window of Continue's
// Adam iterations.
type Progress struct {
	Stage   string // "L-BFGS" or "Adam"
	Iter    int
	NegELBO float64 // minus the bound per point (nats): L-BFGS's collapsed bound, or Adam's window mean
	Change  float64 // its fall over the rule's window (nats per point); NaN before Window iterations
	Seconds float64 // since the stage started
	// Halvings is the number of halvings of Adam's step size so far (0 for L-BFGS).
	Halvings int
}

// Result is the end of Fit.
type Result struct {
	NegELBO     float64  `json:"neg_elbo_per_point"` // minus the collapsed bound per point at the end (nats)
	Start       float64  `json:"start_neg_elbo_per_point"`
	Converged   bool     `json:"converged"`
	Rule        string   `json:"rule"`
	Change      *float64 `json:"final_change,omitempty"` // nats per point over the rule's window at the end (nil before Window iterations)
	StoppedBy   string   `json:"stopped_by"`             // "converged", "max seconds", "max iterations", "interrupted", or the optimiser's reason
	Iterations  int      `json:"iterations"`
	Evaluations int      `json:"evaluations"`            // bound and gradient evaluations (line search included)
	Restarts    int      `json:"restarts"`               // L-BFGS restarts with cleared memory after a failed line search
	NonFinite   int      `json:"non_finite_evaluations"` // trial points where the bound was not finite (rejected)
	// Estimates counts the preconditioner's estimates of the curvature (each 20 evaluations more,
	// counted in Evaluations); 0 for plain L-BFGS.
	Estimates int       `json:"curvature_estimates,omitempty"`
	Seconds   float64   `json:"seconds"`
	Curve     []float64 `json:"-"` // minus the bound per point after each iteration
	Stage     string    `json:"-"` // the optimiser: "L-BFGS" or "Adam"
}

// Interrupted is Result.StoppedBy of a fit stopped by its context's end.
const Interrupted = "interrupted"

// Interrupted returns nil unless the fit was stopped by its context's end (StoppedBy Interrupted);
// then an error wrapping train.ErrInterrupted that says where it stopped: the stage, its
// iterations, and the objective per point under the name objective ("-ELBO", or the standard
// GPLVM's "MAP objective"). The fit's parameters are then the best so far.
func (r *Result) Interrupted(objective string) error {
	if r.StoppedBy != Interrupted {
		return nil
	}
	return fmt.Errorf("%w after %d %s iterations of the converging fit (%s per point %.6g, not converged)",
		train.ErrInterrupted, r.Iterations, r.Stage, objective, r.NegELBO)
}

// Supported returns nil when Fit can fit m, else an error saying why: data with missing entries,
// or a kernel without closed-form psi statistics.
func Supported(m *model.Model) error {
	if m.HasMask() {
		return fmt.Errorf("converge: the collapsed bound needs fully observed data; this data has missing entries")
	}
	if !kernels.HasPsiStatistics(m.Kernel) {
		return fmt.Errorf("converge: the %s kernel has no closed-form psi statistics here (only se has): the collapsed bound cannot be computed", m.Kernel.Name())
	}
	return nil
}

// fitted reports whether Fit optimises the variable: q0's mean and scale, Z, the mean function,
// the kernel's and the likelihood's parameters; not q(u) (it is at its optimum) nor anything of
// the bounds' (step sizes) or optimisers' state.
func fitted(v *mlmodel.Variable) bool {
	scope, name := strings.TrimPrefix(v.Scope(), "/"), v.Name()
	switch {
	case scope == "latent", scope == "kernel", scope == "likelihood":
		return true
	case scope == "inducing":
		return name == "z" || name == "mean_bias"
	}
	return false
}

// Fit maximises the collapsed mean-field bound (Collapsed) of tr's model over q0, Z, the kernel,
// the noise variance and the mean function, by L-BFGS from the trainer's current values, until
// opt.Rule holds (or a limit, or ctx's end after the iteration in progress, stops it:
// Result.Converged false, StoppedBy says which), then leaves the best parameters in tr's variables
// with q(u) at its optimum for them. The trainer's Adam iterations and curve are not touched.
// L-BFGS works in coordinates scaled so that
// each group of parameters (the latent means of one dimension, one entry of the q0 scale factors
// over all points, one column of Z, each hyperparameter) has unit curvature, estimated from 20
// gradient differences every 500 iterations (preconditioner); opt.Plain turns that off. Errors:
// Supported's, and a bound that is not finite at the start.
func Fit(ctx context.Context, tr *train.Trainer, opt Options) (*Result, error) {
	if err := tr.Ready(); err != nil {
		return nil, err
	}
	m := tr.Model
	if err := Supported(m); err != nil {
		return nil, err
	}
	start := time.Now()
	p, err := newProblem(tr)
	if err != nil {
		return nil, err
	}
	x0, f0 := p.x0, p.f0
	obj := p.eval
	observe := func(iter int, f, change float64) {
		if opt.Observe != nil {
			opt.Observe(Progress{Stage: "L-BFGS", Iter: iter, NegELBO: f, Change: change, Seconds: time.Since(start).Seconds()})
		}
	}
	var pc *preconditioner
	if !opt.Plain {
		pc = newPreconditioner(p.selected, tr.Model.Cfg.Seed)
	}
	res := lbfgs(obj, x0, opt.Rule, opt.MaxSeconds, opt.MaxIters, ctx.Done(), observe, pc)
	if res.err != nil && len(res.curve) == 0 {
		return nil, fmt.Errorf("converge: %w", res.err)
	}
	if err := vars.Unflatten(p.selected, res.x, m.DType()); err != nil {
		return nil, fmt.Errorf("converge: %w", err)
	}
	out, err := p.exec.Exec(p.y)
	if err != nil {
		return nil, fmt.Errorf("converge: %w", err)
	}
	if err := setOptimalQU(tr.Ctx, m, out[1], out[2], out[3]); err != nil {
		return nil, err
	}
	r := res.result(f0, opt.Rule, start)
	r.NegELBO = scalar(out[0])
	return r, nil
}

// problem is the collapsed bound of a trainer's model as a function of the fitted variables' values,
// flattened (vars.Flatten's order): the objective L-BFGS minimises, minus the bound per point.
type problem struct {
	m        *model.Model
	exec     *mlmodel.Exec
	y        *tensors.Tensor
	selected []*mlmodel.Variable
	x0       []float64 // the variables' values at the start
	f0       float64   // the objective there
}

// newProblem builds the graph of the bound and its gradient with respect to the fitted variables
// (fitted) of tr. Errors: a graph that does not build, a bound not finite at the start.
func newProblem(tr *train.Trainer) (*problem, error) {
	m := tr.Model
	p := &problem{m: m}
	exec, err := mlmodel.NewExec(tr.Backend, tr.Ctx.Store(), func(ctx *mlmodel.Scope, y *Node) []*Node {
		t, err := Collapsed(ctx, m, y)
		if err != nil {
			panic(err) // Supported was checked
		}
		loss := DivScalar(Neg(t.ELBO), float64(m.N))
		p.selected = p.selected[:0]
		var nodes []*Node
		for v := range ctx.Store().IterVariables() {
			if fitted(v) {
				p.selected, nodes = append(p.selected, v), append(nodes, v.ValueGraph(y.Graph()))
			}
		}
		return append([]*Node{loss, t.LBInv, t.C, t.L}, Gradient(loss, nodes...)...)
	})
	if err != nil {
		return nil, fmt.Errorf("converge: %w", err)
	}
	p.exec = exec
	if p.y, err = vars.Matrix(m.X, m.DType()); err != nil {
		return nil, err
	}
	out, err := exec.Exec(p.y) // builds the graph, so selected is known
	if err != nil {
		return nil, fmt.Errorf("converge: %w", err)
	}
	if p.f0 = scalar(out[0]); math.IsNaN(p.f0) || math.IsInf(p.f0, 0) {
		return nil, fmt.Errorf("converge: the collapsed bound is %g at the start", p.f0)
	}
	if p.x0, err = vars.Flatten(p.selected); err != nil {
		return nil, fmt.Errorf("converge: %w", err)
	}
	return p, nil
}

// eval sets the variables to x and returns the objective there, its gradient written into grad.
func (p *problem) eval(x, grad []float64) (float64, error) {
	if err := vars.Unflatten(p.selected, x, p.m.DType()); err != nil {
		return 0, fmt.Errorf("converge: %w", err)
	}
	out, err := p.exec.Exec(p.y)
	if err != nil {
		return 0, err
	}
	off := 0
	for _, g := range out[4:] {
		off += copy(grad[off:], vars.Flat64(g))
	}
	return scalar(out[0]), nil
}

// scalar returns a scalar tensor's value.
func scalar(t *tensors.Tensor) float64 { return vars.Flat64(t)[0] }

// setOptimalQU writes the optimal q(u) for the current parameters into the variables q_mu [M, D]
// and q_sqrt [D or 1, M, M]: whitened, q(v_d) = N(L_B^-T c_d, B^-1); unwhitened, u = L v.
func setOptimalQU(ctx *mlmodel.Scope, m *model.Model, lbInvT, cT, lT *tensors.Tensor) error {
	mm, d := m.Inducing.M, m.D
	lbInv := mat.NewDense(mm, mm, vars.Flat64(lbInvT))
	c := mat.NewDense(mm, d, vars.Flat64(cT))
	var mean mat.Dense
	mean.Mul(lbInv.T(), c) // [M, D]
	var bInv mat.SymDense
	bInv.SymOuterK(1, lbInv.T()) // L_B^-T L_B^-1 = B^-1
	var ch mat.Cholesky
	if !ch.Factorize(&bInv) {
		return fmt.Errorf("converge: the optimal q(u)'s covariance is not positive definite")
	}
	var sqrt mat.TriDense
	ch.LTo(&sqrt)
	sq := mat.DenseCopyOf(&sqrt)
	if !m.Inducing.Whitened {
		l := mat.NewDense(mm, mm, vars.Flat64(lT))
		var mu, su mat.Dense
		mu.Mul(l, &mean)
		su.Mul(l, sq)
		mean, sq = mu, &su
	}
	scope := ctx.At("inducing")
	qMu := scope.GetVariable("q_mu")
	qSqrt := scope.GetVariable("q_sqrt")
	if qMu == nil || qSqrt == nil {
		return fmt.Errorf("converge: the model has no q(u) variables")
	}
	nS := qSqrt.Shape().Dim(0)
	flatS := make([]float64, 0, nS*mm*mm)
	for range nS {
		flatS = append(flatS, sq.RawMatrix().Data...)
	}
	if err := qMu.SetValue(vars.Convert(tensors.FromFlatDataAndDimensions(mean.RawMatrix().Data, mm, d), m.DType())); err != nil {
		return err
	}
	return qSqrt.SetValue(vars.Convert(tensors.FromFlatDataAndDimensions(flatS, nS, mm, mm), m.DType()))
}
