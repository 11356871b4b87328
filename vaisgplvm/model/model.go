package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vaisgplvm/vaisgplvm/data"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// Model is a Bayesian GPLVM for data X [N, D] with an optional observation mask [N, D].
type Model struct {
	Cfg      Config
	N, D     int
	X        [][]float64 // [N, D], data scale
	Mask     [][]float64 // [N, D] 1 = observed, or nil
	Kernel   kernels.Kernel
	Inducing *gp.Inducing
	Lik      *gp.Gaussian
	Latent   *latent.Config
	Schedule anneal.Schedule
	Step     anneal.StepSize
	// Method is the bound named by Cfg.Method (bounds.Lookup): what differs between MF, IWVI and
	// VAIS (noise shapes, weights, reconstruction latent, ceiling).
	Method bounds.Method
}

// New builds a model: q0 means from PCA, Z from a seeded random subset of them, kernel variance
// and noise variance from the data variance. Errors name bad shapes, NaNs or settings.
func New(cfg Config, x, mask [][]float64) (*Model, error) { return NewWith(cfg, x, mask, Components{}) }

// Components are a model's kernel and bound given as values, beside the registries that
// Config.Kernel and Config.Method name (kernels.Register..., bounds.Register): a part left nil
// comes from its registry. A model made with a part given here has that part's name in its
// Config; its checkpoint loads only where that name is registered.
type Components struct {
	// Kernel makes the kernel from kernels.New's settings (Q, the initial variance and
	// lengthscale), e.g. a type of your own that implements kernels.Kernel.
	Kernel func(kernels.Config) (kernels.Kernel, error)
	// Bound is the bound to train, e.g. a type of your own that implements bounds.Method.
	Bound bounds.Method
}

// NewWith is New with the kernel or the bound given as values (Components); Config.Kernel and
// Config.Method become their names.
func NewWith(cfg Config, x, mask [][]float64, parts Components) (*Model, error) {
	if parts.Bound != nil {
		cfg.Method = parts.Bound.Name()
	}
	if parts.Kernel != nil {
		k, err := parts.Kernel(kernels.Config{Q: max(cfg.Q, 1), Variance: 1, Lengthscale: 1})
		if err != nil {
			return nil, option.Of("Kernel", "Kernel: %v", err)
		}
		cfg.Kernel = k.Name()
	}
	if err := cfg.validateWith(parts); err != nil {
		return nil, err
	}
	if err := data.CheckMatrix(x, mask); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	n, d := len(x), len(x[0])
	if cfg.Q > d {
		return nil, fmt.Errorf("model: Q = %d exceeds the data dimension D = %d", cfg.Q, d)
	}
	if cfg.M > n {
		return nil, fmt.Errorf("model: M = %d inducing points exceeds N = %d", cfg.M, n)
	}
	if cfg.Batch > n {
		return nil, fmt.Errorf("model: batch %d exceeds N = %d", cfg.Batch, n)
	}
	if err := cfg.CheckMemory(n, d); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	mean0, err := latent.PCA(fillMissing(x, mask), cfg.Q)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	z0 := make([][]float64, cfg.M)
	for i, j := range rng.Perm(n)[:cfg.M] {
		z0[i] = append([]float64(nil), mean0[j]...)
	}
	dataVar := meanColumnVariance(x, mask)
	kern, err := parts.kernel(cfg.Kernel)(kernels.Config{Q: cfg.Q, Variance: dataVar, Lengthscale: 1})
	if err != nil {
		return nil, err
	}
	m := &Model{
		Cfg: cfg, N: n, D: d, X: x, Mask: mask, Kernel: kern,
		Inducing: &gp.Inducing{M: cfg.M, D: d, Q: cfg.Q, Whitened: cfg.Whitened, Z0: z0, Jitter: cfg.Jitter,
			UnwhitenedScale: math.Sqrt(dataVar), SharedSqrt: cfg.SharedQSqrt},
		Lik:    &gp.Gaussian{NoiseVariance0: cfg.Noise0 * dataVar},
		Latent: &latent.Config{N: n, Q: cfg.Q, Diagonal: cfg.DiagQ0, Mean0: mean0, Scale0: cfg.Scale0},
		Step:   cfg.StepRule(),
	}
	if m.Method = parts.Bound; m.Method == nil {
		if m.Method, err = bounds.Lookup(cfg.Method); err != nil {
			return nil, err
		}
	}
	if _, err = bounds.ResolveSettings(m.Method, cfg.BoundSettings); err != nil {
		return nil, err
	}
	if cfg.MeanBias {
		m.Inducing.Bias0 = make([]float64, d)
		for j := range m.Inducing.Bias0 {
			m.Inducing.Bias0[j] = columnMean(x, mask, j)
		}
	}
	if m.Method.Annealed() {
		if m.Schedule, err = anneal.ParseSchedule(cfg.Schedule); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// DType returns the model's floating-point dtype (Float64 unless Cfg.DType is "float32").
func (m *Model) DType() dtypes.DType { return vars.DTypeNamed(m.Cfg.DType) }

// BatchSize returns B (N for full batch).
func (m *Model) BatchSize() int {
	if m.Cfg.Batch == 0 {
		return m.N
	}
	return m.Cfg.Batch
}

// NoiseShapes returns the shapes of the two noise inputs of Bound: eps0 [S, B, Q] and the chain
// noise [steps, S, B, Q], with S and steps from the bound (bounds.Method.Draws, ChainSteps: for MF S
// is Samples, for IWVI K, for VAIS Samples chains of K steps).
func (m *Model) NoiseShapes(b int) (eps0, chain []int) {
	s, sz := m.Method.Draws(m.sizes()), m.sizes()
	return []int{s, b, m.Cfg.Q}, []int{m.Method.ChainSteps(sz), s, b, m.Cfg.Q}
}

// Bound evaluates the configured bound on a batch. x: [B, D]; mask: [R, D], the mask of the first
// R <= B rows, the others fully observed (R < B only as ArrangeBatch arranges it), or nil when the
// model has none; idx: [B] int32 point indices; eps0 and chainEps as in NoiseShapes.
func (m *Model) Bound(ctx *mlmodel.Scope, x, mask, idx, eps0, chainEps *Node) (*bounds.Result, *anneal.Chain) {
	g := x.Graph()
	b := m.BatchFor(ctx, x, mask, idx)
	k := max(m.Cfg.K, 1)
	return m.Method.Evaluate(b, bounds.Inputs{Sizes: m.sizes(), Eps0: eps0, ChainEps: chainEps,
		Anneal: func() (betas, etas *Node) {
			betas = ConvertDType(m.Schedule.Betas(ctx, g, k), x.DType())
			etas = ConvertDType(m.Step.Etas(ctx, g, k), x.DType())
			if f := m.PointEtaFactors(ctx, g, idx); f != nil {
				etas = Mul(InsertAxes(etas, -1), InsertAxes(ConvertDType(f, x.DType()), 0)) // [K, B]
			}
			return betas, etas
		},
		Options:  anneal.Options{StopScoreGradient: m.Cfg.StopGrad, Precondition: m.Cfg.Precondition, Tamed: m.Cfg.Tamed},
		STL:      m.Cfg.STL,
		Scope:    BoundScope(ctx, m.Method.Name()),
		Settings: m.Settings()})
}

// BoundScope is the scope of the bound method's own parameters under a model's root scope ctx:
// bound/METHOD (the underdamped bound's damping and mass, for instance).
func BoundScope(ctx *mlmodel.Scope, method string) *mlmodel.Scope {
	return ctx.At("bound").At("%s", method)
}

// WithBound returns a copy of m that evaluates the bound method with K = k and the bound settings
// given (nil: the bound's defaults), for evaluating other bounds at m's parameters (package
// evidence). The copy shares m's data and parameters' initial values; the schedule and step-size
// rule of an annealed m carry over to an annealed method. Errors: an unknown method, settings
// the method refuses, sizes it refuses.
func (m *Model) WithBound(method string, k int, settings map[string]float64) (*Model, error) {
	meth, err := bounds.Lookup(method)
	if err != nil {
		return nil, err
	}
	mm := *m
	mm.Cfg.Method, mm.Cfg.K, mm.Method, mm.Cfg.BoundSettings = method, k, meth, settings
	if err := meth.Validate(bounds.Sizes{K: k, Samples: mm.Cfg.Samples}); err != nil {
		return nil, err
	}
	if _, err = bounds.ResolveSettings(meth, settings); err != nil {
		return nil, err
	}
	if meth.Annealed() && mm.Schedule == nil {
		if mm.Schedule, err = anneal.ParseSchedule(mm.Cfg.Schedule); err != nil {
			return nil, err
		}
	}
	return &mm, nil
}

// Settings returns the bound's settings, defaults filled in (bounds.ResolveSettings of
// Cfg.BoundSettings, which New and WithBound checked; empty for a bound without settings).
func (m *Model) Settings() map[string]float64 {
	s, _ := bounds.ResolveSettings(m.Method, m.Cfg.BoundSettings)
	return s
}

// sizes returns the bound's sizes of the configuration.
func (m *Model) sizes() bounds.Sizes { return bounds.Sizes{K: m.Cfg.K, Samples: m.Cfg.Samples} }

// AdaptStep adds to the training step's graph the adaptive step-size updates (eta_k and, with
// PointEta, the per-point factors of the batch idx [B]) from the chain of that step's bound.
func (m *Model) AdaptStep(ctx *mlmodel.Scope, c *anneal.Chain, idx *Node) {
	m.Step.Adapt(ctx, c)
	m.Step.AdaptPoints(m.pointScope(ctx), c, idx, m.N)
}

// PointEtaFactors returns the per-point step-size factors s_n of the points idx [B] (int32): [B],
// or nil without Cfg.PointEta (see anneal.StepSize.PerPoint).
func (m *Model) PointEtaFactors(ctx *mlmodel.Scope, g *Graph, idx *Node) *Node {
	if !m.Step.PerPoint {
		return nil
	}
	return anneal.PointScales(m.pointScope(ctx), g, m.N, idx)
}

// pointScope is where the per-point step-size factors live: with the latents, so that a model
// fitted to new points (package infer) starts its own.
func (m *Model) pointScope(ctx *mlmodel.Scope) *mlmodel.Scope {
	return ctx.At("latent")
}

// BatchFor returns what the bounds need for the batch idx [B] with data x [B, D] and mask (as in
// Bound).
func (m *Model) BatchFor(ctx *mlmodel.Scope, x, mask, idx *Node) *bounds.Batch {
	post := gp.NewPosterior(ctx, x.Graph(), m.Inducing, m.Kernel)
	lik := m.Lik.Terms(ctx, x.Graph())
	bt := &bounds.Batch{
		N:   m.N,
		Q0:  latent.Batch(ctx, x.Graph(), m.Latent, idx),
		KLU: post.KL(),
	}
	switch b := x.Shape().Dim(0); {
	case mask == nil && m.ProjectedFit(b, 0):
		bt.LogLik = projectedLogLik(lik, post, post.Project(x))
		return bt
	case mask != nil && mask.Shape().Dim(0) < b: // see ArrangeBatch
		bt.LogLik = projectedLogLik(lik, post, post.ProjectMasked(x, mask))
		return bt
	}
	tiles := map[int][2]*Node{} // x and mask tiled for S samples, built once per S
	bt.LogLik = func(h *Node) *Node {
		s := h.Shape().Dim(0)
		t, ok := tiles[s]
		if !ok {
			t = [2]*Node{m.tile(x, s), m.tile(mask, s)}
			tiles[s] = t
		}
		return logLik(lik, post, t[0], t[1], h)
	}
	return bt
}

// projectedLogLik returns l_n(h) for h [S, B, Q] -> [S, B] from the batch reduced to Projected
// statistics (gp.Projected: O(M^2) per point, plus O(M D) per masked one, instead of O(M D) per
// point), tiled once per S.
func projectedLogLik(lik *gp.GaussianTerms, post *gp.Posterior, pr *gp.Projected) func(h *Node) *Node {
	tiles := map[int]*gp.Projected{}
	return func(h *Node) *Node {
		s, b, q := h.Shape().Dim(0), h.Shape().Dim(1), h.Shape().Dim(2)
		t, ok := tiles[s]
		if !ok {
			t = pr.Tile(s)
			tiles[s] = t
		}
		return Reshape(lik.ExpectedLogLikProjected(post, t, Reshape(h, s*b, q)), s, b)
	}
}

// ProjectedFit reports whether the bounds on a batch of b points, r of them with missing entries,
// evaluate the expected log-likelihood from projected data (gp.Projected; cost O(M^2) per latent
// point, plus O(M D) for each masked one, instead of O(M D) per point) rather than from [B, D]
// predictive means: when the data has more dimensions than inducing points and the bound
// evaluates enough latent points per data point for it to pay (gp.Inducing.ProjectionPays).
// Both give the same values and gradients to rounding.
func (m *Model) ProjectedFit(b, r int) bool {
	return m.Inducing.ProjectionPays(b, m.evaluations()*b, r)
}

// UsesProjectedFit reports whether Bound takes the projected fit for a batch of b points whose
// mask, as train.Inputs builds it with ArrangeBatch, has maskRows rows (ignored when the model has
// no mask): the same choice as BatchFor, for reports and tests.
func (m *Model) UsesProjectedFit(b, maskRows int) bool {
	if m.Mask == nil {
		return m.ProjectedFit(b, 0)
	}
	return maskRows < b
}

// evaluations returns how many latent points per data point one bound evaluates l_n at
// (bounds.Method.Evaluations: S samples for MF, K for IWVI, S chains x (K+1) states for VAIS).
func (m *Model) evaluations() int { return m.Method.Evaluations(m.sizes()) }

// BoundCeiling returns a value, in nats per data point, that no correctly computed bound of this
// model can exceed: a training step whose bound does is a numerical failure (for example rounding
// that the optimiser has learned to exploit), not a fit. Every bound's per-point term is at most
// its largest log weight, and every log weight is at most
//
//	max_f log N(x_n | f, s^2) + log|L_n| + 0.5 sum_k |eps_k|^2
//
// (MF's Monte Carlo KL, IWVI: log p(h) - log q0(a + L eps) <= 0.5 |eps|^2 + log|L_n|; VAIS adds
// -R_{k-1} <= 0.5 |eps_{k-1}|^2 per transition), with max_f log N(x_n | f, s^2) =
// (D/2) log(1 / (2 pi s^2)) <= (D/2) log(1 / (2 pi gp.NoiseVarianceFloor)), and KL(q(u)||p(u)) >= 0.
// The noise terms 0.5 |eps_k|^2 average Q/2 each; the ceiling allows 10 Q per draw (K + 1 draws for
// VAIS, 1 otherwise), which also covers log|L_n| up to several nats per latent dimension.
func (m *Model) BoundCeiling() float64 {
	draws := m.Method.CeilingDraws(m.sizes())
	lik := 0.5 * float64(m.D) * math.Log(1/(2*math.Pi*gp.NoiseVarianceFloor))
	return lik + 10*float64(m.Cfg.Q*draws)
}

// tile repeats v [B, D] for s samples: [s*B, D] (v itself when s == 1 or v is nil).
func (m *Model) tile(v *Node, s int) *Node {
	if v == nil || s == 1 {
		return v
	}
	b := v.Shape().Dim(0)
	return Reshape(BroadcastToDims(InsertAxes(v, 0), s, b, m.D), s*b, m.D)
}

// logLik evaluates l_n(h) for h [S, B, Q] by flattening the samples, with x and mask already
// tiled to [S*B, D]: [S, B].
func logLik(lik *gp.GaussianTerms, post *gp.Posterior, x, mask, h *Node) *Node {
	s, b, q := h.Shape().Dim(0), h.Shape().Dim(1), h.Shape().Dim(2)
	return Reshape(lik.ExpectedLogLik(post, x, mask, Reshape(h, s*b, q)), s, b)
}

// Predict returns the predictive mean [N, D] of f at latent points h [N, Q] and the expected
// log-likelihood l_n(h) [N] of x (mask may be nil, or cover only the first rows: ArrangeBatch).
func (m *Model) Predict(ctx *mlmodel.Scope, x, mask, h *Node) (mean, ell *Node) {
	post := gp.NewPosterior(ctx, h.Graph(), m.Inducing, m.Kernel)
	mg := post.Predict(h, false)
	return mg.Mean, m.Lik.ExpectedLogLik(ctx, post, x, gp.ExpandMask(mask, h.Shape().Dim(0)), h)
}

// PredictMixture returns the posterior predictive of the self-normalised mixture over particles h
// [S, B, Q] with log weights logW [S, B] (an importance-weighted bound's samples, an annealed
// bound's chain ends): its mean sum_s w_s E[f(h_s)] [B, D], and the mixture's expected
// log-likelihood log sum_s w_s exp(l_n(h_s)) [B] of x [B, D] (mask as for Predict), with
// w = softmax(logW) over s. With S = 1 both equal Predict's at h_1.
func (m *Model) PredictMixture(ctx *mlmodel.Scope, x, mask, h, logW *Node) (mean, ell *Node) {
	s, b, q := h.Shape().Dim(0), h.Shape().Dim(1), h.Shape().Dim(2)
	flat := Reshape(h, s*b, q)
	post := gp.NewPosterior(ctx, h.Graph(), m.Inducing, m.Kernel)
	means := Reshape(post.Predict(flat, false).Mean, s, b, m.D)
	ells := Reshape(m.Lik.ExpectedLogLik(ctx, post, m.tile(x, s), m.tile(gp.ExpandMask(mask, b), s), flat), s, b)
	logw := LogSoftmax(logW, 0) // [S, B]
	mean = ReduceSum(Mul(InsertAxes(Exp(logw), -1), means), 0)
	return mean, AddScalar(bounds.LogMeanExp(Add(logw, ells)), math.Log(float64(s))) // log-sum-exp over s
}

func fillMissing(x, mask [][]float64) [][]float64 {
	if mask == nil {
		return x
	}
	out := make([][]float64, len(x))
	for i := range x {
		out[i] = make([]float64, len(x[i]))
		for j := range x[i] {
			if mask[i][j] != 0 {
				out[i][j] = x[i][j]
			} else {
				out[i][j] = columnMean(x, mask, j)
			}
		}
	}
	return out
}

func columnMean(x, mask [][]float64, j int) float64 {
	s, c := 0.0, 0.0
	for i := range x {
		if mask == nil || mask[i][j] != 0 {
			s += x[i][j]
			c++
		}
	}
	if c == 0 {
		return 0
	}
	return s / c
}

// meanColumnVariance is the average over columns of the (observed) sample variance.
func meanColumnVariance(x, mask [][]float64) float64 {
	d := len(x[0])
	total := 0.0
	for j := 0; j < d; j++ {
		mu := columnMean(x, mask, j)
		s, c := 0.0, 0.0
		for i := range x {
			if mask == nil || mask[i][j] != 0 {
				s += (x[i][j] - mu) * (x[i][j] - mu)
				c++
			}
		}
		if c > 1 {
			total += s / (c - 1)
		}
	}
	v := total / float64(d)
	if !(v > 0) {
		v = 1
	}
	return v
}

// HasMask reports whether the data has missing entries marked by a mask.
func (m *Model) HasMask() bool { return m.Mask != nil }

// PixelLogLik returns the expected log-likelihood of every entry at the latent points h [S, B, Q]:
// E_q(f_d)[log N(x_nd | f_d(h_sn), s^2)] = log N(x_nd | mean_snd, s^2) - var_snd / (2 s^2), [S, B, D]
// in nats, and 0 where mask [B, D] is 0 (mask nil: every entry observed). Summed over d it is the
// l_n(h) of Bound; the per-entry terms are the "per-pixel" weights of Table 3's diagnostics.
func (m *Model) PixelLogLik(ctx *mlmodel.Scope, x, mask, h *Node) *Node {
	s, b, q := h.Shape().Dim(0), h.Shape().Dim(1), h.Shape().Dim(2)
	post := gp.NewPosterior(ctx, h.Graph(), m.Inducing, m.Kernel)
	terms := m.Lik.Terms(ctx, h.Graph())
	mg := post.Predict(Reshape(h, s*b, q), true)
	xt := m.tile(x, s) // [S*B, D]
	e := Sub(terms.LogNorm, Div(Add(Square(Sub(xt, mg.Mean)), mg.Var), MulScalar(terms.NoiseVariance, 2)))
	if mask != nil {
		e = Mul(e, m.tile(mask, s))
	}
	return Reshape(e, s, b, m.D)
}

// kernel returns the Kernel constructor, or kernels.New for the registered kernel name.
func (p Components) kernel(name string) func(kernels.Config) (kernels.Kernel, error) {
	if p.Kernel != nil {
		return p.Kernel
	}
	return func(c kernels.Config) (kernels.Kernel, error) { return kernels.New(name, c) }
}
