package eval

import (
	"fmt"
	"math"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// MaxExactRows bounds the conditioning rows of an Exact: its Cholesky factor costs
// rows^3/3 flops and rows^2 float64s (10000 rows: 800 MB).
const MaxExactRows = 10000

// ScoreMissingExact scores the missing entries (mask 0) as ScoreMissing does, but with the exact
// GP conditional ex (NewExact, CompleteExact) in place of the sparse one: f at a damaged row's
// latents is predicted from every conditioning row, as in k-NN imputation, instead of from the
// M inducing variables q(u) summarise them by. The mixture over ev's particles is scored as in
// ScoreMissing. ex may belong to another trainer with the same trained globals (infer's
// new-point fit, conditioned on the training rows). Errors: those of ScoreMissing, an ex of a
// model with other sizes.
func ScoreMissingExact(t *train.Trainer, truth [][]float64, ev *Evaluation, ex *Exact) (*MissingScores, error) {
	if err := checkExact(t, truth, ev, ex); err != nil {
		return nil, err
	}
	sc, err := scoreHidden(truth, t.Model.Mask, ev, ex.predict)
	if err != nil {
		return nil, err
	}
	sc.Conditional = ex
	return sc, nil
}

// checkExact returns ScoreMissingExact's errors about its arguments.
func checkExact(t *train.Trainer, truth [][]float64, ev *Evaluation, ex *Exact) error {
	if err := checkMissing(t, truth, ev); err != nil {
		return err
	}
	if ex.t.Model.D != t.Model.D || ex.t.Model.Cfg.Q != t.Model.Cfg.Q {
		return fmt.Errorf("exact predictive: conditioned under a model of %d outputs and %d latent dimensions, want %d and %d", ex.t.Model.D, ex.t.Model.Cfg.Q, t.Model.D, t.Model.Cfg.Q)
	}
	return nil
}

// CompleteExact is the exact GP conditional on the complete rows C of the model's data (no entry
// hidden) at their reconstruction latents ev.Latent[C]: NewExact(CompleteRows(ev)). Errors: those
// of CompleteRows and NewExact.
func CompleteExact(t *train.Trainer, ev *Evaluation, o ExactOptions) (*Exact, error) {
	x, h, err := CompleteRows(t, ev)
	if err != nil {
		return nil, err
	}
	return NewExact(t, x, h, o)
}

// CompleteRows returns the rows C of the model's data with no entry hidden, X_C [|C|, D], and their
// reconstruction latents ev.Latent[C] [|C|, Q]. Errors: latents of another length, no complete row.
func CompleteRows(t *train.Trainer, ev *Evaluation) (x, h [][]float64, err error) {
	if err := t.Ready(); err != nil {
		return nil, nil, err
	}
	if len(ev.Latent) != t.Model.N {
		return nil, nil, fmt.Errorf("exact predictive: %d latents for %d rows", len(ev.Latent), t.Model.N)
	}
	cond := completeRows(t.Model.Mask, t.Model.N)
	if len(cond) == 0 {
		return nil, nil, fmt.Errorf("exact predictive: no row has all its entries observed")
	}
	return data.Rows(t.Model.X, cond), data.Rows(ev.Latent, cond), nil
}

// completeRows returns the rows of mask [n, D] with every entry observed (all n when mask is nil).
func completeRows(mask [][]float64, n int) []int {
	var rows []int
	for i := range n {
		full := true
		if mask != nil {
			for _, o := range mask[i] {
				full = full && o != 0
			}
		}
		if full {
			rows = append(rows, i)
		}
	}
	return rows
}

// Exact is the exact GP conditional of the trained model on fully observed rows X_C [|C|, D] at
// latents H_C [|C|, Q]:
//
//	E[f(h)]   = b + k(h, H_C) (K_CC + s^2 I)^-1 (X_C - b),
//	Var[f(h)] = k(h, h) - k(h, H_C) (K_CC + s^2 I)^-1 k(H_C, h),
//
// with the trained kernel and mean b (zero without a learned mean), every lengthscale times
// LengthscaleFactor and the kernel variance times VarianceFactor, and the noise variance Noise.
// Without a refit the factors are 1 and Noise the trained one; with ExactOptions.Refit they are
// chosen by the exact log marginal likelihood of the conditioning rows (type-II maximum
// likelihood): a sparse bound's hyperparameters over-smooth (its noise variance absorbs what M
// inducing variables cannot explain), which the exact conditional, fed every row, need not.
// H_C are point estimates (their posterior spread is ignored): a plug-in predictive, not a bound.
// Its cost is one float64 Cholesky of [|C|, |C|] (gonum), then |C|^2 flops per predicted point;
// a refit adds one Cholesky of [FitRows, FitRows] per likelihood evaluation (at most 80).
type Exact struct {
	LengthscaleFactor float64 `json:"lengthscale_factor"`
	VarianceFactor    float64 `json:"variance_factor"`
	Noise             float64 `json:"noise_variance"`
	// PredictiveNoise is the noise variance of the predicted entries (NELL's s^2): Noise unless
	// ValidateExactNoise chose it on rows damaged as the scored ones are, whose latents rest on
	// part of their entries and so err more than a conditioning row's.
	PredictiveNoise float64 `json:"predictive_noise_variance"`
	Refitted        bool    `json:"refitted"`
	// FitRows are the rows the refit's marginal likelihood used (0: no refit), and NegLogLik its
	// -log p(X_S | H_S) per entry at the chosen hyperparameters (nats).
	FitRows   int     `json:"fit_rows,omitempty"`
	NegLogLik float64 `json:"neg_log_lik_per_entry,omitempty"`

	t      *train.Trainer
	hc     [][]float64 // H_C [|C|, Q]
	chol   mat.Cholesky
	alpha  *mat.Dense    // (K_CC + s^2 I)^-1 (X_C - b): [|C|, D]
	bias   []float64     // b [D]
	kernel *mlmodel.Exec // (h [n, Q], H_C) -> k(h, H_C) [n, |C|], k(h, h) [n], s^2, b at the trained hyperparameters
}

// ExactOptions tune NewExact.
type ExactOptions struct {
	// Refit chooses LengthscaleFactor, VarianceFactor and Noise by the exact log marginal
	// likelihood of FitRows conditioning rows drawn with Seed (all of them when fewer), by
	// Nelder-Mead over the log lengthscale factor and the log noise-to-variance ratio, the
	// variance profiled out in closed form.
	Refit   bool
	FitRows int    // 0 = DefaultExactFitRows
	Seed    uint64 // 0 = 1
	// From, when not nil, gives the hyperparameters (factors, noise and predictive noise) instead
	// of the trained ones or a refit: the same conditional on other rows.
	From *Exact
}

// DefaultExactFitRows is the refit's default number of rows: its Cholesky costs 0.3 GFLOP per
// likelihood evaluation.
const DefaultExactFitRows = 1000

// NewExact factorises K_CC + s^2 I for the rows x [|C|, D] (every entry observed) at latents h
// [|C|, Q] under t's trained kernel and likelihood, refitted first when o.Refit. Errors: shapes,
// non-finite values, more than MaxExactRows rows, a matrix that is not positive definite, a
// refit that finds no finite likelihood.
func NewExact(t *train.Trainer, x, h [][]float64, o ExactOptions) (*Exact, error) {
	if err := t.Ready(); err != nil {
		return nil, err
	}
	m := t.Model
	if len(x) == 0 || len(x) != len(h) {
		return nil, fmt.Errorf("exact predictive: %d rows and %d latents, want the same number > 0", len(x), len(h))
	}
	if len(x) > MaxExactRows {
		return nil, fmt.Errorf("exact predictive: %d conditioning rows, at most %d fit its Cholesky factor", len(x), MaxExactRows)
	}
	if o.FitRows < 0 {
		return nil, fmt.Errorf("exact predictive: %d refit rows, want >= 0 (0 = %d)", o.FitRows, DefaultExactFitRows)
	}
	for i := range x {
		if len(x[i]) != m.D || len(h[i]) != m.Cfg.Q {
			return nil, fmt.Errorf("exact predictive: row %d has %d entries and %d latent dimensions, want %d and %d", i, len(x[i]), len(h[i]), m.D, m.Cfg.Q)
		}
		for _, v := range append(append([]float64(nil), x[i]...), h[i]...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("exact predictive: row %d has a non-finite value (conditioning rows must be fully observed)", i)
			}
		}
	}
	ex := &Exact{t: t, hc: h, LengthscaleFactor: 1, VarianceFactor: 1}
	var err error
	ex.kernel, err = mlmodel.NewExec(t.Backend, t.Ctx.Store(), func(ctx *mlmodel.Scope, h, hc *Node) []*Node {
		post := gp.NewPosterior(ctx, h.Graph(), m.Inducing, m.Kernel)
		bias := ZerosLike(ReduceSum(post.Mu, 0)) // [D]
		if post.Bias != nil {
			bias = post.Bias
		}
		return []*Node{m.Kernel.Matrix(ctx, h, hc), m.Kernel.Diag(ctx, h), m.Lik.NoiseVariance(ctx, h.Graph()), bias}
	})
	if err != nil {
		return nil, fmt.Errorf("exact predictive: %w", err)
	}
	_, _, s2, bias, err := ex.kernels(h[:1], h[:1], 1)
	if err != nil {
		return nil, err
	}
	ex.Noise, ex.bias = s2, bias
	y := mat.NewDense(len(x), m.D, nil) // X_C - b
	for i := range x {
		for j := range m.D {
			y.Set(i, j, x[i][j]-bias[j])
		}
	}
	switch {
	case o.From != nil:
		ex.LengthscaleFactor, ex.VarianceFactor, ex.Noise = o.From.LengthscaleFactor, o.From.VarianceFactor, o.From.Noise
		ex.Refitted, ex.FitRows, ex.NegLogLik = o.From.Refitted, o.From.FitRows, o.From.NegLogLik
	case o.Refit:
		if err := ex.refit(y, o); err != nil {
			return nil, err
		}
	}
	ex.PredictiveNoise = ex.Noise
	if o.From != nil {
		ex.PredictiveNoise = o.From.PredictiveNoise
	}
	ex.chol, ex.alpha, err = ex.factorise(h, y, ex.LengthscaleFactor, ex.Noise/ex.VarianceFactor)
	if err != nil {
		return nil, err
	}
	return ex, nil
}

// factorise returns the Cholesky factor of K + r I, K the trained kernel matrix at latents h with
// lengthscales times c, and (K + r I)^-1 y.
func (ex *Exact) factorise(h [][]float64, y *mat.Dense, c, r float64) (mat.Cholesky, *mat.Dense, error) {
	var chol mat.Cholesky
	k, _, _, _, err := ex.kernels(h, h, c)
	if err != nil {
		return chol, nil, err
	}
	n := len(h)
	a := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			a.SetSym(i, j, k.At(i, j))
		}
		a.SetSym(i, i, a.At(i, i)+r)
	}
	if !chol.Factorize(a) {
		return chol, nil, fmt.Errorf("exact predictive: K_CC + s^2 I (%d rows, noise-to-variance ratio %.3g) is not positive definite", n, r)
	}
	alpha := &mat.Dense{}
	if err := chol.SolveTo(alpha, y); err != nil {
		return chol, nil, fmt.Errorf("exact predictive: solving for the weights: %w", err)
	}
	return chol, alpha, nil
}

// kernels returns k(h, hc) and k(h, h) of the trained kernel with lengthscales times c (the
// latents divided by c: the kernels are functions of h / lengthscale), the trained noise variance
// and the mean b.
func (ex *Exact) kernels(h, hc [][]float64, c float64) (*mat.Dense, []float64, float64, []float64, error) {
	dt := ex.t.Model.DType()
	scale := func(v [][]float64) [][]float64 {
		if c == 1 {
			return v
		}
		out := make([][]float64, len(v))
		for i := range v {
			out[i] = make([]float64, len(v[i]))
			for q := range v[i] {
				out[i][q] = v[i][q] / c
			}
		}
		return out
	}
	lh, err := vars.Matrix(scale(h), dt)
	if err != nil {
		return nil, nil, 0, nil, fmt.Errorf("exact predictive: latents: %w", err)
	}
	lc, err := vars.Matrix(scale(hc), dt)
	if err != nil {
		return nil, nil, 0, nil, fmt.Errorf("exact predictive: latents: %w", err)
	}
	out, err := ex.kernel.Exec(lh, lc)
	if err != nil {
		return nil, nil, 0, nil, fmt.Errorf("exact predictive: %w", err)
	}
	k := mat.NewDense(len(h), len(hc), vars.Flat64(out[0]))
	return k, vars.Flat64(out[1]), vars.Flat64(out[2])[0], vars.Flat64(out[3]), nil
}

// predict returns the exact conditional's means and variances of f at latents h [n, Q].
func (ex *Exact) predict(h [][]float64) (*rowPredictive, error) {
	k, kdiag, _, _, err := ex.kernels(h, ex.hc, ex.LengthscaleFactor)
	if err != nil {
		return nil, err
	}
	var mean, w mat.Dense
	mean.Mul(k, ex.alpha)                              // [n, D]
	if err := ex.chol.SolveTo(&w, k.T()); err != nil { // (K_CC + s^2 I)^-1 k(H_C, h): [|C|, n]
		return nil, fmt.Errorf("exact predictive: %w", err)
	}
	d := ex.t.Model.D
	p := &rowPredictive{mean: make([][]float64, len(h)), vr: make([][]float64, len(h)), s2: ex.PredictiveNoise}
	for i := range h {
		v := ex.VarianceFactor * (kdiag[i] - mat.Dot(k.RowView(i), w.ColView(i)))
		v = max(v, 0) // rounding below the prior's floor
		p.mean[i], p.vr[i] = make([]float64, d), make([]float64, d)
		for j := range d {
			p.mean[i][j] = mean.At(i, j) + ex.bias[j]
			p.vr[i][j] = v
		}
	}
	return p, nil
}

// ExactMeans returns the posterior predictive mixture's means [N, D] of every entry of t's points
// under the exact conditional ex: sum_s w_ns E[f(h_ns)] over ev's particles (its single latent
// when ev has none), E[f] as in Exact. Errors: ev or ex of other sizes, a failed prediction.
func ExactMeans(t *train.Trainer, ev *Evaluation, ex *Exact) ([][]float64, error) {
	if err := t.Ready(); err != nil {
		return nil, err
	}
	if len(ev.Latent) != t.Model.N || ex.t.Model.D != t.Model.D || ex.t.Model.Cfg.Q != t.Model.Cfg.Q {
		return nil, fmt.Errorf("exact predictive: %d latents for %d points, or a conditional of other sizes", len(ev.Latent), t.Model.N)
	}
	pred := ev.Predictive
	if pred == nil || pred.Particles == nil {
		pred = singleComponent(ev)
	}
	out := make([][]float64, t.Model.N)
	for i := range out {
		out[i] = make([]float64, t.Model.D)
	}
	for k, h := range pred.Particles {
		p, err := ex.predict(h)
		if err != nil {
			return nil, err
		}
		for i := range out {
			for j := range out[i] {
				out[i][j] += pred.Weights[k][i] * p.mean[i][j]
			}
		}
	}
	return out, nil
}
