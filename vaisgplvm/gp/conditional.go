package gp

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

// Marginals are the predictive marginals of f at latent points.
type Marginals struct {
	Mean *Node // [N, D]
	// Var is the per-output variance [N, D] when computed per output, else nil.
	Var *Node
	// VarSum is sum_d Var[n, d]: [N]. Always set.
	VarSum *Node
}

// Predict returns the marginals q(f_d(h_n)) = N(mean_nd, var_nd) at h [N, Q]. With k_n = K(Z, h_n)
// [M] and T = L^-T (whitened) or Kuu^-1 (unwhitened):
//
//	mean_nd = k_n^T T m_d                                    [N, D]
//	var_nd  = k(h_n, h_n) - |L^-1 k_n|^2 + |S_d^T T^T k_n|^2      [N, D]
//
// perOutput=false computes only sum_d var_nd = D (k(h_n, h_n) - |L^-1 k_n|^2) + p_n^T Sigma p_n
// with p_n = T^T k_n and Sigma = sum_d S_d S_d^T [M, M], built once per Posterior: two (whitened)
// or three [N, M] x [M, M] products per call, which matters because the annealed chain calls
// Predict K+1 times. Each term is a sum of squares or a PSD quadratic form, so nothing cancels
// except k(h, h) - |L^-1 k|^2, whose terms are at most the kernel variance: folding the terms into
// one matrix (T Sigma T^T - D Kuu^-1) would subtract numbers as large as cond(Kuu) x the kernel
// variance, which lost 3.5% of the variance in float32 (gp_test.go).
func (p *Posterior) Predict(h *Node, perOutput bool) Marginals {
	kfu := p.kz.Cross(h) // [N, M]
	mean := p.addBias(MatMul(kfu, p.meanProjection()))
	kdiag := p.kz.Diag(h) // [N]
	if perOutput {
		psi, proj := p.whiten(kfu)
		base := residualVariance(psi, kdiag) // [N]
		var v *Node                          // [N, D]
		if p.In.SharedSqrt {
			t := MatMul(proj, Squeeze(p.S, 0)) // [N, M]
			v = BroadcastToDims(InsertAxes(Add(base, ReduceSum(Square(t), -1)), -1), base.Shape().Dim(0), p.In.D)
		} else {
			t := Einsum("nm,dmk->ndk", proj, p.S) // [N, D, M]
			v = Add(InsertAxes(base, -1), ReduceSum(Square(t), -1))
		}
		return Marginals{Mean: mean, Var: v, VarSum: ReduceSum(v, -1)}
	}
	return Marginals{Mean: mean, VarSum: p.summedVariance(kfu, kdiag)}
}

// summedVariance returns sum_d var_nd = D (k(h_n, h_n) - |L^-1 k_n|^2) + p_n^T Sigma p_n [N] from
// kfu = K(h, Z) [N, M] and kdiag = k(h_n, h_n) [N] (see Predict).
func (p *Posterior) summedVariance(kfu, kdiag *Node) *Node {
	psi, proj := p.whiten(kfu)
	return Add(MulScalar(residualVariance(psi, kdiag), float64(p.In.D)), quadForm(proj, p.sumSST()))
}

// whiten returns psi = K_fu L^-T [N, M] (rows L^-1 k_n) and proj = K_fu T [N, M] (rows T^T k_n):
// proj is psi when whitened and psi L^-1 = K_fu Kuu^-1 when not.
func (p *Posterior) whiten(kfu *Node) (psi, proj *Node) {
	psi = MatMul(kfu, Transpose(p.LInv, 0, 1))
	if p.In.Whitened {
		return psi, psi
	}
	return psi, MatMul(psi, p.LInv)
}

// projection returns T [M, M]: L^-T (whitened) or Kuu^-1 = L^-T L^-1 (unwhitened).
func (p *Posterior) projection() *Node {
	if p.proj == nil {
		p.proj = Transpose(p.LInv, 0, 1)
		if !p.In.Whitened {
			p.proj = MatMul(p.proj, p.LInv)
		}
	}
	return p.proj
}

// meanProjection returns T Mu [M, D].
func (p *Posterior) meanProjection() *Node {
	if p.meanProj == nil {
		p.meanProj = MatMul(p.projection(), p.Mu)
	}
	return p.meanProj
}

// sumSST returns Sigma = sum_d S_d S_d^T [M, M] as one contraction over (d, k).
func (p *Posterior) sumSST() *Node {
	if p.sigma == nil {
		p.sigma = DotGeneral(p.S, []int{0, 2}, nil, p.S, []int{0, 2}, nil)
		if p.In.SharedSqrt {
			p.sigma = MulScalar(p.sigma, float64(p.In.D))
		}
	}
	return p.sigma
}

// MaskedMarginals returns the predictive means [N, D] and sum_d mask_nd var_nd [N] at h [N, Q]
// without forming the [N, D] variances:
//
//	sum_d mask_nd var_nd = (k(h_n, h_n) - k_n^T Kuu^-1 k_n) sum_d mask_nd + k_n^T T A_n T^T k_n,
//	A_n = sum_d mask_nd S_d S_d^T                                            [N, M, M]
//
// A depends on the mask only, so it is built once per (Posterior, mask) pair: the chain's K+1 calls
// then cost O(N M^2) each instead of O(N D M^2). With a shared square root (S_d = S for all d),
// A_n = (sum_d mask_nd) S S^T and the quadratic form is (sum_d mask_nd) |S^T T^T k_n|^2: one
// [N, M] x [M, M] product per call and no [N, M, M] tensor. mask: [N, D], 1 = observed.
func (p *Posterior) MaskedMarginals(h, mask *Node) (mean, varSum *Node) {
	return p.maskedMarginalsAt(p.kz.Cross(h), p.kz.Diag(h), mask)
}

// maskedMarginalsAt is MaskedMarginals given the kernel at the points instead of the points:
// kfu = K_fu [N, M] and kdiag = k(h_n, h_n) [N]. ExpectedSqError passes the rows of the batch's
// own kernel, so the masked rows' kernel is not built a second time.
func (p *Posterior) maskedMarginalsAt(kfu, kdiag, mask *Node) (mean, varSum *Node) {
	mean = p.addBias(MatMul(kfu, p.meanProjection()))
	count := ReduceSum(mask, -1) // [N] observed outputs per point
	psi, proj := p.whiten(kfu)
	resid := residualVariance(psi, kdiag) // [N]
	if p.In.SharedSqrt {
		t := MatMul(proj, Squeeze(p.S, 0)) // [N, M] = k_n^T T S
		return mean, Mul(count, Add(resid, ReduceSum(Square(t), -1)))
	}
	a := p.maskedSigma(mask)                                        // [N, M, M]
	quad := ReduceSum(Mul(Einsum("nm,nmk->nk", proj, a), proj), -1) // [N]
	return mean, Add(Mul(resid, count), quad)
}

// maskedSigma returns A_n = sum_d mask_nd S_d S_d^T [N, M, M] for the given mask node (per-output
// square roots only), cached.
func (p *Posterior) maskedSigma(mask *Node) *Node {
	if p.maskedFor == mask && p.masked != nil {
		return p.masked
	}
	perOutput := Einsum("dmk,djk->dmj", p.S, p.S) // [D, M, M]
	p.masked = Einsum("nd,dmj->nmj", mask, perOutput)
	p.maskedFor = mask
	return p.masked
}

// addBias adds the constant mean function b [D] to predictive means [N, D] (no-op for a zero mean).
func (p *Posterior) addBias(mean *Node) *Node {
	if p.Bias == nil {
		return mean
	}
	return Add(mean, InsertAxes(p.Bias, 0))
}

// residualVariance returns k(h_n, h_n) - k_n^T Kuu^-1 k_n = kdiag - |L^-1 k_n|^2 [N], the prior
// variance of f at h_n not explained by u, from psi = K_fu L^-T [N, M] (see whiten).
func residualVariance(psi, kdiag *Node) *Node {
	return Sub(kdiag, ReduceSum(Square(psi), -1))
}
