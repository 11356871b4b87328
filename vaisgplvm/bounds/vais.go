package bounds

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
)

// VAIS is the variational annealed importance sampling bound (paper Eqs. 10-21). S independent
// chains start at H_0 ~ q0 (eps0 [S, B, Q]) and take K annealed Langevin steps (chainEps: K nodes
// [S, B, Q]) with schedule betas [K] and step sizes etas [K]:
//
//	L_n = log (1/S) sum_s exp(l_n(H_K) + log p(H_K) - log q0(H_0) - sum_k R_{k-1})
//
// With S = 1 this is the paper's bound. See anneal.Run for the transitions and weights.
//
// With opt.Precondition the chain runs in q0's whitened coordinates z = L_n^-1 (h - a_n)
// (z_0 = eps0, target log p(x, a_n + L_n z), reference log q0(a_n + L_n z)); the returned chain
// (H0, HK, Path) is mapped back to h. The weight is the same function of (h_0, h_K, R) because
// the Jacobian |L_n| of the affine map is the same for both densities. Without it (the paper's
// plain Langevin), log q0 and its score at the chain's points go through L_n^-1, which loses
// accuracy when L_n is ill-conditioned (see latent.Q0.LogProb).
func VAIS(b *Batch, eps0 *Node, chainEps []*Node, betas, etas *Node, opt anneal.Options) (*Result, *anneal.Chain) {
	var c *anneal.Chain
	if opt.Precondition {
		c = inWhitened(b, func(joint, ref anneal.LogDensity) *anneal.Chain {
			return anneal.Run(eps0, chainEps, betas, etas, joint, ref, opt)
		})
	} else {
		c = anneal.Run(b.Q0.Sample(eps0), chainEps, betas, etas, b.LogJoint, b.Q0.LogProb, opt)
	}
	return chainResult(b, c), c
}

// inWhitened runs a chain in q0's whitened coordinates z = L_n^-1 (h - a_n): run gets the target
// log p(x, a_n + L_n z) and the reference log q0(a_n + L_n z) as functions of z [S, B, Q] and starts
// at z_0 = eps0; the returned chain's states (H0, HK, Path) are mapped back to h.
func inWhitened(b *Batch, run func(joint, ref anneal.LogDensity) *anneal.Chain) *anneal.Chain {
	toH := b.Q0.Sample // h = a + L z
	c := run(func(z *Node) *Node { return b.LogJoint(toH(z)) }, b.Q0.LogProbWhitened)
	c.H0, c.HK = toH(c.H0), toH(c.HK)
	for i, z := range c.Path {
		c.Path[i] = toH(z)
	}
	return c
}

// chainResult is the Result of an annealed chain's log weights: log-mean-exp over the chains per
// point, and the weighted mean of the chain ends as reconstruction latent.
func chainResult(b *Batch, c *anneal.Chain) *Result {
	per := LogMeanExp(c.LogW)
	return &Result{PerPoint: per, ELBO: b.ELBO(per), Recon: WeightedMean(c.LogW, c.HK), LogW: c.LogW, Particles: c.HK}
}

// stickTheLanding changes the gradient, not the value, of a one-chain VAIS result: the term
// -log q0(H_0) of the log weight, H_0 = a + L eps0, keeps only its path derivative
// -grad_h log q0(h)|_{H_0} dH_0/dphi; its score -d/dphi log q0(h; phi) at fixed h, whose
// expectation under q0 is 0, is dropped (Roeder, Wu & Duvenaud 2017). log q0 at the stopped
// parameters is log N(z | 0, I) - log|L| with z = eps0 + L^-1 ((a - a') + (L - L') eps0), a', L'
// the stopped copies: z equals eps0 in value and carries the path derivative.
func stickTheLanding(b *Batch, eps0 *Node, res *Result, preconditioned bool) {
	q := b.Q0
	stopped := q.Stopped()
	da := Sub(q.Mean, stopped.Mean)                                 // [B, Q], 0 in value
	dl := Einsum("bij,sbj->sbi", Sub(q.Scale, stopped.Scale), eps0) // [S, B, Q], 0 in value
	shift := Add(InsertAxes(da, 0), dl)
	z := Add(eps0, Einsum("bij,sbj->sbi", stopped.Inverse(), shift))
	exact := q.LogProbWhitened(eps0) // the term as VAIS wrote it into the weight
	if !preconditioned {
		exact = q.LogProb(q.Sample(eps0))
	}
	path := stopped.LogProbWhitened(z)
	// log w = ... - log q0(H_0): swap the exact term for the path-only one (equal in value).
	res.LogW = Add(res.LogW, Sub(exact, path))
	res.PerPoint = LogMeanExp(res.LogW)
	res.ELBO = b.ELBO(res.PerPoint)
}
