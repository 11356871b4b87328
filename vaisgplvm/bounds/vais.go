package bounds

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
)

// VAIS is the variational annealed importance sampling bound (paper Eqs. 10-21). S independent
// chains start at H_0 ~ q0 (eps0 [S, B, Q]) and take K annealed Langevin steps (chainEps: K nodes
// [S, B, Q]) with schedule betas [K] and step sizes etas [K]:
//
//	L_n = log (1/S) sum_s exp(l_n(H_K) + log p(H_K) - log q0(H_0) - sum_k R_{k-1})
//
// With S = 1 this is the paper's bound. See anneal.Run for the transitions and weights.
func VAIS(b *Batch, eps0 *Node, chainEps []*Node, betas, etas *Node, opt anneal.Options) (*Result, *anneal.Chain) {
	h0 := b.Q0.Sample(eps0)
	c := anneal.Run(h0, chainEps, betas, etas, b.logJoint, b.Q0.LogProb, opt)
	per := anneal.LogMeanExp(c.LogW)
	return &Result{PerPoint: per, ELBO: total(b, per), Recon: weightedMean(c.LogW, c.HK), LogW: c.LogW, HK: c.HK}, c
}
