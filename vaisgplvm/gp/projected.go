package gp

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// Projected is a batch of data x [B, D] reduced to the statistics that the Gaussian expected
// log-likelihood needs at any latent point (see ExpectedSqError). The predictive mean is
// mean_n = V^T psi_n + b with psi_n = L^-1 k_n [M] and V = L^T T Mu [M, D] (Mu itself when
// whitened, L^-1 Mu when not). With x_c = mask ∘ (x - b) (missing entries set to 0):
//
//	SqNorm_n = |x_c,n|^2     [B]
//	Cross_n  = V x_c,n       [B, M]
//
// so that, for a fully observed row, the squared error of the predictive mean at h_n needs only
// [M]-sized terms:
//
//	sum_d (x_nd - mean_nd)^2 = SqNorm_n - 2 psi_n^T Cross_n + psi_n^T V V^T psi_n.
//
// A row with missing entries subtracts what the missing ones add to that sum: (mean_nd - b_d)^2
// and var_nd for every missing d. ProjectMasked takes the mask of the first R rows only (the rows
// with missing entries; the rest are fully observed), so only those R rows need [D]-sized means.
//
// Building it costs one [B, D] x [D, M] product; each evaluation then costs O(M^2) per point (plus
// O(M D) for each of the R masked rows) instead of the O(M D) per point of forming the [B, D]
// means, which is what the annealed chain (K+1 evaluations per step) and IWVI (K samples) pay for
// images (D = 560, 784 > M = 50). psi is bounded (|psi_n|^2 <= k(h_n, h_n)), so no factor of
// cond(Kuu) enters, but the expansion subtracts terms as large as |x_c,n|^2 to get the squared
// error: in float64 the rounding is negligible; in float32 it is about 1e-7 |x_c,n|^2 (the tests
// bound it against the direct form).
//
// Kernel-space form (whitened q(u) in float64): with psi_n = L^-1 k_n the whole sum folds into one
// quadratic form in k_n,
//
//	sum_d E[(x_nd - f_d)^2] = SqNorm_n + D k(h_n, h_n) + k_n^T (G k_n - 2 KCross_n),
//	G = L^-T (V V^T + Sigma - D I) L^-1  [M, M],   KCross_n = L^-T Cross_n  [B, M],
//
// both built once per batch, so an evaluation costs one [B, M] x [M, M] product instead of two
// (k_n -> psi_n -> quadratic form), and its first- and second-order gradients half as many: a
// fifth less time per Frey VAIS step on the pure-Go backend. G subtracts terms up to cond(Kuu)
// times the kernel variance times D: in float64 that costs 1e-10 of the result even at the worst
// conditioning the jitter allows (cond(Kuu) ~5e6, measured in the tests), but in float32 it lost
// 1.8e-5 relative on a well-conditioned problem where the psi form loses 1.2e-6, so float32 keeps
// the psi form (see Predict for the same trade-off in the variances).
type Projected struct {
	SqNorm *Node // |x_c,n|^2: [B]
	Cross  *Node // V x_c,n: [B, M]
	// KCross is L^-T Cross_n [B, M] (rows Cross L^-1) when the kernel-space form is used, else nil.
	KCross *Node
	// For ProjectMasked (else nil): Observed [B] counts each row's observed entries and Missing
	// [R, D] marks the missing entries (1 = missing) of the first R rows.
	Observed, Missing *Node
	b, r              int   // rows, and masked rows (0 when fully observed)
	rows              *Node // row numbers of the masked rows, [R, 1] int32 ([s*R, 1] after Tile(s))
}

// Project reduces fully observed data x [B, D] to Projected statistics for this Posterior.
func (p *Posterior) Project(x *Node) *Projected {
	xc := p.centre(x)
	pr := &Projected{SqNorm: ReduceSum(Square(xc), -1), Cross: p.cross(xc), b: x.Shape().Dim(0)}
	pr.KCross = p.kernelCross(pr.Cross)
	return pr
}

// ProjectMasked reduces data x [B, D] whose first R rows have the observation mask mask [R, D]
// (1 = observed) and whose other B - R rows are fully observed (R < B; missing entries of x may
// hold any finite value).
func (p *Posterior) ProjectMasked(x, mask *Node) *Projected {
	b, r := x.Shape().Dim(0), mask.Shape().Dim(0)
	full := ExpandMask(mask, b)
	xc := Mul(full, p.centre(x))
	pr := &Projected{SqNorm: ReduceSum(Square(xc), -1), Cross: p.cross(xc), Observed: ReduceSum(full, -1),
		Missing: OneMinus(mask), b: b, r: r}
	pr.KCross = p.kernelCross(pr.Cross)
	pr.rows = maskedRows(x.Graph(), b, r, 1)
	return pr
}

// ExpandMask returns the [B, D] mask of a batch of b rows given the mask [R, D] of its first R rows,
// the other rows fully observed (mask itself when R = B; nil stays nil).
func ExpandMask(mask *Node, b int) *Node {
	if mask == nil || mask.Shape().Dim(0) == b {
		return mask
	}
	r, d := mask.Shape().Dim(0), mask.Shape().Dim(1)
	return Concatenate([]*Node{mask, Ones(mask.Graph(), shapes.Make(mask.DType(), b-r, d))}, 0)
}

// centre returns x - b (x itself for a zero mean function).
func (p *Posterior) centre(x *Node) *Node {
	if p.Bias == nil {
		return x
	}
	return Sub(x, InsertAxes(p.Bias, 0))
}

// maskedRows returns the row numbers s*b + i (i < r, for each of s samples) as [s*r, 1] int32.
func maskedRows(g *Graph, b, r, s int) *Node {
	rows := make([][]int32, 0, s*r)
	for k := 0; k < s; k++ {
		for i := 0; i < r; i++ {
			rows = append(rows, []int32{int32(k*b + i)})
		}
	}
	return Const(g, rows)
}

// Tile repeats the statistics for s samples of every point, sample-major like the latent points
// [s*B, Q] they are evaluated at: SqNorm [s*B], Cross [s*B, M], Observed [s*B], Missing [s*R, D].
// s == 1 returns pr itself.
func (pr *Projected) Tile(s int) *Projected {
	if s == 1 {
		return pr
	}
	t := &Projected{SqNorm: tileRows(pr.SqNorm, s), Cross: tileRows(pr.Cross, s), b: s * pr.b, r: pr.r}
	if pr.KCross != nil {
		t.KCross = tileRows(pr.KCross, s)
	}
	if pr.Missing != nil {
		t.Observed, t.Missing = tileRows(pr.Observed, s), tileRows(pr.Missing, s)
		t.rows = maskedRows(pr.SqNorm.Graph(), pr.b, pr.r, s)
	}
	return t
}

// tileRows repeats v [B, ...] s times along a new leading axis and merges it: [s*B, ...].
func tileRows(v *Node, s int) *Node {
	dims := v.Shape().Dimensions
	out := append([]int{s}, dims...)
	merged := append([]int{s * dims[0]}, dims[1:]...)
	return Reshape(BroadcastToDims(InsertAxes(v, 0), out...), merged...)
}

// ExpectedSqError returns, at latent points h [N, Q] whose rows match pr's, the expected squared
// error over the observed entries under q(f), sum_d mask_nd E_q[(x_nd - f_d(h_n))^2] =
// sum_d mask_nd ((x_nd - mean_nd)^2 + var_nd) [N], without forming the [N, D] means of the fully
// observed rows. In the kernel-space form (pr.KCross set) it is one quadratic form in k_n (see
// Projected); otherwise, whitened, the mean and variance quadratic forms share one product:
// psi_n^T (V V^T + Sigma) psi_n with Sigma = sum_d S_d S_d^T (both positive semi-definite).
//
// The masked rows' correction takes their rows of the batch's kernel K_fu [N, M] and k(h_n, h_n)
// (one Gather each) instead of evaluating the kernel at those points again.
func (p *Posterior) ExpectedSqError(h *Node, pr *Projected) *Node {
	k, kdiag := p.kz.Cross(h), p.kz.Diag(h) // [N, M], [N]
	var e *Node
	if pr.KCross != nil {
		e = p.sqErrorKernel(k, kdiag, pr)
	} else {
		e = p.sqErrorPsi(k, kdiag, pr)
	}
	if pr.Missing == nil {
		return e
	}
	// The masked rows: remove what their missing entries contributed.
	kR, kdiagR := Gather(k, pr.rows, true), Gather(kdiag, pr.rows, true)          // [R, M], [R]
	meanR, lostVar := p.maskedMarginalsAt(kR, kdiagR, pr.Missing)                 // [R, D], [R]
	lost := Add(ReduceSum(Mul(pr.Missing, Square(p.centre(meanR))), -1), lostVar) // [R]
	return Sub(e, ScatterSum(ZerosLike(e), pr.rows, lost, true, true))
}

// sqErrorPsi is ExpectedSqError over all D entries of every row, through psi_n = L^-1 k_n, given
// k = K_fu [N, M] and kdiag = k(h_n, h_n) [N].
func (p *Posterior) sqErrorPsi(k, kdiag *Node, pr *Projected) *Node {
	psi, proj := p.whiten(k) // [N, M] each
	resid := residualVariance(psi, kdiag)
	var quad *Node
	if p.In.Whitened {
		quad = quadForm(psi, Add(p.meanGram(), p.sumSST()))
	} else {
		quad = Add(quadForm(psi, p.meanGram()), quadForm(proj, p.sumSST()))
	}
	quad = Sub(quad, MulScalar(ReduceSum(Mul(psi, pr.Cross), -1), 2))
	return Add(Add(pr.SqNorm, MulScalar(resid, float64(p.In.D))), quad)
}

// sqErrorKernel is ExpectedSqError over all D entries of every row in the kernel-space form,
// SqNorm_n + D k(h_n, h_n) + k_n^T (G k_n - 2 KCross_n), given k = K_fu [N, M] and kdiag [N].
func (p *Posterior) sqErrorKernel(k, kdiag *Node, pr *Projected) *Node {
	quad := ReduceSum(Mul(Sub(MatMul(k, p.kernelGram()), MulScalar(pr.KCross, 2)), k), -1)
	return Add(Add(pr.SqNorm, MulScalar(kdiag, float64(p.In.D))), quad)
}

// usesKernelSpace reports whether Project builds the kernel-space form: whitened q(u) in float64.
func (p *Posterior) usesKernelSpace() bool {
	return p.In.Whitened && p.Mu.DType() == dtypes.Float64
}

// kernelCross returns KCross = Cross L^-1 [B, M] when the kernel-space form is used, else nil.
func (p *Posterior) kernelCross(cross *Node) *Node {
	if !p.usesKernelSpace() {
		return nil
	}
	return MatMul(cross, p.LInv)
}

// kernelGram returns G = L^-T (V V^T + Sigma - D I) L^-1 [M, M] (whitened), cached.
func (p *Posterior) kernelGram() *Node {
	if p.kGram == nil {
		a := Add(p.meanGram(), p.sumSST())
		eye := linalg.Eye(a.Graph(), p.In.M, a.DType())
		a = Sub(a, MulScalar(eye, float64(p.In.D)))
		p.kGram = MatMul(Transpose(p.LInv, 0, 1), MatMul(a, p.LInv))
	}
	return p.kGram
}

// quadForm returns a_n^T A a_n for the rows of a [N, M]: [N].
func quadForm(a, m *Node) *Node {
	return ReduceSum(Mul(MatMul(a, m), a), -1)
}

// meanFactor returns V = L^T T Mu [M, D]: Mu (whitened) or L^-1 Mu (unwhitened), so that the
// predictive mean is V^T psi_n + b.
func (p *Posterior) meanFactor() *Node {
	if p.In.Whitened {
		return p.Mu
	}
	if p.vFactor == nil {
		p.vFactor = MatMul(p.LInv, p.Mu)
	}
	return p.vFactor
}

// cross returns V x_c for rows x_c [B, D]: [B, M].
func (p *Posterior) cross(xc *Node) *Node {
	return DotGeneral(xc, []int{1}, nil, p.meanFactor(), []int{1}, nil)
}

// meanGram returns V V^T [M, M], cached.
func (p *Posterior) meanGram() *Node {
	if p.gram == nil {
		v := p.meanFactor()
		p.gram = DotGeneral(v, []int{1}, nil, v, []int{1}, nil)
	}
	return p.gram
}

// ProjectionPays reports whether ExpectedSqError is cheaper than forming the means when a batch of b
// points, r of them with missing entries (0 when fully observed), is evaluated at rows latent
// points in all (samples x evaluations x b): in multiply-adds, rows·M·D for the means against
// b·M·D + M²·D (Project and V V^T) + rows·M² + (rows·r/b)·M·D (the masked rows' means).
func (in *Inducing) ProjectionPays(b, rows, r int) bool {
	m, d := in.M, in.D
	return rows*m*d > b*m*d+m*m*d+rows*m*m+rows*r/b*m*d
}
