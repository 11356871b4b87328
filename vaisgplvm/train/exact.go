package train

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

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
func (t *Trainer) ScoreMissingExact(truth [][]float64, ev *Evaluation, ex *Exact) (*MissingScores, error) {
	if err := t.checkMissing(truth, ev); err != nil {
		return nil, err
	}
	if ex.t.Model.D != t.Model.D || ex.t.Model.Cfg.Q != t.Model.Cfg.Q {
		return nil, fmt.Errorf("exact predictive: conditioned under a model of %d outputs and %d latent dimensions, want %d and %d", ex.t.Model.D, ex.t.Model.Cfg.Q, t.Model.D, t.Model.Cfg.Q)
	}
	return scoreHidden(truth, t.Model.Mask, ev, ex.predict)
}

// CompleteExact is the exact GP conditional on the complete rows C of the model's data (no entry
// hidden) at their reconstruction latents ev.Latent[C]: NewExact(X_C, ev.Latent[C]). Errors: no
// complete row, and those of NewExact.
func (t *Trainer) CompleteExact(ev *Evaluation) (*Exact, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if len(ev.Latent) != t.Model.N {
		return nil, fmt.Errorf("exact predictive: %d latents for %d rows", len(ev.Latent), t.Model.N)
	}
	cond := completeRows(t.Model.Mask)
	if len(cond) == 0 {
		return nil, fmt.Errorf("exact predictive: no row has all its entries observed")
	}
	x, h := make([][]float64, len(cond)), make([][]float64, len(cond))
	for i, r := range cond {
		x[i], h[i] = t.Model.X[r], ev.Latent[r]
	}
	return t.NewExact(x, h)
}

// completeRows returns the rows of mask with every entry observed (all rows when mask is nil).
func completeRows(mask [][]float64) []int {
	var rows []int
	if mask == nil {
		return nil
	}
	for i := range mask {
		full := true
		for _, o := range mask[i] {
			full = full && o != 0
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
// with the trained kernel, noise variance s^2 and mean b (zero without a learned mean). The
// hyperparameters are those the bound chose for the sparse model, and H_C are point estimates
// (their posterior spread is ignored): a plug-in predictive, not a bound. Its cost is one
// float64 Cholesky of [|C|, |C|] (gonum), then |C|^2 flops per predicted point.
type Exact struct {
	t      *Trainer
	hc     [][]float64 // H_C [|C|, Q]
	chol   mat.Cholesky
	alpha  *mat.Dense // (K_CC + s^2 I)^-1 (X_C - b): [|C|, D]
	bias   []float64  // b [D]
	s2     float64
	kernel *mlmodel.Exec // (h [n, Q], H_C) -> k(h, H_C) [n, |C|], k(h, h) [n], s^2, b
}

// NewExact factorises K_CC + s^2 I for the rows x [|C|, D] (every entry observed) at latents h
// [|C|, Q] under t's trained kernel and likelihood. Errors: shapes, non-finite values, more than
// MaxExactRows rows, a matrix that is not positive definite.
func (t *Trainer) NewExact(x, h [][]float64) (*Exact, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	m := t.Model
	if len(x) == 0 || len(x) != len(h) {
		return nil, fmt.Errorf("exact predictive: %d rows and %d latents, want the same number > 0", len(x), len(h))
	}
	if len(x) > MaxExactRows {
		return nil, fmt.Errorf("exact predictive: %d conditioning rows, at most %d fit its Cholesky factor", len(x), MaxExactRows)
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
	ex := &Exact{t: t, hc: h}
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
	kcc, _, s2, bias, err := ex.kernels(ex.hc)
	if err != nil {
		return nil, err
	}
	ex.s2, ex.bias = s2, bias
	n := len(h)
	a := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			a.SetSym(i, j, kcc.At(i, j))
		}
		a.SetSym(i, i, a.At(i, i)+s2)
	}
	if !ex.chol.Factorize(a) {
		return nil, fmt.Errorf("exact predictive: K_CC + s^2 I (%d rows, s^2 = %.3g) is not positive definite", n, s2)
	}
	xc := mat.NewDense(n, m.D, nil)
	for i := range x {
		for j := range m.D {
			xc.Set(i, j, x[i][j]-bias[j])
		}
	}
	ex.alpha = &mat.Dense{}
	if err := ex.chol.SolveTo(ex.alpha, xc); err != nil {
		return nil, fmt.Errorf("exact predictive: solving for the weights: %w", err)
	}
	return ex, nil
}

// kernels returns k(h, H_C), k(h, h), the noise variance and the mean b.
func (ex *Exact) kernels(h [][]float64) (*mat.Dense, []float64, float64, []float64, error) {
	dt := ex.t.Model.DType()
	lh, err := vars.Matrix(h, dt)
	if err != nil {
		return nil, nil, 0, nil, fmt.Errorf("exact predictive: latents: %w", err)
	}
	lc, err := vars.Matrix(ex.hc, dt)
	if err != nil {
		return nil, nil, 0, nil, fmt.Errorf("exact predictive: latents: %w", err)
	}
	out, err := ex.kernel.Exec(lh, lc)
	if err != nil {
		return nil, nil, 0, nil, fmt.Errorf("exact predictive: %w", err)
	}
	k := mat.NewDense(len(h), len(ex.hc), vars.Flat64(out[0]))
	return k, vars.Flat64(out[1]), vars.Flat64(out[2])[0], vars.Flat64(out[3]), nil
}

// predict returns the exact conditional's means and variances of f at latents h [n, Q].
func (ex *Exact) predict(h [][]float64) (*rowPredictive, error) {
	k, kdiag, _, _, err := ex.kernels(h)
	if err != nil {
		return nil, err
	}
	var mean, w mat.Dense
	mean.Mul(k, ex.alpha)                              // [n, D]
	if err := ex.chol.SolveTo(&w, k.T()); err != nil { // (K_CC + s^2 I)^-1 k(H_C, h): [|C|, n]
		return nil, fmt.Errorf("exact predictive: %w", err)
	}
	d := ex.t.Model.D
	p := &rowPredictive{mean: make([][]float64, len(h)), vr: make([][]float64, len(h)), s2: ex.s2}
	for i := range h {
		v := kdiag[i] - mat.Dot(k.RowView(i), w.ColView(i))
		v = max(v, 0) // rounding below the prior's floor
		p.mean[i], p.vr[i] = make([]float64, d), make([]float64, d)
		for j := range d {
			p.mean[i][j] = mean.At(i, j) + ex.bias[j]
			p.vr[i][j] = v
		}
	}
	return p, nil
}
