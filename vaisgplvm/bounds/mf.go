package bounds

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

// MF is the mean-field bound (paper Eq. 3):
//
//	L_n = E_q0[l_n(h)] - KL(q0(h_n) || p(h_n)),
//
// estimated with S reparameterised samples h = a_n + L_n eps (eps [S, B, Q]). With
// MonteCarloKL the KL term is estimated on the same samples, log q0(h) - log p(h), instead of
// in closed form.
func MF(b *Batch, eps *Node, monteCarloKL bool) *Result {
	h := b.Q0.Sample(eps)
	ll := b.LogLik(h) // [S, B]
	var per *Node
	if monteCarloKL {
		per = ReduceMean(Sub(b.LogJoint(h), b.Q0.LogProbWhitened(eps)), 0)
	} else {
		per = Sub(ReduceMean(ll, 0), b.Q0.KLToPrior())
	}
	return &Result{PerPoint: per, ELBO: b.ELBO(per), Recon: b.Q0.Mean}
}
