package anneal

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// Default settings of the adaptive step size (see StepSize.Adaptive).
const (
	DefaultTargetAccept = 0.8  // target mean Metropolis-Hastings acceptance rate of each transition
	DefaultAdaptRate    = 0.05 // Robbins-Monro gain on log eta_k per training iteration
	minLogEta           = -16  // adaptive log eta_k is kept in [minLogEta, maxLogEta]
	maxLogEta           = 2
	minLogScale         = -12 // per-point log s_n is kept in [minLogScale, maxLogScale]
	maxLogScale         = 4
)

// StepSize gives the Langevin step size eta (latent units squared; relative to q0's spread when the
// chain is preconditioned), one per transition: [K]. Three rules:
//
//   - fixed: eta_k = Eta0;
//
//   - Learned: log eta_k are trained with the other parameters by the bound's gradient
//     (variable "anneal/log_eta" [K], initialised at log Eta0);
//
//   - Adaptive: log eta_k (the same variable, not trained) follow the stochastic-approximation rule
//
//     log eta_k <- log eta_k + AdaptRate * (mean min(1, a_k) - TargetAccept)
//
//     once per training iteration, where a_k is the Metropolis-Hastings ratio of transition k under
//     its bridging density (Chain.LogAccept), averaged over the batch and the chains. The chain stays
//     unadjusted (nothing is rejected): the rule only shrinks eta_k where the Langevin move is far
//     from reversible (which is what makes the AIS weight noisy) and grows it where it is not.
//     Each eta_k stays a constant inside one evaluation of the bound, so the bound is valid for
//     every value the rule visits.
//
//   - PaperD: the paper's App. D rule,
//
//     eta_k = 0.9 eta_{k-1} + 0.1 Eta0 / sqrt(G_k + 1e-8),   eta_0 = Eta0,   G_k = sum_{j <= k} m_j,
//
//     with m_j the mean squared score of transition j (Chain.MeanSqScore). The paper takes G_k
//     along each chain, per dimension; a step size that depends on the chain's own states makes
//     the backward kernels depend on the states they are densities of, and the weight no longer
//     that of a valid bound. Here m_j is the mean over the chains, points and dimensions of the
//     previous training iteration's batch (variable "anneal/mean_sq_score" [K], not trained,
//     created at 1), so that eta_k is a constant inside one evaluation, as for the other rules.
//
// The Adaptive rule is ours (the acceptance-targeting adaptation of adaptive MCMC, Andrieu &
// Thoms 2008, Sec. 5); PaperD is the paper's.
type StepSize struct {
	Eta0     float64 // initial (or fixed) eta > 0
	Learned  bool    // learn log eta_k by gradient
	Adaptive bool    // adapt log eta_k toward TargetAccept (exclusive with Learned)
	PaperD   bool    // the paper's App. D rule (exclusive with Learned and Adaptive)
	// TargetAccept in (0, 1) and AdaptRate > 0 tune the adaptive rule (0: the defaults above).
	TargetAccept, AdaptRate float64
	// PerPoint (with Adaptive) multiplies every eta_k of point n by its own factor s_n, adapted
	// once per training iteration for the B points of the batch (out of N) by
	//
	//	log s_n <- log s_n + AdaptRate (N / B) (r_n - mean over the batch of r_m),  r_n = mean_k min(1, a_k,n)
	//
	// so that the points' chains move toward equal acceptance rates while eta_k sets the level. A
	// point is in one batch per epoch, so its gain is AdaptRate times the batches per epoch.
	// One global eta_k fits the typical point: where a point's posterior is much sharper than
	// the others', its chain steps far beyond stability (acceptance near 0) and its log weight,
	// which carries sum_k log a_k, is loose. Like eta_k, s_n is a constant inside one evaluation
	// of the bound. See PointScales and AdaptPoints.
	PerPoint bool
	// Scale, when not 0 or 1, multiplies every eta_k that the rule gives (for evaluating a trained
	// chain at other step sizes: evidence.ChainVariants). Training leaves it 0.
	Scale float64
}

// Validate reports a non-positive eta, both Learned and Adaptive, or adaptive settings out of range.
func (s StepSize) Validate() error {
	if !(s.Eta0 > 0) || math.IsInf(s.Eta0, 0) {
		return fmt.Errorf("anneal: step size eta must be positive and finite, got %g", s.Eta0)
	}
	if s.Learned && s.Adaptive {
		return fmt.Errorf("anneal: step size cannot be both learned and adaptive")
	}
	if s.PaperD && (s.Learned || s.Adaptive) {
		return fmt.Errorf("anneal: App. D's step-size rule excludes the learned and the adaptive ones")
	}
	if t := s.TargetAccept; t != 0 && !(t > 0 && t < 1) {
		return fmt.Errorf("anneal: target acceptance rate must be in (0, 1), got %g", t)
	}
	if r := s.AdaptRate; r != 0 && !(r > 0 && r <= 1) {
		return fmt.Errorf("anneal: adaptation rate must be in (0, 1], got %g", r)
	}
	if s.PerPoint && !s.Adaptive {
		return fmt.Errorf("anneal: per-point step sizes need the adaptive step size")
	}
	if !(s.Scale >= 0) || math.IsInf(s.Scale, 0) {
		return fmt.Errorf("anneal: step-size scale must be positive and finite (0 = 1), got %g", s.Scale)
	}
	return nil
}

// Etas returns eta_1..eta_K as a [K] node, times Scale when it is set.
func (s StepSize) Etas(ctx *mlmodel.Scope, g *Graph, k int) *Node {
	var etas *Node
	switch {
	case s.PaperD:
		etas = PaperDEtas(meanSqScoreVar(ctx, k).ValueGraph(g), s.Eta0)
	case !s.Learned && !s.Adaptive:
		etas = Exp(Const(g, s.initLogEta(k)))
	default:
		etas = Exp(s.logEtaVar(ctx, k).ValueGraph(g))
	}
	if s.Scale != 0 && s.Scale != 1 {
		etas = MulScalar(etas, s.Scale)
	}
	return etas
}

// Adapt adds to the graph the adaptive rule's update of log eta_k from the chain's acceptance rates
// (a no-op unless Adaptive, or when the chain has no transitions). Call it only in the training
// step: the new values are stored when the step's graph runs.
func (s StepSize) Adapt(ctx *mlmodel.Scope, c *Chain) {
	if s.PaperD {
		if m := c.MeanSqScore(); m != nil {
			v := meanSqScoreVar(ctx, m.Shape().Dim(0))
			v.SetValueGraph(ConvertDType(m, v.ValueGraph(m.Graph()).DType()))
		}
		return
	}
	if !s.Adaptive {
		return
	}
	rates := c.AcceptRates()
	if rates == nil {
		return
	}
	v := s.logEtaVar(ctx, rates.Shape().Dim(0))
	target, gain := orDefault(s.TargetAccept, DefaultTargetAccept), orDefault(s.AdaptRate, DefaultAdaptRate)
	logEta := v.ValueGraph(rates.Graph())
	step := MulScalar(AddScalar(ConvertDType(rates, logEta.DType()), -target), gain)
	v.SetValueGraph(ClipScalar(Add(logEta, step), minLogEta, maxLogEta))
}

// PointScales returns the per-point factors s_n of the points idx [B] (int32): [B], from the
// variable "log_eta_scale" [n] in ctx's scope (not trainable; created at 0, i.e. s_n = 1). The
// caller chooses the scope: the factors belong to the points, not to the model (model.Model keeps
// them with the latents, so that a model fitted to new points starts them afresh).
func PointScales(ctx *mlmodel.Scope, g *Graph, n int, idx *Node) *Node {
	return Exp(Gather(pointScaleVar(ctx, n).ValueGraph(g), InsertAxes(idx, -1)))
}

// AdaptPoints adds to the graph the update of log s_n for the points idx [B] of the batch (see
// PerPoint; a no-op unless PerPoint, or when the chain has no transitions). Call it only in the
// training step, with the ctx given to PointScales.
func (s StepSize) AdaptPoints(ctx *mlmodel.Scope, c *Chain, idx *Node, n int) {
	if !s.PerPoint || len(c.LogAccept) == 0 {
		return
	}
	var rate *Node // [B]: mean over transitions and chains of min(1, a_k,n)
	for _, la := range c.LogAccept {
		r := ReduceMean(Exp(MinScalar(la, 0)), 0)
		if rate == nil {
			rate = r
		} else {
			rate = Add(rate, r)
		}
	}
	rate = DivScalar(rate, float64(len(c.LogAccept)))
	v := pointScaleVar(ctx, n)
	old := v.ValueGraph(rate.Graph())
	gain := orDefault(s.AdaptRate, DefaultAdaptRate) * float64(n) / float64(idx.Shape().Dim(0))
	step := MulScalar(Sub(rate, ReduceAllMean(rate)), gain)
	upd := ScatterSum(ZerosLike(old), InsertAxes(idx, -1), ConvertDType(step, old.DType()), false, true)
	v.SetValueGraph(ClipScalar(Add(old, upd), minLogScale, maxLogScale))
}

// PaperDEtas returns App. D's step sizes [K] from the per-transition mean squared scores m [K]:
// eta_k = 0.9 eta_{k-1} + 0.1 eta0 / sqrt(G_k + 1e-8), eta_0 = eta0, G_k = m_1 + ... + m_k (under
// StopGradient: the step sizes are constants of the bound).
func PaperDEtas(m *Node, eta0 float64) *Node {
	m = StopGradient(m)
	k := m.Shape().Dim(0)
	var out []*Node
	var sum, prev *Node
	for i := 0; i < k; i++ {
		mi := element(m, i)
		if sum == nil {
			sum = mi
		} else {
			sum = Add(sum, mi)
		}
		next := MulScalar(Reciprocal(Sqrt(AddScalar(sum, 1e-8))), 0.1*eta0)
		if prev == nil {
			next = AddScalar(next, 0.9*eta0)
		} else {
			next = Add(next, MulScalar(prev, 0.9))
		}
		out = append(out, InsertAxes(next, 0))
		prev = next
	}
	return Concatenate(out, 0)
}

// meanSqScoreVar returns the variable "anneal/mean_sq_score" [k] (App. D's m_k), created at 1 if
// new, not trainable.
func meanSqScoreVar(ctx *mlmodel.Scope, k int) *mlmodel.Variable {
	scope := ctx.At("anneal")
	v := scope.GetVariable("mean_sq_score")
	if v == nil {
		init := make([]float64, k)
		for i := range init {
			init[i] = 1
		}
		v = vars.New(scope, "mean_sq_score", init)
	}
	v.SetTrainable(false)
	return v
}

// pointScaleVar returns the variable "log_eta_scale" [n] of ctx's scope, created at 0 if new.
func pointScaleVar(ctx *mlmodel.Scope, n int) *mlmodel.Variable {
	v := ctx.GetVariable("log_eta_scale")
	if v == nil {
		v = vars.New(ctx, "log_eta_scale", make([]float64, n))
	}
	v.SetTrainable(false)
	return v
}

// logEtaVar returns the variable "anneal/log_eta" [k], created at log Eta0 if new (not trainable
// when Adaptive).
func (s StepSize) logEtaVar(ctx *mlmodel.Scope, k int) *mlmodel.Variable {
	scope := ctx.At("anneal")
	v := scope.GetVariable("log_eta")
	if v == nil {
		v = vars.New(scope, "log_eta", s.initLogEta(k))
	}
	if s.Adaptive {
		v.SetTrainable(false)
	}
	return v
}

func (s StepSize) initLogEta(k int) []float64 {
	init := make([]float64, k)
	for i := range init {
		init[i] = math.Log(s.Eta0)
	}
	return init
}

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}
