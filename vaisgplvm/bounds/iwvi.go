package bounds

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

// IWVI is the importance-weighted bound with K samples h_k ~ q0(h_n) (eps [K, B, Q]) and one
// weight per data point over all D outputs:
//
//	L_n = log (1/K) sum_k exp(l_n(h_k) + log p(h_k) - log q0(h_k)).
//
// (The paper's Eq. 5 writes the weight per (n, d), which would count p(h)/q0(h) D times.)
func IWVI(b *Batch, eps *Node) *Result {
	h := b.Q0.Sample(eps)
	logW := Sub(b.LogJoint(h), b.Q0.LogProbWhitened(eps)) // [K, B]; exact log q0(h), see latent.Q0.LogProb
	per := LogMeanExp(logW)
	return &Result{PerPoint: per, ELBO: b.ELBO(per), Recon: WeightedMean(logW, h), LogW: logW, Particles: h}
}
