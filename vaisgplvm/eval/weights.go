package eval

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/floats"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
)

// WeightStats are the importance-weight diagnostics of paper Table 3, averaged over points.
type WeightStats struct {
	ESS     float64 `json:"ess"`            // mean over points of 1 / sum_k w_k^2 (between 1 and K)
	Entropy float64 `json:"weight_entropy"` // mean over points of -sum_k w_k log w_k, nats (at most log K)
	K       int     `json:"k"`              // weights per point
	Points  int     `json:"points"`
	// PerPointESS is the ESS of each point, in the order of idx.
	PerPointESS []float64 `json:"-"`
	// PerPointBound is each point's log (1/k) sum_s w_s (nats), in the order of idx: the bound's
	// per-point term L_n with k particles (without KL(q(u) || p(u)) / N).
	PerPointBound []float64 `json:"-"`
	// Accept are, for VAIS, the mean Metropolis-Hastings acceptance rates min(1, a_k) of the K
	// transitions over the points and chains (see anneal.Chain.LogAccept); nil otherwise.
	Accept []float64 `json:"accept_rates,omitempty"`
	// MeanLogAccept are, for VAIS, the mean log a_k of the K transitions (nats; see
	// anneal.Chain.MeanLogAccept); nil otherwise.
	MeanLogAccept []float64 `json:"mean_log_accept,omitempty"`
}

// Weights returns the normalised-weight diagnostics of k importance weights per point for the
// rows idx: for IWVI the k samples of q0 (the model's K is replaced by k), for VAIS k independent
// annealed chains per point (the model's K annealing steps each), and for MF an error (it has no
// weights). The noise is drawn from PCG(seed).
func Weights(t *train.Trainer, idx []int, k int, seed uint64) (*WeightStats, error) {
	if err := t.Ready(); err != nil {
		return nil, err
	}
	m := *t.Model
	sizes, ok := m.Method.Particles(bounds.Sizes{K: m.Cfg.K, Samples: m.Cfg.Samples}, k)
	if !ok {
		return nil, fmt.Errorf("weights: method %q has no importance weights", m.Cfg.Method)
	}
	m.Cfg.K, m.Cfg.Samples = sizes.K, sizes.Samples
	if k < 1 || len(idx) == 0 {
		return nil, fmt.Errorf("weights: need k >= 1 and at least one point")
	}
	ids, err := pointIDs(t, "weights", idx)
	if err != nil {
		return nil, err
	}
	b := len(ids)
	rng := rand.New(rand.NewPCG(seed, 0x77))
	exec, err := t.CachedExec("weights", t.Model, &m, func(ctx *mlmodel.Scope, xn, mk, id, e0, ch *Node) []*Node {
		res, c := m.Bound(ctx, xn, mk, id, e0, ch)
		if c != nil && len(c.LogAccept) > 0 {
			return []*Node{res.LogW, c.AcceptRates(), c.MeanLogAccept()}
		}
		return []*Node{res.LogW}
	})
	if err != nil {
		return nil, err
	}
	args, err := train.RowsBatch(&m, ids, b, rng).Args(m.DType())
	if err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	out, err := exec.Exec(args...)
	if err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	logW := vars.Flat64(out[0]) // [k, b]
	st := &WeightStats{K: k, Points: b}
	if len(out) > 1 {
		st.Accept, st.MeanLogAccept = vars.Flat64(out[1]), vars.Flat64(out[2])
	}
	col := make([]float64, k)
	for n := 0; n < b; n++ {
		for s := 0; s < k; s++ {
			col[s] = logW[s*b+n]
		}
		ess := metrics.ESS(col)
		st.PerPointESS = append(st.PerPointESS, ess)
		st.PerPointBound = append(st.PerPointBound, floats.LogSumExp(col)-math.Log(float64(k)))
		st.ESS += ess / float64(b)
		st.Entropy += metrics.WeightEntropy(col) / float64(b)
	}
	return st, nil
}
