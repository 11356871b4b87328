package anneal

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

// LogDensity evaluates a per-point log density at h [S, B, Q], returning [S, B].
type LogDensity func(h *Node) *Node

// Chain is the result of running the annealed Langevin chain on a batch of points.
type Chain struct {
	H0, HK  *Node   // start (sampled from q0) and end of the chain: [S, B, Q]
	Path    []*Node // H_0..H_K, each [S, B, Q]
	SumR    *Node   // sum_k R_{k-1}: [S, B]
	LogW    *Node   // log weights log p(x, H_K) - log q0(H_0) - sum_k R_{k-1}: [S, B]
	Target  *Node   // log p(x, H_K) = l(H_K) + log p(H_K): [S, B]
	LogQ0H0 *Node   // log q0(H_0): [S, B]
	// LogAccept are, per transition k = 1..K, the log Metropolis-Hastings ratios of the Langevin
	// move H_{k-1} -> H_k under its bridging density pi_k (no move is rejected: the chain is
	// unadjusted; the ratio is a diagnostic and the signal of the adaptive step size):
	//
	//	log a_k = log pi_k(H_k) - log pi_k(H_{k-1}) - R_{k-1},  log pi_k = beta_k log p(x, h) + (1 - beta_k) log q0(h)
	//
	// (-R_{k-1} is log B_k(H_{k-1}|H_k) - log F_k(H_k|H_{k-1})). Each is [S, B], under StopGradient.
	// The AIS weight's increment of step k is (beta_k - beta_{k-1}) (log p(x, H_{k-1}) - log q0(H_{k-1}))
	// + log a_k: log a_k is the part of the weight that the step size controls.
	LogAccept []*Node
	// Scores are, per transition k, the score g_k(H_{k-1}) = beta_k grad log p(x, h) + (1 - beta_k)
	// grad log q0(h) [S, B, Q] in the chain's coordinates, before taming: the nodes the move uses,
	// kept for the signal of App. D's rule (see MeanSqScore).
	Scores []*Node
}

// Options tune the chain.
type Options struct {
	// StopScoreGradient stops the gradient through the scores g_k (the training gradient then
	// flows only through H_0 and the weights' explicit dependence). Default false: gradients flow
	// through the whole chain (second-order autodiff).
	StopScoreGradient bool
	// Algorithm1Sign uses the sign printed in the paper's Algorithm 1, eps_tilde = +sqrt(eta/2)(...)
	// - eps, which is a misprint: the weight is not that of any forward and backward kernel, so it is no
	// bound (its log-mean-exp over many chains exceeds log Z; TestLangevinUnbiased). Only for tests.
	Algorithm1Sign bool
	// Precondition runs the chain in the whitened coordinates z = L_n^-1 (h - a_n) of q0 (used by
	// bounds.VAIS): Langevin with mass matrix L_n L_n^T, so that eta is in units of q0's spread
	// and the (1 - beta_k) log q0 part of the drift has unit curvature for every point. The
	// bound is unchanged in form (the constant Jacobian |L_n| cancels in the weight). Plain
	// (unpreconditioned) Langevin, as printed in the paper, needs eta below 2 / (largest
	// eigenvalue of q0's precision), which a fixed eta breaks as soon as q0 sharpens.
	Precondition bool
	// Tamed replaces the drift g by the tamed drift g / (1 + eta |g|) (|g| the Euclidean norm over
	// the Q latent dimensions of each point; Brosse et al. 2019, "The tamed unadjusted Langevin
	// algorithm"), in the forward and in the backward kernel alike. The bound stays a valid lower
	// bound (any drift function gives one as long as both kernels use it), equals the untamed one
	// to first order when eta |g| is small, and a step can never move a point by more than
	// 1 + sqrt(2 eta) |eps|, so a too large eta loosens the bound instead of overflowing it.
	Tamed bool
	// Backward, when not nil, returns a correction c_k(h) [S, B, Q] to the drift of step k's
	// backward kernel at the step's end point h (in the chain's coordinates): the backward kernel
	// becomes N(H_{k-1} | H_k + eta_k (g_k(H_k) + c_k(H_k)), 2 eta_k I) instead of the plain
	// reversal. Any c gives a valid bound (it is a choice of backward kernel); c = 0 is VAIS's.
	// A learned c (bounds "mcd") can remove part of what the fixed reversal costs.
	Backward func(h *Node, k int) *Node
}

// Run transports H_0 = h0 through K annealed Langevin transitions (paper Eqs. 10-21):
//
//	g_k(h)  = beta_k grad log p(x, h) + (1 - beta_k) grad log q0(h)   (or its tamed form, see Options)
//	H_k     = H_{k-1} + eta_k g_k(H_{k-1}) + sqrt(2 eta_k) eps_{k-1}
//	eps~    = -sqrt(eta_k/2) (g_k(H_{k-1}) + g_k(H_k)) - eps_{k-1}       (Eq. 15)
//	R_{k-1} = 0.5 (|eps~|^2 - |eps_{k-1}|^2)
//	log w   = log p(x, H_K) - log q0(H_0) - sum_k R_{k-1}
//
// logJoint is log p(x_n, h) = l_n(h) + log p(h), logQ0 is log q0(h_n); both [S, B, Q] -> [S, B].
// eps: [K, S, B, Q] standard normal noise; betas: [K]; etas: [K], or [K, B] for a step size per
// transition and point (see StepSize.PerPoint). K = 0 (eps with leading dimension 0 is not
// allowed in GoMLX, so pass nil eps) gives the importance-sampling weight.
func Run(h0 *Node, eps []*Node, betas, etas *Node, logJoint, logQ0 LogDensity, opt Options) *Chain {
	c := &Chain{H0: h0, Path: []*Node{h0}}
	cur := evaluate(h0, logJoint, logQ0, opt)
	c.LogQ0H0 = cur.logQ0
	h := h0
	sumR := ZerosLike(ReduceSum(h0, -1))
	for k, e := range eps {
		beta := element(betas, k)
		var mv transition
		h, cur, mv = move(h, cur, beta, etas, k, e, logJoint, logQ0, opt)
		c.Scores = append(c.Scores, mv.score)
		sumR = Add(sumR, mv.r)
		c.LogAccept = append(c.LogAccept, StopGradient(mv.logA))
		c.Path = append(c.Path, h)
	}
	c.HK = h
	c.SumR = sumR
	c.Target = cur.logJoint
	c.LogW = Sub(Sub(c.Target, c.LogQ0H0), sumR)
	return c
}

// transition is what one move of the chain adds to its weight: the score g_k(H_{k-1}) it used,
// R_{k-1} and log a_k (see Chain.LogAccept), each with its gradient.
type transition struct {
	score, r, logA *Node
}

// move takes transition k of the chain from h (its state cur) with noise e: the Langevin move of
// Run's doc and its backward kernel. It returns the new point, its state and the transition.
func move(h *Node, cur state, beta, etas *Node, k int, e *Node, logJoint, logQ0 LogDensity, opt Options) (*Node, state, transition) {
	eta, etaPoint := stepEta(etas, k)
	score := mix(beta, cur.gradJ, cur.gradQ)
	gPrev := drift(score, etaPoint, opt.Tamed)
	hNew := Add(Add(h, Mul(gPrev, eta)), Mul(e, Sqrt(MulScalar(eta, 2))))
	next := evaluate(hNew, logJoint, logQ0, opt)
	gNew := drift(mix(beta, next.gradJ, next.gradQ), etaPoint, opt.Tamed)
	if opt.Backward != nil {
		gNew = Add(gNew, opt.Backward(hNew, k))
	}
	sign := -1.0
	if opt.Algorithm1Sign {
		sign = 1
	}
	epsTilde := Sub(Mul(Add(gPrev, gNew), MulScalar(Sqrt(MulScalar(eta, 0.5)), sign)), e)
	r := MulScalar(Sub(ReduceSum(Square(epsTilde), -1), ReduceSum(Square(e), -1)), 0.5)
	dLogPi := mix(beta, Sub(next.logJoint, cur.logJoint), Sub(next.logQ0, cur.logQ0))
	return hNew, next, transition{score: score, r: r, logA: Sub(dLogPi, r)}
}

// state is the chain's densities and scores at one point of the path.
type state struct {
	logJoint, logQ0 *Node // log p(x, h), log q0(h): [S, B]
	gradJ, gradQ    *Node // their gradients w.r.t. h: [S, B, Q]
}

// evaluate returns log p(x, h), log q0(h) and their gradients w.r.t. h, per point. The densities are
// sums of per-point terms, so the gradient of their total is the per-point gradient.
func evaluate(h *Node, logJoint, logQ0 LogDensity, opt Options) state {
	s := state{logJoint: logJoint(h), logQ0: logQ0(h)}
	s.gradJ = Gradient(ReduceAllSum(s.logJoint), h)[0]
	s.gradQ = Gradient(ReduceAllSum(s.logQ0), h)[0]
	if opt.StopScoreGradient {
		s.gradJ, s.gradQ = StopGradient(s.gradJ), StopGradient(s.gradQ)
	}
	return s
}

// AcceptRates returns the mean over chains and points of min(1, a_k) for each transition: [K]
// (under StopGradient; nil when K = 0). See Chain.LogAccept.
func (c *Chain) AcceptRates() *Node {
	return c.perStep(func(la *Node) *Node { return ReduceAllMean(Exp(MinScalar(la, 0))) })
}

// MeanLogAccept returns the mean over chains and points of log a_k for each transition: [K] (under
// StopGradient; nil when K = 0), in nats. Its sum over k is the part of the mean log weight that the
// step sizes control (see Chain.LogAccept): near or below 0 for a chain close to equilibrium, large
// and positive while the chain falls from a broad q0 into a much sharper posterior.
func (c *Chain) MeanLogAccept() *Node {
	return c.perStep(ReduceAllMean)
}

// MeanSqScore returns, per transition k, the mean over chains, points and latent dimensions of the
// squared score g_k (Scores): [K] under StopGradient (nil when K = 0), the signal of App. D's rule
// (StepSize.PaperD). Its nodes are built only when it is called.
func (c *Chain) MeanSqScore() *Node {
	if len(c.Scores) == 0 {
		return nil
	}
	out := make([]*Node, len(c.Scores))
	for i, g := range c.Scores {
		out[i] = InsertAxes(ReduceAllMean(Square(StopGradient(g))), 0)
	}
	return Concatenate(out, 0)
}

// perStep stacks a scalar statistic of each transition's log a_k into a [K] node.
func (c *Chain) perStep(stat func(logAccept *Node) *Node) *Node {
	if len(c.LogAccept) == 0 {
		return nil
	}
	out := make([]*Node, len(c.LogAccept))
	for i, la := range c.LogAccept {
		out[i] = InsertAxes(stat(la), 0)
	}
	return StopGradient(Concatenate(out, 0))
}

// drift returns g, or the tamed drift g / (1 + eta |g|) per point (norm over the last axis).
func drift(g, eta *Node, tamed bool) *Node {
	if !tamed {
		return g
	}
	norm := Sqrt(AddScalar(ReduceSum(Square(g), -1), 1e-30)) // [S, B]; the constant keeps d/dg finite at 0
	return Div(g, InsertAxes(OnePlus(Mul(norm, eta)), -1))
}

// mix returns beta gj + (1 - beta) gq.
func mix(beta, gj, gq *Node) *Node {
	return Add(Mul(gj, beta), Mul(gq, OneMinus(beta)))
}

// stepEta returns transition k's step size shaped for the [S, B, Q] moves and for the [S, B]
// per-point terms: the scalar eta_k twice for etas [K], or row k of etas [K, B] as [1, B, 1] and
// [1, B].
func stepEta(etas *Node, k int) (move, point *Node) {
	if etas.Rank() == 1 {
		e := element(etas, k)
		return e, e
	}
	b := etas.Shape().Dim(1)
	row := Slice(etas, AxisRange(k, k+1)) // [1, B]
	return Reshape(row, 1, b, 1), row
}

// element returns v[k] of a [K] node as a scalar.
func element(v *Node, k int) *Node {
	return Reshape(Slice(v, AxisRange(k, k+1)))
}

// NormalizedWeights returns softmax(logW) along axis 0 of logW [S, B]: [S, B].
func NormalizedWeights(logW *Node) *Node {
	return Softmax(logW, 0)
}
