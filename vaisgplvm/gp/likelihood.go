package gp

import (
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// Gaussian is the likelihood x_nd = f_d(h_n) + e, e ~ N(0, s^2), with a learned noise variance s^2
// (data scale squared) stored as softplus(raw_noise_variance) under scope "likelihood".
type Gaussian struct {
	NoiseVariance0 float64 // initial s^2 > 0
}

// NoiseVarianceFloor is the smallest noise variance s^2 the likelihood allows (data scale squared):
// s^2 = softplus(raw) + NoiseVarianceFloor.
const NoiseVarianceFloor = 1e-6

// NoiseVariance returns s^2 (a scalar node), at least NoiseVarianceFloor.
func (lk *Gaussian) NoiseVariance(ctx *mlmodel.Scope, g *Graph) *Node {
	v := vars.New(ctx.At("likelihood"), "raw_noise_variance", vars.InvSoftplus(lk.NoiseVariance0))
	return AddScalar(Softplus(v.ValueGraph(g)), NoiseVarianceFloor)
}

// GaussianTerms are the nodes of one graph that every evaluation of the expected log-likelihood
// shares: the noise variance s^2 and the log normaliser -0.5 log(2 pi s^2). Build them once per
// graph with Gaussian.Terms and evaluate l_n through them as often as needed: the annealed chain
// evaluates l_n K+1 times per bound, and a copy of s^2 per evaluation adds ~40 graph ops per
// annealing step with its first- and second-order gradients.
type GaussianTerms struct {
	NoiseVariance *Node // s^2 (scalar)
	LogNorm       *Node // -0.5 log(2 pi s^2) (scalar), nats
	twoS2         *Node // 2 s^2
}

// Terms builds the GaussianTerms of graph g (variables under ctx, as NoiseVariance).
func (lk *Gaussian) Terms(ctx *mlmodel.Scope, g *Graph) *GaussianTerms {
	s2 := lk.NoiseVariance(ctx, g)
	return &GaussianTerms{NoiseVariance: s2, LogNorm: MulScalar(Log(MulScalar(s2, 2*math.Pi)), -0.5), twoS2: MulScalar(s2, 2)}
}

// ExpectedLogLik is GaussianTerms.ExpectedLogLik with terms built for this call (see Terms).
func (lk *Gaussian) ExpectedLogLik(ctx *mlmodel.Scope, p *Posterior, x, mask, h *Node) *Node {
	return lk.Terms(ctx, h.Graph()).ExpectedLogLik(p, x, mask, h)
}

// ExpectedLogLikProjected is GaussianTerms.ExpectedLogLikProjected with terms built for this call.
func (lk *Gaussian) ExpectedLogLikProjected(ctx *mlmodel.Scope, p *Posterior, pr *Projected, h *Node) *Node {
	return lk.Terms(ctx, h.Graph()).ExpectedLogLikProjected(p, pr, h)
}

// ExpectedLogLik returns l_n(h) = sum_d mask_nd E_q(f_d)[log N(x_nd | f_d(h_n), s^2)], [N]:
//
//	E[log N(x | f, s^2)] = log N(x | mean, s^2) - var / (2 s^2)
//
// x: [N, D] data; mask: [N, D] (1 = observed, 0 = missing) or nil for fully observed data;
// h: [N, Q] latent points. Missing entries drop out entirely (paper App. E).
func (t *GaussianTerms) ExpectedLogLik(p *Posterior, x, mask, h *Node) *Node {
	if mask == nil {
		m := p.Predict(h, false)
		sq := Square(Sub(x, m.Mean)) // [N, D]
		d := float64(p.In.D)
		quad := Div(Add(ReduceSum(sq, -1), m.VarSum), t.twoS2)
		return Sub(MulScalar(Add(ZerosLike(quad), t.LogNorm), d), quad)
	}
	mean, varSum := p.MaskedMarginals(h, mask)
	sq := ReduceSum(Mul(Square(Sub(x, mean)), mask), -1) // [N]
	observed := ReduceSum(mask, -1)
	return Sub(Mul(observed, t.LogNorm), Div(Add(sq, varSum), t.twoS2))
}

// ExpectedLogLikProjected is ExpectedLogLik for data given as Projected statistics pr (rows
// matching h [N, Q]): the same l_n [N], computed from ExpectedSqError instead of the [N, D]
// predictive means.
func (t *GaussianTerms) ExpectedLogLikProjected(p *Posterior, pr *Projected, h *Node) *Node {
	e := p.ExpectedSqError(h, pr)
	var norm *Node
	if pr.Observed == nil {
		norm = Add(ZerosLike(e), MulScalar(t.LogNorm, float64(p.In.D)))
	} else {
		norm = Mul(pr.Observed, t.LogNorm)
	}
	return Sub(norm, Div(e, t.twoS2))
}
