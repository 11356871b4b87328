package standard

import (
	"fmt"
	"math"
	"time"

	backends "github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
	optimizers "github.com/gomlx/gomlx/ml/train/optimizer"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// Config sets up a standard GPLVM fit.
type Config struct {
	Q      int     // latent dimensions
	Kernel string  // kernels.New name (default "se")
	LR     float64 // Adam learning rate (default 0.02, as the paper's Table 4)
	Noise0 float64 // initial noise variance as a fraction of the mean data variance (default 0.1)
}

// Model is a standard GPLVM on data x [N, D] (fully observed), with its parameters.
type Model struct {
	Cfg  Config
	X    [][]float64
	GP   *GP
	Ctx  *mlmodel.Scope
	Iter int
	// Curve is -log p(X, H) / N after each iteration (nats per point).
	Curve   []float64
	Seconds float64 // wall seconds spent in steps

	backend backends.Backend
	h0      [][]float64
	step    *mlmodel.Exec
}

// New prepares a standard GPLVM for x [N, D] with latents initialised by PCA. Errors: empty,
// ragged or non-finite data, Q > D, an unknown kernel.
func New(cfg Config, x [][]float64, b backends.Backend) (*Model, error) {
	if len(x) == 0 || len(x[0]) == 0 {
		return nil, fmt.Errorf("standard: empty data")
	}
	d := len(x[0])
	total, count := 0.0, 0.0
	if err := data.CheckMatrix(x, nil); err != nil {
		return nil, fmt.Errorf("standard: the standard GPLVM needs fully observed data: %w", err)
	}
	if cfg.Q < 1 || cfg.Q > d {
		return nil, fmt.Errorf("standard: Q = %d, want 1 <= Q <= D = %d", cfg.Q, d)
	}
	if cfg.Kernel == "" {
		cfg.Kernel = "se"
	}
	if cfg.LR == 0 {
		cfg.LR = 0.02
	}
	if cfg.Noise0 == 0 {
		cfg.Noise0 = 0.1
	}
	for j := 0; j < d; j++ {
		mean := 0.0
		for _, r := range x {
			mean += r[j] / float64(len(x))
		}
		for _, r := range x {
			total += (r[j] - mean) * (r[j] - mean) / float64(len(x))
		}
		count++
	}
	dataVar := total / count
	kern, err := kernels.New(cfg.Kernel, kernels.Config{Q: cfg.Q, Variance: dataVar, Lengthscale: 1})
	if err != nil {
		return nil, err
	}
	h0, err := latent.PCA(x, cfg.Q)
	if err != nil {
		return nil, err
	}
	m := &Model{Cfg: cfg, X: x, GP: &GP{Kernel: kern, Lik: &gp.Gaussian{NoiseVariance0: cfg.Noise0 * dataVar}},
		Ctx: mlmodel.NewStore().RootScope(), backend: b, h0: h0}
	opt := optimizers.Adam().LearningRate(cfg.LR).Done()
	m.step, err = mlmodel.NewExec(b, m.Ctx.Store(), func(ctx *mlmodel.Scope, xn *Node) *Node {
		loss := DivScalar(Neg(m.GP.LogJoint(ctx, xn, m.latents(ctx, xn.Graph()))), float64(len(x)))
		opt.UpdateGraph(ctx, xn.Graph(), loss)
		return loss
	})
	if err != nil {
		return nil, fmt.Errorf("standard: %w", err)
	}
	return m, nil
}

func (m *Model) latents(ctx *mlmodel.Scope, g *Graph) *Node {
	return vars.New(ctx.At("standard"), "latent", m.h0).ValueGraph(g)
}

// Run takes iters Adam steps on -log p(X, H) / N, calling observe (when not nil) after each with
// the iterations done and that step's objective (nats per point). A non-finite objective stops
// the run with an *option.Diverged naming the iteration.
func (m *Model) Run(iters int, observe func(iter int, objective float64)) error {
	x := m.X
	for i := 0; i < iters; i++ {
		start := time.Now()
		out, err := m.step.Exec(x)
		if err != nil {
			return fmt.Errorf("standard: iteration %d: %w", m.Iter+1, err)
		}
		v := vars.Flat64(out[0])[0]
		m.Seconds += time.Since(start).Seconds()
		m.Iter++
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return option.Divergedf(m.Iter, "standard: the fit diverged at iteration %d: objective is %g (kernel matrix not positive definite after jitter?)", m.Iter, v)
		}
		m.Curve = append(m.Curve, v)
		if observe != nil {
			observe(m.Iter, v)
		}
	}
	return nil
}

// Evaluation are the Table 5 metrics of a standard GPLVM on its training data.
type Evaluation struct {
	// NegLogMarginal is -log p(X | H) / N (nats per point) at the fitted H.
	NegLogMarginal float64 `json:"neg_log_marginal_per_point"`
	// MSE is the mean squared error of the posterior mean of f at the fitted latents.
	MSE float64 `json:"mse"`
	// NELL is -(1/N) sum_n l_n with l_n the expected log-likelihood under the exact posterior of f
	// (the same definition as the Bayesian GPLVMs' NELL, with the exact instead of the sparse
	// posterior).
	NELL       float64     `json:"nell_per_point"`
	OneNNError *float64    `json:"one_nn_error,omitempty"`
	Latent     [][]float64 `json:"-"` // fitted H [N, Q]
	Recon      [][]float64 `json:"-"` // posterior means [N, D]
}

// Evaluate computes the metrics (labels may be nil).
func (m *Model) Evaluate(labels []int) (*Evaluation, error) {
	exec, err := mlmodel.NewExec(m.backend, m.Ctx.Store(), func(ctx *mlmodel.Scope, xn *Node) []*Node {
		h := m.latents(ctx, xn.Graph())
		ell, mean := m.GP.ExpectedLogLik(ctx, xn, h)
		return []*Node{m.GP.LogMarginal(ctx, xn, h), ell, mean, h}
	})
	if err != nil {
		return nil, fmt.Errorf("standard: evaluate: %w", err)
	}
	out, err := exec.Exec(m.X)
	if err != nil {
		return nil, fmt.Errorf("standard: evaluate: %w", err)
	}
	n := float64(len(m.X))
	ev := &Evaluation{NegLogMarginal: -vars.Flat64(out[0])[0] / n}
	for _, v := range vars.Flat64(out[1]) {
		ev.NELL -= v / n
	}
	ev.Recon, ev.Latent = rows(out[2].Shape().Dim(1), vars.Flat64(out[2])), rows(m.Cfg.Q, vars.Flat64(out[3]))
	if ev.MSE, err = metrics.MSE(m.X, ev.Recon, nil); err != nil {
		return nil, err
	}
	if labels != nil {
		e := metrics.OneNNError(ev.Latent, labels)
		ev.OneNNError = &e
	}
	return ev, nil
}

// SecondsPerIter is the mean wall time of a step.
func (m *Model) SecondsPerIter() float64 {
	if m.Iter == 0 {
		return 0
	}
	return m.Seconds / float64(m.Iter)
}

func rows(c int, flat []float64) [][]float64 {
	out := make([][]float64, len(flat)/c)
	for i := range out {
		out[i] = flat[i*c : (i+1)*c]
	}
	return out
}
