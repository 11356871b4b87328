package converge

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/optimizer"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// AdamRule says when Continue has converged on a bound that is only estimated (IWVI, VAIS, ...):
// the curve is cut into windows of Window iterations; whenever a window's mean -ELBO per point is
// not below the previous window's by more than two standard errors of the difference
// (metrics.WindowDrop), Adam's step size is halved; at such a plateau after Halvings halvings the
// fit has converged.
type AdamRule struct {
	Window   int // default 200
	Halvings int // default 4 (the step size ends at 1/16 of the first)
}

// withDefaults fills AdamRule's zero fields.
func (r AdamRule) withDefaults() AdamRule {
	if r.Window == 0 {
		r.Window = 200
	}
	if r.Halvings == 0 {
		r.Halvings = 4
	}
	return r
}

// String states the rule, as metrics.json records it.
func (r AdamRule) String() string {
	r = r.withDefaults()
	return fmt.Sprintf("Adam, its step size halved whenever the mean -ELBO per point over %d iterations fell by less than 2 standard errors from the %d before; converged at such a plateau after %d halvings",
		r.Window, r.Window, r.Halvings)
}

// EpochWindow returns the window of a rule on epoch means for n points in mini-batches of batch
// (0: full batch): the smallest whole number of epochs (ceil(n / batch) iterations each) that is
// at least 200 iterations, so that every window mean weighs every point alike.
func EpochWindow(n, batch int) int {
	if batch <= 0 || batch >= n {
		return 200
	}
	epoch := (n + batch - 1) / batch
	return epoch * ((200 + epoch - 1) / epoch)
}

// AdamOptions control Continue.
type AdamOptions struct {
	Rule AdamRule
	// LR is Adam's first step size; 0: a tenth of the model's LR (a fit that starts at an
	// optimum is thrown off it by the step sizes that suit a fit from scratch).
	LR         float64
	MaxIters   int            // stop (not converged) after this many iterations; 0: 50000
	MaxSeconds float64        // stop (not converged) after this many seconds; 0: no limit
	Observe    func(Progress) // sees every window's end (Change: the window's fall)
}

// Following returns a as the Adam stage that follows an L-BFGS stage run with opt for spent
// seconds (Train's second stage, or a continuation from a converged fit's checkpoint, spent 0):
// Observe is opt.Observe when a has none, and MaxSeconds what opt.MaxSeconds leaves of its cap
// (a's own when opt has none).
func (a AdamOptions) Following(opt Options, spent float64) AdamOptions {
	if a.Observe == nil {
		a.Observe = opt.Observe
	}
	if opt.MaxSeconds > 0 {
		a.MaxSeconds = max(opt.MaxSeconds-spent, 1e-9)
	}
	return a
}

// Continue trains tr with its own bound (Adam from opt.LR) until opt.Rule holds, for bounds without
// a closed form: the model's Monte Carlo estimate is the only measure of progress, so convergence
// is judged on window means. It returns the result with NegELBO the last window's mean; the
// trainer's Iter and Curve grow as with train.Trainer.Run. The trainer's runaway check is off
// while it runs (train.Trainer.NoRunawayCheck: a start at an optimum has no progress to give
// back). ctx's end stops it after the iteration in progress (Result.StoppedBy "interrupted").
// Errors: the trainer's (a non-finite step ends it, with the iteration).
func Continue(ctx context.Context, tr *train.Trainer, opt AdamOptions) (*Result, error) {
	if err := tr.Ready(); err != nil {
		return nil, err
	}
	rule := opt.Rule.withDefaults()
	maxIters := opt.MaxIters
	if maxIters == 0 {
		maxIters = 50000
	}
	start, first := time.Now(), tr.Iter
	res := &Result{Rule: rule.String(), Start: math.NaN(), Stage: "Adam"}
	halvings, lr := 0, opt.LR
	if lr == 0 {
		lr = tr.Model.Cfg.LR / 10
	}
	// The step size is set before the first step: Adam's first step moves every parameter by about
	// the step size, and one at the model's LR throws a fit off the optimum it starts from.
	if err := setLearningRate(tr.Ctx, lr, tr.Model.DType()); err != nil {
		return nil, err
	}
	defer func(was bool) { tr.NoRunawayCheck = was }(tr.NoRunawayCheck)
	tr.NoRunawayCheck = true
	for {
		v, err := tr.Step()
		if err != nil {
			return nil, err
		}
		done := tr.Iter - first
		if done == 1 {
			res.Start = v
		}
		res.Iterations = done
		if done%rule.Window == 0 && done >= 2*rule.Window {
			curve := tr.Curve[len(tr.Curve)-2*rule.Window:]
			drop, se := metrics.WindowDrop(curve[:rule.Window], curve[rule.Window:])
			res.Change = &drop
			res.NegELBO = mean(curve[rule.Window:])
			if opt.Observe != nil {
				opt.Observe(Progress{Stage: "Adam", Iter: done, NegELBO: res.NegELBO, Change: drop, Seconds: time.Since(start).Seconds(), Halvings: halvings})
			}
			if drop < 2*se {
				if halvings == rule.Halvings {
					res.Converged, res.StoppedBy = true, "converged"
					break
				}
				halvings++
				lr /= 2
				if err := setLearningRate(tr.Ctx, lr, tr.Model.DType()); err != nil {
					return nil, err
				}
			}
		}
		switch {
		case ctx.Err() != nil:
			res.StoppedBy = Interrupted
		case opt.MaxSeconds > 0 && time.Since(start).Seconds() > opt.MaxSeconds:
			res.StoppedBy = "max seconds"
		case done >= maxIters:
			res.StoppedBy = "max iterations"
		default:
			continue
		}
		break
	}
	if res.Change == nil { // stopped before two windows: the mean of what there is
		res.NegELBO = mean(tr.Curve[first:])
	}
	res.Evaluations, res.Seconds = res.Iterations, time.Since(start).Seconds()
	res.Curve = tr.Curve[first:]
	return res, nil
}

// mean returns the mean of x.
func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// setLearningRate sets Adam's step size (GoMLX's variable optimizers/learning_rate under the
// trainer's root scope, which the optimiser reuses when it builds its step) to lr.
func setLearningRate(ctx *mlmodel.Scope, lr float64, dtype dtypes.DType) error {
	v := optimizer.LearningRateVarWithValue(ctx.Store().RootScope(), dtype, lr)
	return v.SetValue(vars.Convert(tensors.FromScalar(lr), dtype))
}

// StartFrom copies into dst the parameters that every bound shares from src, a trainer of the same
// data (typically Fit's converged mean-field model): q0 (scope latent), Z, q(u) and the mean
// function (inducing), the kernel and the noise variance (likelihood). dst then trains or is
// evaluated from there with its own bound; its other variables (step sizes, optimiser state) are
// its own. Errors: models of other sizes, a variable of another shape.
func StartFrom(dst, src *train.Trainer) error {
	if err := dst.Ready(); err != nil {
		return err
	}
	if err := src.Ready(); err != nil {
		return err
	}
	if dst.Model.N != src.Model.N || dst.Model.D != src.Model.D || dst.Model.Cfg.Q != src.Model.Cfg.Q || dst.Model.Cfg.M != src.Model.Cfg.M {
		return fmt.Errorf("converge: StartFrom a model of N %d, D %d, Q %d, M %d into one of N %d, D %d, Q %d, M %d",
			src.Model.N, src.Model.D, src.Model.Cfg.Q, src.Model.Cfg.M, dst.Model.N, dst.Model.D, dst.Model.Cfg.Q, dst.Model.Cfg.M)
	}
	for v := range src.Ctx.Store().IterVariables() {
		switch strings.TrimPrefix(v.Scope(), "/") {
		case "latent", "inducing", "kernel", "likelihood":
		default:
			continue
		}
		val, err := v.Value()
		if err == nil {
			val, err = val.LocalClone()
		}
		if err != nil {
			return fmt.Errorf("converge: copying %s/%s: %w", v.Scope(), v.Name(), err)
		}
		val = vars.Convert(val, dst.Model.DType())
		scope := dst.Ctx.Store().Scope(v.Scope())
		if old := scope.GetVariable(v.Name()); old != nil {
			if !old.Shape().Equal(val.Shape()) {
				return fmt.Errorf("converge: %s/%s is %s in the source and %s here", v.Scope(), v.Name(), val.Shape(), old.Shape())
			}
			if err := old.SetValue(val); err != nil {
				return err
			}
			continue
		}
		scope.VariableWithValue(v.Name(), val)
	}
	return nil
}
