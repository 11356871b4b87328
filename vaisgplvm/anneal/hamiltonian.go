package anneal

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

// Hamiltonian are the parameters of the underdamped (Hamiltonian) chain of RunHamiltonian.
type Hamiltonian struct {
	// Damping is gamma in [0, 1), a scalar: the share of the momentum kept at each partial
	// refresh (0: a full refresh every step, the Langevin move; near 1: long Hamiltonian paths).
	Damping *Node
	// LogMass is log m [Q], the diagonal mass matrix M = diag(m) in the chain's coordinates, or
	// nil for M = I.
	LogMass *Node
	// StopScoreGradient stops the gradient through the scores (as Options.StopScoreGradient).
	StopScoreGradient bool
	// Tamed kicks the momentum with the tamed score g / (1 + eta_k |g|) instead of g (as
	// Options.Tamed; the same taming as Run's, so that at damping 0 the positions are Run's tamed
	// Langevin moves). The leapfrog step stays volume-preserving and reversible for any force that
	// depends on the position alone, so the weight is unchanged in form and the bound valid; a
	// point whose score is huge (a sharp likelihood early in training) is kicked by at most
	// e_k / (2 eta_k) instead of being thrown far away.
	Tamed bool
}

// RunHamiltonian transports z_0 = z0 [S, B, Q] through K annealed transitions of uncorrected
// Hamiltonian Monte Carlo ("Uncorrected Hamiltonian Annealing", Geffner & Domke 2021;
// "Differentiable AIS", Zhang et al. 2021): with rho_0 = M^(1/2) xi_0 and, for k = 1..K,
//
//	rho'_k  = gamma rho_{k-1} + sqrt(1 - gamma^2) M^(1/2) xi_k        (partial refresh)
//	r       = rho'_k + (e_k / 2) g_k(z_{k-1})                          (leapfrog, one step of size
//	z_k     = z_{k-1} + e_k M^-1 r                                       e_k = sqrt(2 eta_k) under
//	rho_k   = r + (e_k / 2) g_k(z_k)                                     pi_k)
//	log w   = log p(x, z_K) - log ref(z_0) + sum_k [log N(rho_k | 0, M) - log N(rho'_k | 0, M)]
//
// g_k = beta_k grad log p(x, z) + (1 - beta_k) grad log ref(z), pi_k = ref^(1 - beta_k) p^beta_k.
// The backward kernels are the transitions' reversals (the refresh is reversible with respect to
// N(0, M); the leapfrog step is volume-preserving and reversible with a momentum flip), so w is an
// unbiased estimate of p(x) / (normaliser of ref) and E log w a lower bound, with one new score per
// step (K + 1 evaluations of log p, as Run). With gamma = 0 the position update is Run's Langevin
// move with step eta_k; the weights differ (Run's backward kernel is a Langevin move too).
//
// xi are K + 1 noise nodes [S, B, Q] (xi_0 for rho_0, then one per step); etas [K] or [K, B]
// (per-point step sizes, see Run). The returned Chain has H0, HK, Path (positions), LogW, Target,
// LogQ0H0 (log ref(z_0)), Scores and LogAccept: per step the log Metropolis-Hastings ratio of the
// move (z_{k-1}, rho'_k) -> (z_k, rho_k) under the augmented target pi_k(z) N(rho | 0, M) (no move
// is rejected; the ratio drives the adaptive step size as for Run).
func RunHamiltonian(z0 *Node, xi []*Node, betas, etas *Node, logJoint, logRef LogDensity, h Hamiltonian) *Chain {
	opt := Options{StopScoreGradient: h.StopScoreGradient}
	c := &Chain{H0: z0, Path: []*Node{z0}}
	cur := evaluate(z0, logJoint, logRef, opt)
	c.LogQ0H0 = cur.logQ0
	mass := OnesLike(Slice(z0, AxisElem(0), AxisElem(0))) // [1, 1, Q] ones
	if h.LogMass != nil {
		mass = Reshape(Exp(h.LogMass), 1, 1, -1)
	}
	sqrtMass := Sqrt(mass)
	kinetic := func(rho *Node) *Node { // 0.5 rho^T M^-1 rho: [S, B]
		return MulScalar(ReduceSum(Div(Square(rho), mass), -1), 0.5)
	}
	z := z0
	sumMomentum := ZerosLike(ReduceSum(z0, -1)) // sum_k [log N(rho_k) - log N(rho'_k)]
	if len(xi) == 0 {
		c.HK, c.SumR, c.Target = z, Neg(sumMomentum), cur.logJoint
		c.LogW = Sub(c.Target, c.LogQ0H0)
		return c
	}
	rho := Mul(xi[0], sqrtMass)
	keep := h.Damping
	fresh := Sqrt(OneMinus(Square(keep)))
	for k := 1; k < len(xi); k++ {
		beta := element(betas, k-1)
		eta, etaPoint := stepEta(etas, k-1)
		step := Sqrt(MulScalar(eta, 2))
		refreshed := Add(Mul(rho, keep), Mul(Mul(xi[k], sqrtMass), fresh))
		score := mix(beta, cur.gradJ, cur.gradQ)
		c.Scores = append(c.Scores, score)
		half := Add(refreshed, Mul(drift(score, etaPoint, h.Tamed), MulScalar(step, 0.5)))
		zNew := Add(z, Div(Mul(half, step), mass))
		prev := cur
		cur = evaluate(zNew, logJoint, logRef, opt)
		force := drift(mix(beta, cur.gradJ, cur.gradQ), etaPoint, h.Tamed)
		rhoNew := Add(half, Mul(force, MulScalar(step, 0.5)))
		dKinetic := Sub(kinetic(refreshed), kinetic(rhoNew)) // log N(rho_k) - log N(rho'_k)
		sumMomentum = Add(sumMomentum, dKinetic)
		dLogPi := mix(beta, Sub(cur.logJoint, prev.logJoint), Sub(cur.logQ0, prev.logQ0))
		c.LogAccept = append(c.LogAccept, StopGradient(Add(dLogPi, dKinetic)))
		z, rho = zNew, rhoNew
		c.Path = append(c.Path, z)
	}
	c.HK = z
	c.SumR = Neg(sumMomentum) // the weight's correction, as Run's sum of R_{k-1} (log w = target - log ref(z0) - SumR)
	c.Target = cur.logJoint
	c.LogW = Add(Sub(c.Target, c.LogQ0H0), sumMomentum)
	return c
}
