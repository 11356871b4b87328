package eval

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
)

// ESSBreakdown is, per point, the effective sample size 1 / sum_s w_s^2 of normalised importance
// weights under each definition a reader of the paper's Table 3 might assume (the paper does not
// say which it used). Each slice is in the order of the points asked for; nil where a definition
// does not apply.
type ESSBreakdown struct {
	K int `json:"k"` // weights per point (chains, samples)
	// Particles: the method's own K weights per point (Weights): K independent chains of
	// an annealed bound, K samples of q0 for IWVI; nil for MF.
	Particles []float64 `json:"particles,omitempty"`
	// Own are the diagnostics of those weights (Weights; nil for MF), Particles' source.
	Own *WeightStats `json:"-"`
	// Q0Samples: K importance samples of the model's q0, w_s = p(x_n, h_s) / q0(h_s), for every
	// method (IWVI's weights at this model's q0).
	Q0Samples []float64 `json:"q0_samples"`
	// PerPixel: the mean over a point's observed entries d of the ESS of the K per-entry weights
	// w_sd = p(x_nd | h_s) p(h_s) / q0(h_s), h_s ~ q0 (the weights of an importance-weighted
	// bound written per (n, d)).
	PerPixel []float64 `json:"per_pixel"`
	// Increments: annealed bounds whose weight is a product of per-step terms: the ESS of one
	// chain's K incremental weights exp(Delta_k), Delta_k = log pi_k(H_k) - log pi_{k-1}(H_{k-1})
	// - R_{k-1} (sum_k Delta_k = log w, checked): how evenly the chain earns its weight across
	// steps (K = the model's annealing steps, not the K above). nil otherwise.
	Increments []float64 `json:"increments,omitempty"`
}

// ESSBreakdown returns the ESS of the points idx under every definition of ESSBreakdown, with k
// weights per point and noise from PCG(seed).
func NewESSBreakdown(t *train.Trainer, idx []int, k int, seed uint64) (*ESSBreakdown, error) {
	if err := t.Ready(); err != nil {
		return nil, err
	}
	out := &ESSBreakdown{K: k}
	if _, ok := t.Model.Method.Particles(bounds.Sizes{K: t.Model.Cfg.K, Samples: t.Model.Cfg.Samples}, k); ok {
		w, err := Weights(t, idx, k, seed)
		if err != nil {
			return nil, err
		}
		out.Own, out.Particles = w, w.PerPointESS
	}
	iw, err := t.Model.WithBound("iwvi", k, nil)
	if err != nil {
		return nil, err
	}
	q0 := *t
	q0.Model = iw
	w, err := Weights(&q0, idx, k, seed)
	if err != nil {
		return nil, fmt.Errorf("ess: %w", err)
	}
	out.Q0Samples = w.PerPointESS
	if out.PerPixel, err = perPixelESS(&q0, idx, seed); err != nil {
		return nil, err
	}
	if t.Model.Method.Annealed() {
		if out.Increments, err = incrementESS(t, idx, seed); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pointIDs checks idx against the model's points and returns them as int32; errors begin with
// what.
func pointIDs(t *train.Trainer, what string, idx []int) ([]int32, error) {
	if len(idx) == 0 {
		return nil, fmt.Errorf("%s: no points", what)
	}
	ids := make([]int32, len(idx))
	for i, j := range idx {
		if j < 0 || j >= t.Model.N {
			return nil, fmt.Errorf("%s: point %d out of range [0, %d)", what, j, t.Model.N)
		}
		ids[i] = int32(j)
	}
	return ids, nil
}

// perPixelESS is ESSBreakdown.PerPixel for t's IWVI model (its K samples of q0).
func perPixelESS(t *train.Trainer, idx []int, seed uint64) ([]float64, error) {
	m := *t.Model
	ids, err := pointIDs(t, "ess", idx)
	if err != nil {
		return nil, err
	}
	exec, err := t.CachedExec("per-pixel weights", t.Model, &m, func(ctx *mlmodel.Scope, x, mask, id, eps0, _ *Node) []*Node {
		b := m.BatchFor(ctx, x, mask, id)
		h := b.Q0.Sample(eps0) // [K, B, Q]
		ratio := Sub(latent.LogPrior(h), b.Q0.LogProbWhitened(eps0))
		return []*Node{ratio, m.PixelLogLik(ctx, x, mask, h)}
	})
	if err != nil {
		return nil, err
	}
	// Weights' noise: with one column the per-entry weights are Q0Samples' weights exactly.
	bt := train.RowsBatch(&m, ids, len(ids), rand.New(rand.NewPCG(seed, 0x77)))
	args, err := bt.Args(m.DType())
	if err != nil {
		return nil, err
	}
	res, err := exec.Exec(args...)
	if err != nil {
		return nil, fmt.Errorf("ess: %w", err)
	}
	ratio, pix := vars.Flat64(res[0]), vars.Flat64(res[1]) // [K, B], [K, B, D]
	k, b, d := len(ratio)/len(ids), len(ids), m.D
	ess := make([]float64, b)
	col := make([]float64, k)
	for n := range b {
		obs := 0
		for j := range d {
			if bt.Mask != nil && bt.Mask[n][j] == 0 {
				continue
			}
			for s := range k {
				col[s] = pix[(s*b+n)*d+j] + ratio[s*b+n]
			}
			ess[n] += metrics.ESS(col)
			obs++
		}
		ess[n] /= float64(max(obs, 1))
	}
	return ess, nil
}

// incrementESS is ESSBreakdown.Increments: one chain per point of t's annealed model (for the
// underdamped bound the log ratios carry the momentum densities, and still sum to log w). It
// returns nil when the chain's weight is not the sum of the increments.
func incrementESS(t *train.Trainer, idx []int, seed uint64) ([]float64, error) {
	m := *t.Model
	m.Cfg.Samples = 1
	ids, err := pointIDs(t, "ess", idx)
	if err != nil {
		return nil, err
	}
	kSteps := max(m.Cfg.K, 1)
	exec, err := t.CachedExec("chain increments", t.Model, &m, func(ctx *mlmodel.Scope, x, mask, id, eps0, chain *Node) []*Node {
		res, c := m.Bound(ctx, x, mask, id, eps0, chain)
		b := m.BatchFor(ctx, x, mask, id)
		betas := ConvertDType(m.Schedule.Betas(ctx, x.Graph(), kSteps), x.DType())
		out := []*Node{res.LogW}
		prev := ScalarZero(x.Graph(), x.DType())
		for k := 1; k <= kSteps && k <= len(c.LogAccept); k++ {
			beta := Slice(betas, AxisElem(k-1))
			h := c.Path[k-1]
			gap := Sub(b.LogJoint(h), b.Q0.LogProb(h)) // log p(x, h) - log q0(h): [1, B]
			out = append(out, Add(c.LogAccept[k-1], Mul(Sub(Reshape(beta), prev), gap)))
			prev = Reshape(beta)
		}
		return out
	})
	if err != nil {
		return nil, err
	}
	args, err := train.RowsBatch(&m, ids, len(ids), rand.New(rand.NewPCG(seed, 0x92))).Args(m.DType())
	if err != nil {
		return nil, err
	}
	res, err := exec.Exec(args...)
	if err != nil {
		return nil, fmt.Errorf("ess: %w", err)
	}
	logW := vars.Flat64(res[0])
	steps := make([][]float64, len(res)-1)
	for k := range steps {
		steps[k] = vars.Flat64(res[k+1])
	}
	ess := make([]float64, len(ids))
	col := make([]float64, len(steps))
	for n := range ids {
		sum := 0.0
		for k := range steps {
			col[k] = steps[k][n]
			sum += col[k]
		}
		if math.Abs(sum-logW[n]) > 1e-6*max(1, math.Abs(logW[n])) {
			return nil, nil // not a product of per-step terms
		}
		ess[n] = metrics.ESS(col)
	}
	return ess, nil
}
