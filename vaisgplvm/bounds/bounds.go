// Package bounds implements the three lower bounds on log p(X) of the Bayesian GPLVM:
// mean-field (MF, paper Eq. 3), importance-weighted (IWVI, Salimbeni et al. 2019) and
// variational annealed importance sampling (VAIS, paper Eqs. 10-21).
//
// Each bound returns per-point terms L_n for a batch of B points and the total
//
//	L = (N/B) sum_{n in batch} L_n - KL(q(u) || p(u)),
//
// an unbiased estimate (over the batch) of the bound on log p(X), in nats.
package bounds

import (
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
)

// Batch is what every bound needs about the current batch of B points.
type Batch struct {
	N      int                 // total number of data points
	Q0     *latent.Q0          // q0(h_n) of the batch
	LogLik func(h *Node) *Node // l_n(h): [S, B, Q] -> [S, B] (expected log-likelihood under q(f))
	KLU    *Node               // KL(q(u) || p(u)), scalar
}

// Result is a bound evaluated on a batch.
type Result struct {
	PerPoint *Node // L_n: [B]
	ELBO     *Node // (N/B) sum L_n - KL(q(u)||p(u)): scalar
	// Recon is the latent used for reconstruction, [B, Q]: the mean a_n (MF), the self-normalised
	// importance-weighted mean of the samples (IWVI), or of the chain ends H_K (VAIS).
	Recon *Node
	// LogW are the log importance weights [S, B] (nil for MF).
	LogW *Node
	// Particles are the points [S, B, Q] that LogW weighs: IWVI's samples, the ends H_K of the
	// annealed chains (nil for MF). With LogW they make the posterior predictive mixture
	// (model.PredictMixture).
	Particles *Node
}

// ELBO returns the batch's estimate of the bound from its per-point terms L_n [B]:
// (N/B) sum_n L_n - KL(q(u) || p(u)), a scalar in nats.
func (b *Batch) ELBO(perPoint *Node) *Node {
	bs := perPoint.Shape().Dim(0)
	return Sub(MulScalar(ReduceSum(perPoint, 0), float64(b.N)/float64(bs)), b.KLU)
}

// LogJoint returns log p(x_n, h) = l_n(h) + log p(h) for h [S, B, Q]: [S, B].
func (b *Batch) LogJoint(h *Node) *Node {
	return Add(b.LogLik(h), latent.LogPrior(h))
}

// WeightedMean returns sum_s softmax(logW)_s h_s: logW [S, B], h [S, B, Q] -> [B, Q], under
// StopGradient in the weights (the reconstruction latent of an importance-weighted bound).
func WeightedMean(logW, h *Node) *Node {
	w := StopGradient(Softmax(logW, 0))
	return ReduceSum(Mul(InsertAxes(w, -1), h), 0)
}

// LogMeanExp returns log (1/S) sum_s exp(x_s) along axis 0 of x [S, B]: [B], stably
// (the maximum is subtracted under StopGradient, so the gradient is the softmax-weighted one).
func LogMeanExp(x *Node) *Node {
	s := x.Shape().Dim(0)
	m := StopGradient(ReduceMax(x, 0))
	lse := Add(Log(ReduceSum(Exp(Sub(x, InsertAxes(m, 0))), 0)), m)
	return AddScalar(lse, -math.Log(float64(s)))
}
