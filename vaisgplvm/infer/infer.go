// Package infer fits the latent distribution of new, possibly partially observed, data points under
// a trained model whose kernel, inducing variables, likelihood and annealing parameters stay
// frozen (the counterpart of GPy's infer_newX).
//
// For each new point x* [D] (with an observation mask), q0(h*) = N(a*, L* L*^T) is fitted by Adam
// on the model's own bound (MF, IWVI or VAIS, with the same K, eta and schedule); a* starts at the
// trained q0 mean of the training point nearest to x* on its observed entries. The result holds
// the fitted means, the reconstruction latents (for VAIS: the weighted chain ends of
// eval.ReconChains annealed chains) and the predicted data, missing entries included.
package infer

import (
	"context"
	"fmt"
	"math"
	"strings"

	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Options tune the fit of the new latents.
type Options struct {
	Iters int     `json:"iters"` // Adam iterations (default 500)
	LR    float64 `json:"lr"`    // learning rate (default: the model's)
	Seed  uint64  `json:"seed"`  // seeds the bound's noise (default 1)
	// SingleLatent makes Result.Recon the prediction at the single reconstruction latent (the
	// weighted mean of the particles) instead of the posterior predictive mixture's mean.
	SingleLatent bool `json:"single_latent,omitempty"`
	// Exact predicts with the exact GP conditional on the training rows at their reconstruction
	// latents, refitted, its predictive noise validated on training rows damaged as the new rows
	// are (ValidatedComplete), instead of the sparse GP: Result.Recon are its mixture means and
	// Result.Exact the conditional. Not with SingleLatent.
	Exact bool `json:"exact,omitempty"`
	// Init are the initial q0 means [N*, Q] (nil: the trained mean of each row's nearest training
	// point on its observed entries).
	Init [][]float64 `json:"-"`
}

// Result is the fit for N* new points.
type Result struct {
	Mean   [][]float64 // fitted q0 means a* [N*, Q]
	Latent [][]float64 // reconstruction latents [N*, Q] (see package doc)
	// Recon are the predictions [N*, D], missing entries included: the posterior predictive
	// mixture's means sum_s w_s E[f(h_s)] over the particles (eval.Predictive), or with
	// Options.SingleLatent E[f(h*)] at the reconstruction latent.
	Recon [][]float64
	// Predictive is the mixture (its particles, weights and scores on the observed entries).
	Predictive *eval.Predictive
	// Exact is the exact GP conditional of Options.Exact (nil without it).
	Exact   *eval.Exact
	NegELBO float64 // -(1/N*) sum_n L_n: minus the per-point bound terms (no KL(q(u)||p(u))), nats
	// NegELBOSE is the Monte Carlo standard error of NegELBO over the evaluation's 3 noise draws
	// (KL(q(u)||p(u)) is exact, so it is that of the full bound too).
	NegELBOSE float64
	Curve     []float64 // per-iteration training loss: -(sum_n L_n - KL(q(u)||p(u))) / N*

	fit  *train.Trainer   // the frozen-globals trainer of the new points
	eval *eval.Evaluation // its evaluation (reconstruction latents)
}

// ScoreMissing scores the predictions of the entries the mask hid against truth [N*, D], with the
// definitions of eval.ScoreMissing (MSE over hidden entries; NELL per row with a hidden
// entry). An error when Latents was given no mask.
func (r *Result) ScoreMissing(truth [][]float64) (*eval.MissingScores, error) {
	return eval.ScoreMissing(r.fit, truth, r.eval)
}

// ScoreMissingExact scores the hidden entries as ScoreMissing does, with the exact GP conditional
// ex (eval.NewExact on the training rows at their latents) in place of the sparse one.
// An error when Latents was given no mask.
func (r *Result) ScoreMissingExact(truth [][]float64, ex *eval.Exact) (*eval.MissingScores, error) {
	return eval.ScoreMissingExact(r.fit, truth, r.eval, ex)
}

// Latents fits q0 for the rows of x [N*, D] (mask [N*, D], 1 = observed, or nil) under the trained
// model of tr. Errors: wrong number of columns, non-finite observed values, a row with no
// observed entry, a failure of the optimisation (reported with its iteration), ctx's error (the
// fit stops between two steps when ctx is cancelled).
func Latents(ctx context.Context, tr *train.Trainer, x, mask [][]float64, opt Options) (*Result, error) {
	if err := tr.Ready(); err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	m := tr.Model
	if err := check(m, x, mask); err != nil {
		return nil, err
	}
	if opt.Iters < 0 || !(opt.LR >= 0) || math.IsInf(opt.LR, 0) {
		return nil, fmt.Errorf("infer: %d iterations at learning rate %g: want iterations >= 0 (0 = 500) and a finite rate >= 0 (0 = the model's)", opt.Iters, opt.LR)
	}
	if opt.Exact && opt.SingleLatent {
		return nil, fmt.Errorf("infer: Exact predicts with the mixture over the particles, SingleLatent at one latent: choose one")
	}
	if opt.Iters == 0 {
		opt.Iters = 500
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	means, err := variable(tr.Ctx, "/latent", "mean")
	if err != nil {
		return nil, err
	}
	nm := *m
	nm.N, nm.X, nm.Mask = len(x), x, mask
	nm.Cfg.Batch, nm.Cfg.Seed = 0, opt.Seed
	if opt.LR > 0 {
		nm.Cfg.LR = opt.LR
	}
	mean0, err := latent.Nearest(m.X, m.Mask, means, x, mask)
	if opt.Init != nil {
		if len(opt.Init) != len(x) || len(opt.Init[0]) != m.Cfg.Q {
			return nil, fmt.Errorf("infer: %d initial means of %d dimensions for %d rows, want one of %d each", len(opt.Init), len(opt.Init[0]), len(x), m.Cfg.Q)
		}
		mean0 = opt.Init
	}
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	nm.Latent = &latent.Config{N: len(x), Q: m.Cfg.Q, Diagonal: m.Cfg.DiagQ0, Scale0: m.Cfg.Scale0, Mean0: mean0}
	ft, err := train.New(&nm, tr.Backend)
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	if err := vars.CopyFrozen(tr.Ctx, ft.Ctx, isModelScope); err != nil {
		return nil, err
	}
	if err := ft.Run(ctx, opt.Iters, train.RunOptions{}); err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	ev, err := eval.Evaluate(ft, 3, nil)
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	fitted, err := variable(ft.Ctx, "/latent", "mean")
	if err != nil {
		return nil, err
	}
	res := &Result{Mean: fitted, Latent: ev.Latent, Recon: ev.Predictive.Recon, Predictive: ev.Predictive,
		NegELBO: ev.NegPointBound, NegELBOSE: *ev.NegELBOSE, Curve: ft.Curve, fit: ft, eval: ev}
	if opt.SingleLatent {
		res.Recon = ev.Recon
	}
	if opt.Exact {
		if res.Exact, res.Recon, err = exactRecon(ctx, tr, ft, ev, mask, opt.Seed); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// exactRecon returns the validated exact conditional on tr's complete rows (their latents from a
// one-draw evaluation) for rows damaged as mask's are, and the mixture means of ft's points
// under it.
func exactRecon(ctx context.Context, tr, ft *train.Trainer, ev *eval.Evaluation, mask [][]float64, seed uint64) (*eval.Exact, [][]float64, error) {
	trainEv, err := eval.Evaluate(tr, 1, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("infer: the training rows' latents: %w", err)
	}
	ex, err := ValidatedComplete(ctx, tr, trainEv, ExactValidation{Hide: hiddenShare(mask), Seed: seed})
	if err != nil {
		return nil, nil, err
	}
	recon, err := eval.ExactMeans(ft, ev, ex)
	return ex, recon, err
}

// hiddenShare is the mean share of hidden entries (mask 0) of the rows that have one, 0.5 when
// none does.
func hiddenShare(mask [][]float64) float64 {
	hidden, rows := 0.0, 0
	for _, r := range mask {
		h := 0
		for _, o := range r {
			if o == 0 {
				h++
			}
		}
		if h > 0 {
			hidden, rows = hidden+float64(h)/float64(len(r)), rows+1
		}
	}
	if rows == 0 {
		return 0.5
	}
	return hidden / float64(rows)
}

func check(m *model.Model, x, mask [][]float64) error {
	if len(x) == 0 {
		return fmt.Errorf("infer: no data points")
	}
	if mask != nil && len(mask) != len(x) {
		return fmt.Errorf("infer: mask has %d rows, data %d", len(mask), len(x))
	}
	for i, r := range x {
		if len(r) != m.D {
			return fmt.Errorf("infer: row %d has %d columns, the model has D = %d", i, len(r), m.D)
		}
		if mask != nil && len(mask[i]) != m.D {
			return fmt.Errorf("infer: mask row %d has %d columns, want %d", i, len(mask[i]), m.D)
		}
		observed := 0
		for j, v := range r {
			if mask != nil && mask[i][j] == 0 {
				continue
			}
			if mask != nil && mask[i][j] != 1 {
				return fmt.Errorf("infer: mask[%d][%d] = %g: want 0 (missing) or 1 (observed)", i, j, mask[i][j])
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("infer: x[%d][%d] = %g is observed but not finite (set its mask to 0)", i, j, v)
			}
			observed++
		}
		if observed == 0 {
			return fmt.Errorf("infer: row %d has no observed entry", i)
		}
	}
	return nil
}

// isModelScope reports the scopes of a trained model's global variables (kernel, inducing
// variables, likelihood, learned schedule and step size, a bound's own parameters such as uha's
// damping and mass; not the latents or the optimiser state).
func isModelScope(scope string) bool {
	for _, p := range []string{"/kernel", "/inducing", "/likelihood", "/anneal", "/bound"} {
		if strings.HasPrefix(scope, p) {
			return true
		}
	}
	return false
}

// variable reads a [N, Q] float64 variable.
func variable(ctx *mlmodel.Scope, scope, name string) ([][]float64, error) {
	v := ctx.Store().Scope(scope).GetVariable(name)
	if v == nil {
		return nil, fmt.Errorf("infer: the model has no variable %s/%s (train it first)", scope, name)
	}
	val, err := v.Value()
	if err != nil {
		return nil, err
	}
	flat := vars.Flat64(val)
	r, c := val.Shape().Dim(0), val.Shape().Dim(1)
	out := make([][]float64, r)
	for i := range out {
		out[i] = flat[i*c : (i+1)*c]
	}
	return out, nil
}
