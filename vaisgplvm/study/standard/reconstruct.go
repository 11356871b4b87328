package standard

import (
	"fmt"
	"math"
	"strings"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
	optimizers "github.com/gomlx/gomlx/ml/train/optimizer"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// Reconstruction is the fit of new, partially observed points under a trained standard GPLVM.
type Reconstruction struct {
	Latent        [][]float64 // MAP latents h* [T, Q]
	Mean          [][]float64 // predictive mean of f at h* [T, D], every entry
	Var           []float64   // predictive variance of f at h* [T] (shared by the D outputs)
	NoiseVariance float64     // the model's s^2
}

// Reconstruct fits one latent point per row of x [T, D] from its observed entries (mask [T, D], 1 =
// observed) with the trained GP frozen, by MAP (Lawrence 2005's treatment of new points):
//
//	maximise  sum_{d observed} log N(x_d | mu_d(h*), v(h*) + s^2) + log N(h* | 0, I)
//
// with mu, v the exact GP predictive mean and variance given the training data, by iters Adam steps
// (the model's learning rate) from the latent of the training point nearest on the observed entries.
// Errors: shapes, a row with nothing observed, non-finite observed values.
func (m *Model) Reconstruct(x, mask [][]float64, iters int) (*Reconstruction, error) {
	d := len(m.X[0])
	if len(x) == 0 || len(mask) != len(x) {
		return nil, fmt.Errorf("standard: reconstruct: %d rows and %d mask rows", len(x), len(mask))
	}
	for i := range x {
		seen := 0
		if len(x[i]) != d || len(mask[i]) != d {
			return nil, fmt.Errorf("standard: reconstruct: row %d has %d values and %d mask entries, want D = %d", i, len(x[i]), len(mask[i]), d)
		}
		for j, v := range x[i] {
			if mask[i][j] != 0 {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("standard: reconstruct: observed x[%d][%d] = %g", i, j, v)
				}
				seen++
			}
		}
		if seen == 0 {
			return nil, fmt.Errorf("standard: reconstruct: row %d has no observed entry", i)
		}
	}
	h, err := m.fittedLatents()
	if err != nil {
		return nil, err
	}
	ctx := mlmodel.NewStore().RootScope()
	if err := vars.CopyFrozen(m.Ctx, ctx, trainedScope); err != nil {
		return nil, err
	}
	h0, err := latent.Nearest(m.X, nil, h, x, mask)
	if err != nil {
		return nil, err
	}
	star := func(ctx *mlmodel.Scope, g *Graph) *Node {
		return vars.New(ctx.At("reconstruct"), "h", h0).ValueGraph(g)
	}
	xs, ms := zeroMissing(x, mask), mask
	// The GP is frozen: factor the training kernel once, not at every Adam step.
	factors, err := mlmodel.NewExec(m.backend, ctx.Store(), func(ctx *mlmodel.Scope, xt *Node) []*Node {
		lInv, beta, s2 := m.GP.training(ctx, xt, m.latents(ctx, xt.Graph()))
		return []*Node{lInv, beta, s2}
	})
	if err != nil {
		return nil, fmt.Errorf("standard: reconstruct: %w", err)
	}
	f, err := factors.Exec(m.X)
	if err != nil {
		return nil, fmt.Errorf("standard: reconstruct: %w", err)
	}
	lInv, beta, s2 := f[0], f[1], f[2]
	opt := optimizers.Adam().LearningRate(m.Cfg.LR).Done()
	step, err := mlmodel.NewExec(m.backend, ctx.Store(), func(ctx *mlmodel.Scope, li, bt, noise, xn, mk *Node) *Node {
		g := xn.Graph()
		mean, v := m.GP.predictFrom(ctx, li, bt, m.latents(ctx, g), star(ctx, g))
		total := Add(InsertAxes(v, -1), noise) // [T, 1]
		logp := Sub(MulScalar(Log(MulScalar(total, 2*math.Pi)), -0.5), Div(Square(Sub(xn, mean)), MulScalar(total, 2)))
		obj := Add(ReduceAllSum(Mul(logp, mk)), ReduceAllSum(latent.LogPrior(star(ctx, g))))
		loss := DivScalar(Neg(obj), float64(len(x)))
		opt.UpdateGraph(ctx, g, loss)
		return loss
	})
	if err != nil {
		return nil, fmt.Errorf("standard: reconstruct: %w", err)
	}
	for i := 0; i < iters; i++ {
		out, err := step.Exec(lInv, beta, s2, xs, ms)
		if err != nil {
			return nil, fmt.Errorf("standard: reconstruct: iteration %d: %w", i+1, err)
		}
		if v := vars.Flat64(out[0])[0]; math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("standard: reconstruct: iteration %d: objective %g", i+1, v)
		}
	}
	final, err := mlmodel.NewExec(m.backend, ctx.Store(), func(ctx *mlmodel.Scope, li, bt *Node) []*Node {
		hs := star(ctx, li.Graph())
		mean, v := m.GP.predictFrom(ctx, li, bt, m.latents(ctx, li.Graph()), hs)
		return []*Node{hs, mean, v}
	})
	if err != nil {
		return nil, fmt.Errorf("standard: reconstruct: %w", err)
	}
	out, err := final.Exec(lInv, beta)
	if err != nil {
		return nil, fmt.Errorf("standard: reconstruct: %w", err)
	}
	return &Reconstruction{Latent: rows(m.Cfg.Q, vars.Flat64(out[0])), Mean: rows(d, vars.Flat64(out[1])),
		Var: vars.Flat64(out[2]), NoiseVariance: vars.Flat64(s2)[0]}, nil
}

// ScoreHidden scores the entries that mask hid (mask 0) against truth, with the same definitions as
// the Bayesian models' eval.MissingScores: MSE over hidden entries, and NELL = -(1/#rows with a
// hidden entry) sum over hidden entries of E[log N(x | f, s^2)] = log N(x | mu, s^2) - v / (2 s^2).
func (r *Reconstruction) ScoreHidden(truth, mask [][]float64) (mse, nell float64, entries int) {
	rowsHit := 0
	for i := range truth {
		hit := false
		for j, v := range truth[i] {
			if mask[i][j] != 0 {
				continue
			}
			e := v - r.Mean[i][j]
			mse += e * e
			nell += 0.5*math.Log(2*math.Pi*r.NoiseVariance) + (e*e+r.Var[i])/(2*r.NoiseVariance)
			entries++
			hit = true
		}
		if hit {
			rowsHit++
		}
	}
	if entries > 0 {
		mse /= float64(entries)
		nell /= float64(rowsHit)
	}
	return mse, nell, entries
}

// predict returns the exact GP predictive mean [T, D] and variance [T] of f at hs [T, Q] given the
// training data x [N, D] at h [N, Q], and s^2.
func (m *GP) predict(ctx *mlmodel.Scope, x, h, hs *Node) (mean, v, s2 *Node) {
	lInv, beta, s2 := m.training(ctx, x, h)
	mean, v = m.predictFrom(ctx, lInv, beta, h, hs)
	return mean, v, s2
}

// training returns what the predictive needs from the training data: L^-1 [N, N] for
// L L^T = K + s^2 I (+ jitter), beta = L^-1 X [N, D], and s^2.
func (m *GP) training(ctx *mlmodel.Scope, x, h *Node) (lInv, beta, s2 *Node) {
	l, s2 := m.factor(ctx, h)
	lInv = linalg.TriangularInverse(l)
	return lInv, MatMul(lInv, x), s2
}

// predictFrom is predict given the training factors: mean A^T beta, variance k(h*, h*) - |A|^2
// with A = L^-1 K(H, H*) [N, T].
func (m *GP) predictFrom(ctx *mlmodel.Scope, lInv, beta, h, hs *Node) (mean, v *Node) {
	a := MatMul(lInv, Transpose(m.Kernel.Matrix(ctx, hs, h), 0, 1))
	return MatMul(Transpose(a, 0, 1), beta), Sub(m.Kernel.Diag(ctx, hs), ReduceSum(Square(a), 0))
}

// fittedLatents reads H [N, Q].
func (m *Model) fittedLatents() ([][]float64, error) {
	v := m.Ctx.Store().Scope("/standard").GetVariable("latent")
	if v == nil {
		return nil, fmt.Errorf("standard: the model has no fitted latents (run it first)")
	}
	val, err := v.Value()
	if err != nil {
		return nil, err
	}
	return rows(m.Cfg.Q, vars.Flat64(val)), nil
}

// trainedScope reports the scopes of a fitted standard GPLVM: kernel, likelihood and latents.
func trainedScope(scope string) bool {
	for _, p := range []string{"/kernel", "/likelihood", "/standard"} {
		if strings.HasPrefix(scope, p) {
			return true
		}
	}
	return false
}

// zeroMissing replaces the hidden entries of x (which may be NaN) by 0.
func zeroMissing(x, mask [][]float64) [][]float64 {
	out := make([][]float64, len(x))
	for i := range x {
		out[i] = make([]float64, len(x[i]))
		for j, v := range x[i] {
			if mask[i][j] != 0 {
				out[i][j] = v
			}
		}
	}
	return out
}
