package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
)

// Params are the fitted values of a trained model, in float64, for plots and reports.
type Params struct {
	// Lengthscales are the ARD lengthscales l_q [Q] (latent units); small l_q = relevant dimension.
	Lengthscales []float64 `json:"lengthscales"`
	// NoiseVariance is the Gaussian noise variance s^2 (data scale squared).
	NoiseVariance float64 `json:"noise_variance"`
	// LatentMean are the q0 means a_n [N, Q]; LatentSD the marginal standard deviations
	// sqrt(diag(L_n L_n^T)) [N, Q].
	LatentMean [][]float64 `json:"-"`
	LatentSD   [][]float64 `json:"-"`
	// Z are the inducing inputs [M, Q].
	Z [][]float64 `json:"-"`
	// Betas and Etas are the annealing schedule beta_1..beta_K and step sizes eta_1..eta_K (VAIS
	// only; nil otherwise).
	Betas []float64 `json:"betas,omitempty"`
	Etas  []float64 `json:"etas,omitempty"`
	// PointEtaFactors are the per-point factors s_n on eta_k [N] (VAIS with Cfg.PointEta; nil
	// otherwise): point n's chain steps with eta_k s_n.
	PointEtaFactors []float64 `json:"-"`
}

// Params reads the fitted values out of the trainer's variables (creating them from their
// initial values if no step ran yet).
func (t *Trainer) Params() (*Params, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	m := t.Model
	annealed := m.Method.Annealed()
	exec, err := t.cached(execKey{name: "params", model: m, store: t.Ctx.Store(), state: graphState(m)}, func() (*mlmodel.Exec, error) {
		return mlmodel.NewExec(t.Backend, t.Ctx.Store(), func(ctx *mlmodel.Scope, idx *Node) []*Node {
			g := idx.Graph()
			q0 := latent.Batch(ctx, g, m.Latent, idx)
			sd := Sqrt(ReduceSum(Square(q0.Scale), -1))
			post := gp.NewPosterior(ctx, g, m.Inducing, m.Kernel)
			out := []*Node{m.Kernel.Lengthscales(ctx, g), m.Lik.NoiseVariance(ctx, g), q0.Mean, sd, post.Z}
			if annealed {
				k := max(m.Cfg.K, 1)
				out = append(out, m.Schedule.Betas(ctx, g, k), m.Step.Etas(ctx, g, k))
				if f := m.PointEtaFactors(ctx, g, idx); f != nil {
					out = append(out, f)
				}
			}
			return out
		})
	})
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	idx := make([]int32, m.N)
	for i := range idx {
		idx[i] = int32(i)
	}
	out, err := exec.Exec(idx)
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	p := &Params{
		Lengthscales:  vars.Flat64(out[0]),
		NoiseVariance: vars.Flat64(out[1])[0],
		LatentMean:    vars.Rows(out[2]),
		LatentSD:      vars.Rows(out[3]),
		Z:             vars.Rows(out[4]),
	}
	if annealed {
		p.Betas, p.Etas = vars.Flat64(out[5]), vars.Flat64(out[6])
		if len(out) > 7 {
			p.PointEtaFactors = vars.Flat64(out[7])
		}
	}
	return p, nil
}

// ChainPath runs one annealed chain (VAIS only) for the data point n with noise from PCG(seed) and
// returns its states H_0..H_K [K+1, Q] in latent coordinates, with the chain's log weight
// log w = log p(x_n, H_K) - log q0(H_0) - sum_k R_{k-1} (nats).
func (t *Trainer) ChainPath(n int, seed uint64) (path [][]float64, logW float64, err error) {
	if err = t.check(); err != nil {
		return nil, 0, err
	}
	m := *t.Model
	if !m.Method.Annealed() {
		return nil, 0, fmt.Errorf("chain path: method %q has no annealed chain", m.Cfg.Method)
	}
	if n < 0 || n >= m.N {
		return nil, 0, fmt.Errorf("chain path: point %d out of range [0, %d)", n, m.N)
	}
	m.Cfg.Samples = 1
	rng := rand.New(rand.NewPCG(seed, 0x9a7))
	exec, err := t.CachedExec("chain path", t.Model, &m, func(ctx *mlmodel.Scope, xn, mk, id, e0, ch *Node) []*Node {
		res, chain := m.Bound(ctx, xn, mk, id, e0, ch)
		out := []*Node{res.LogW}
		for _, h := range chain.Path {
			out = append(out, Reshape(h, m.Cfg.Q))
		}
		return out
	})
	if err != nil {
		return nil, 0, fmt.Errorf("chain path: %w", err)
	}
	args, err := RowsBatch(&m, []int32{int32(n)}, 1, rng).Args(m.DType())
	if err != nil {
		return nil, 0, fmt.Errorf("chain path: %w", err)
	}
	out, err := exec.Exec(args...)
	if err != nil {
		return nil, 0, fmt.Errorf("chain path: %w", err)
	}
	logW = vars.Flat64(out[0])[0]
	for _, h := range out[1:] {
		path = append(path, vars.Flat64(h))
	}
	if math.IsNaN(logW) {
		return path, logW, fmt.Errorf("chain path: log weight is NaN for point %d", n)
	}
	return path, logW, nil
}
