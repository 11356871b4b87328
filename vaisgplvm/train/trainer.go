// Package train fits a model.Model with Adam: full batch or mini-batches, seeded and
// deterministic (iteration i draws its batch and noise from PCG(seed, i), so a resumed run
// continues exactly), with a -ELBO curve, checkpoints and a progress bar. Package eval evaluates
// what it fitted (the bound, reconstructions, weights, ESS, missing entries, the exact conditional).
package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	backends "github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
	optimizers "github.com/gomlx/gomlx/ml/train/optimizer"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// Trainer owns the parameters (a GoMLX context) of one model and its optimiser state. Between
// steps it reads the model's data and configuration on another goroutine (see NoPrefetch): do not
// change them while the trainer is in use (build a new model and trainer instead).
type Trainer struct {
	Model   *model.Model
	Backend backends.Backend
	Ctx     *mlmodel.Scope
	Iter    int       // iterations done
	Curve   []float64 // -ELBO per data point after each iteration (the batch estimate)
	Seconds float64   // wall seconds spent in Step
	// HostSeconds is the part of Seconds that Step spends on its inputs before the graph runs:
	// drawing the batch and noise and building the input tensors, or, when the previous Step
	// prepared them in the background (the default, see NoPrefetch), waiting for that to finish.
	HostSeconds float64
	// NoPrefetch makes Step build its inputs itself, after the previous step, instead of having the
	// previous Step prepare them on another goroutine while its graph runs. The inputs, and so
	// the results, are the same either way; set it to time the host's part of a step alone.
	NoPrefetch bool
	// DataTag names the training data (e.g. "oilflow" or "wine+standardized"); saved in checkpoints
	// and checked by Load when both sides set it.
	DataTag string
	// ReconChains, when > 0, replaces eval.ReconChains, the default number of reconstruction chains
	// in eval.Evaluate.
	ReconChains int
	// NoRunawayCheck turns off CheckRunaway in Step: for a fit that starts at an optimum (the
	// converge package's continuation from a converged start), which has no progress to give
	// back, so that its noise reads as a runaway. Non-finite values still stop a step.
	NoRunawayCheck bool

	step   *mlmodel.Exec
	stepFn func(ctx *mlmodel.Scope, in []*Node) []*Node // the graph of step (BoundGraph)
	graphs map[*Graph]bool                              // distinct training graphs built so far
	last   *Graph                                       // the graph of the last step
	cache  *execCache                                   // Evaluate's, Weights' and ChainPath's graphs (shared by copies of the trainer)
	ahead  *pending                                     // the next iteration's inputs, being prepared (nil with NoPrefetch)
}

// New prepares a trainer for m on backend b; graphs are compiled on the first Step. Errors: a nil
// model or backend, a dtype the backend's variables cannot take, or a training graph GoMLX cannot
// set up.
func New(m *model.Model, b backends.Backend) (*Trainer, error) {
	switch {
	case m == nil:
		return nil, fmt.Errorf("train: New: no model: pass model.New's result")
	case b == nil:
		return nil, fmt.Errorf("train: New: no backend: pass backend.New(\"auto\")'s result")
	}
	ctx := mlmodel.NewStore().RootScope()
	if err := vars.SetDType(ctx, m.DType()); err != nil {
		return nil, fmt.Errorf("train: New: %w", err)
	}
	t := &Trainer{Model: m, Backend: b, Ctx: ctx}
	beta2 := m.Cfg.AdamBeta2
	if beta2 == 0 {
		beta2 = model.DefaultAdamBeta2
	}
	opt := optimizers.Adam().LearningRate(m.Cfg.LR).Betas(0.9, beta2).Done()
	t.stepFn = BoundGraph(m, func(ctx *mlmodel.Scope, x, mask, idx, eps0, chain *Node) []*Node {
		res, c := m.Bound(ctx, x, mask, idx, eps0, chain)
		loss := DivScalar(Neg(res.ELBO), float64(m.N))
		switch {
		case m.Cfg.NatGrad > 0 || m.Cfg.ClipGrad > 0:
			var clip *gradientClip
			if m.Cfg.ClipGrad > 0 {
				clip = newGradientClip(ctx) // before the gradients: its state is not among them
			}
			var grads []*Node
			if m.Cfg.NatGrad > 0 {
				grads = naturalStepQU(ctx, loss, m.N, m.Cfg.NatGrad) // Adam's gradients: all but q(u)'s
			} else {
				grads = ctx.BuildTrainableVariablesGradientsGraph(loss)
			}
			if clip != nil {
				grads = clip.apply(grads, m.Cfg.ClipGrad)
			}
			opt.(gradientUpdater).UpdateGraphWithGradients(ctx, grads, loss.DType())
		default:
			opt.UpdateGraph(ctx, x.Graph(), loss)
		}
		if c != nil {
			m.AdaptStep(ctx, c, idx)
		}
		return []*Node{loss, nonFinite(ctx, x.Graph())}
	})
	step, err := mlmodel.NewExec(b, ctx.Store(), t.stepFn)
	if err != nil {
		return nil, fmt.Errorf("train: New: %w", err)
	}
	t.step = step
	return t, nil
}

// Ready returns an error when t cannot train or evaluate: nil, or not made by New. Functions that
// take a *Trainer call it first.
func (t *Trainer) Ready() error { return t.check() }

// check returns an error when t cannot work: nil, or not made by New (a zero Trainer).
func (t *Trainer) check() error {
	switch {
	case t == nil:
		return fmt.Errorf("train: nil Trainer: make one with train.New(model, backend)")
	case t.Model == nil:
		return fmt.Errorf("train: the Trainer has no model: make it with train.New(model, backend)")
	case t.Backend == nil || t.step == nil:
		return fmt.Errorf("train: the Trainer has no backend: make it with train.New(model, backend)")
	}
	return nil
}

// gradientUpdater is the part of GoMLX's Adam that applies given gradients (used to clip them).
type gradientUpdater interface {
	UpdateGraphWithGradients(ctx *mlmodel.Scope, grads []*Node, lossDType dtypes.DType)
}

// Step runs one Adam iteration and returns the batch estimate of -ELBO per data point. A
// non-finite value, a bound above model.BoundCeiling, or a curve that gives back a quarter of its
// progress (CheckRunaway) stops with an error naming the iteration (the parameters are then
// unusable; the last checkpoint is untouched).
func (t *Trainer) Step() (float64, error) {
	if err := t.check(); err != nil {
		return math.NaN(), err
	}
	start := time.Now()
	args, err := t.stepInputs(t.Iter)
	if err != nil {
		return math.NaN(), fmt.Errorf("iteration %d: %w", t.Iter+1, err)
	}
	t.HostSeconds += time.Since(start).Seconds()
	out, g, err := t.step.ExecWithGraph(args...)
	t.Seconds += time.Since(start).Seconds()
	if g != nil {
		if t.graphs == nil {
			t.graphs = map[*Graph]bool{}
		}
		t.graphs[g] = true
		t.last = g
	}
	if err != nil {
		return math.NaN(), fmt.Errorf("iteration %d: %w", t.Iter+1, err)
	}
	v := vars.Scalar(out[0])
	if err := checkBound(t.Iter+1, v, t.Model.BoundCeiling(), t.Model.Cfg.DType); err != nil {
		return v, err
	}
	if bad := vars.Scalar(out[1]); bad != 0 {
		advice, fields := fmt.Sprintf("lower the learning rate LR (now %g)", t.Model.Cfg.LR), []string{"LR"}
		if t.Iter == 0 && math.Abs(v) > 1e10 {
			advice, fields = "the bound was already extreme before the first update, which no learning rate changes: "+
				"the data's scale is extreme; standardise it (Standardize; infer takes new points in the training data's units)", []string{"Standardize"}
		}
		return v, diverged(t.Iter+1, option.Failf(fields, "diverged at iteration %d: the update left %s with non-finite values (the bound before it "+
			"was %g per point); %s", t.Iter+1, t.nonFiniteNames(), v, advice))
	}
	t.Iter++
	t.Curve = append(t.Curve, v)
	if t.NoRunawayCheck {
		return v, nil
	}
	if err := CheckRunaway(t.Curve, t.Model.Cfg.LR, t.Model.Method.Annealed() && !t.Model.Cfg.StopGrad); err != nil {
		return v, err
	}
	return v, nil
}

// nonFinite returns a scalar that is 0 when every variable of ctx (parameters, optimiser and
// step-size state) holds finite values after the step's updates, and NaN (or Inf) otherwise: the
// sum over variables of sum(v * 0), since 0 * Inf and 0 * NaN are NaN.
func nonFinite(ctx *mlmodel.Scope, g *Graph) *Node {
	var total *Node
	for v := range ctx.Store().IterVariables() {
		val := v.ValueGraph(g)
		if !val.DType().IsFloat() {
			continue
		}
		s := ConvertDType(ReduceAllSum(MulScalar(val, 0)), dtypes.Float64)
		if total == nil {
			total = s
		} else {
			total = Add(total, s)
		}
	}
	if total == nil {
		return Scalar(g, dtypes.Float64, 0)
	}
	return total
}

// nonFiniteNames names the variables holding a non-finite value (at most 5), for error messages.
func (t *Trainer) nonFiniteNames() string {
	var names []string
	for v := range t.Ctx.Store().IterVariables() {
		val, err := v.Value()
		if err != nil || val == nil || !val.DType().IsFloat() {
			continue
		}
		if !vars.Finite(vars.Flat64(val)...) {
			names = append(names, v.Path())
		}
	}
	if len(names) > 5 {
		names = append(names[:5], fmt.Sprintf("%d more", len(names)-5))
	}
	if len(names) == 0 {
		return "some variables"
	}
	return strings.Join(names, ", ")
}

// ErrNotFiniteAtStart is wrapped by the error of a run whose bound is not finite at its initial
// parameters, before any update: the data's scale or an initial setting (Config.Scale0, Noise0,
// Eta) is extreme. A command adds the flags that change them.
var ErrNotFiniteAtStart = errors.New("the bound is not finite at the initial parameters, before any update")

// checkBound returns an error naming iteration iter when the batch -ELBO per point v is not finite
// or when the bound -v exceeds ceiling (see model.Model.BoundCeiling); dtype is the model's.
func checkBound(iter int, v, ceiling float64, dtype string) error {
	if (math.IsNaN(v) || math.IsInf(v, 0)) && iter == 1 {
		return fmt.Errorf("%w (-ELBO per point %g): the data's scale is extreme (standardise it) or an initial setting is "+
			"(the q0 scale, the initial noise variance, the step size eta)", ErrNotFiniteAtStart, v)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return diverged(iter, fmt.Errorf("diverged at iteration %d: -ELBO per point is %g (a non-finite bound: a Kuu that is "+
			"not positive definite after jitter, or a too large step size eta or learning rate)", iter, v))
	}
	if -v > ceiling {
		fix, fields := "try DType float64", []string{"DType"}
		if dtype != "float32" {
			fix, fields = "standardise the data (Standardize) or lower the learning rate (LR)", []string{"Standardize", "LR"}
		}
		return diverged(iter, option.Failf(fields, "diverged at iteration %d: -ELBO per point is %g, below -%.4g, the lowest any correctly "+
			"computed bound of this model can reach (noise variance >= %g); a numerical failure that the optimiser "+
			"exploits (%s), not a fit", iter, v, ceiling, gp.NoiseVarianceFloor, fix))
	}
	return nil
}

// ErrInterrupted is returned (wrapped, with the iteration) by Run when its context is done.
var ErrInterrupted = errors.New("interrupted")

// Event is what Run reports to its observer after every training step.
type Event struct {
	Method  string  // the bound's name
	Iter    int     // iterations done (Trainer.Iter after the step)
	Total   int     // the iteration Run trains to
	NegELBO float64 // the step's -ELBO per point (its batch's estimate), nats
	Seconds float64 // mean wall time per iteration so far (Trainer.SecondsPerIter)
}

// RunOptions are Run's optional settings; the zero value trains without observing.
type RunOptions struct {
	// Observe, when not nil, is called after every step with its Event (a progress bar, a live
	// plot: the trainer draws nothing itself).
	Observe func(Event)
	// Every > 0 calls Hook after every Every iterations (checkpoints, snapshots); a Hook error
	// stops the run.
	Every int
	Hook  func(*Trainer) error
}

// Run trains until Iter reaches iters (counting the iterations already done), or until ctx is
// done: then it returns an error wrapping ErrInterrupted after the step in progress, and the
// parameters are those after a complete step (a checkpoint of them resumes exactly). Errors: a
// Trainer not made by New, a step's divergence (Diverged), a hook's error.
func (t *Trainer) Run(ctx context.Context, iters int, o RunOptions) error {
	if err := t.check(); err != nil {
		return err
	}
	for t.Iter < iters {
		v, err := t.Step()
		if err != nil {
			return err
		}
		if o.Observe != nil {
			o.Observe(Event{Method: t.Model.Cfg.Method, Iter: t.Iter, Total: iters, NegELBO: v, Seconds: t.SecondsPerIter()})
		}
		if o.Every > 0 && o.Hook != nil && t.Iter%o.Every == 0 {
			if err := o.Hook(t); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w at iteration %d of %d", ErrInterrupted, t.Iter, iters)
		}
	}
	return nil
}

// CompiledGraphs is the number of distinct training-step graphs built so far: 1 after any number of
// steps on fully observed data (every step feeds inputs of the same shapes, so GoMLX compiles once
// and reuses the graph); with missing entries, one per distinct number of partly observed rows in a
// batch (model.ArrangeBatch: the mask input covers those rows only), each compiled once.
func (t *Trainer) CompiledGraphs() int { return len(t.graphs) }

// GraphOps counts the operations of the training-step graph (the last one built; 0 before the first
// Step): all nodes, and the matrix products (Dot and DotGeneral nodes) among them, which dominate a
// step's time on the pure-Go backend.
func (t *Trainer) GraphOps() (nodes, matmuls int) {
	if t == nil || t.last == nil {
		return 0, 0
	}
	for _, n := range t.last.Nodes() {
		nodes++
		if n.Type() == NodeTypeDotGeneral {
			matmuls++
		}
	}
	return nodes, matmuls
}

// LastGraph returns the training-step graph of the last Step (nil before the first), for
// inspecting its operations and shapes.
func (t *Trainer) LastGraph() *Graph { return t.last }

// SecondsPerIter is the mean wall time of Step so far (the first one includes compilation).
func (t *Trainer) SecondsPerIter() float64 {
	if t == nil || t.Iter == 0 {
		return 0
	}
	return t.Seconds / float64(t.Iter)
}
