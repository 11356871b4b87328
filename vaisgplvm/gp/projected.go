package gp

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// Projected is a batch of data x [B, D] reduced to the statistics that the Gaussian expected
// log-likelihood needs at any latent point (see ExpectedLogLikProjected). With W = T Mu [M, D]
// (the mean projection of Predict: mean_n = W^T k_n + b) and x_c = mask ∘ (x - b) (missing
// entries set to 0):
//
//	SqNorm_n = |x_c,n|^2     [B]
//	Cross_n  = W x_c,n       [B, M]
//
// so that, for a fully observed row, the squared error of the predictive mean at h_n needs only
// [M]-sized terms:
//
//	sum_d (x_nd - mean_nd)^2 = SqNorm_n - 2 k_n^T Cross_n + k_n^T G k_n,   G = W W^T [M, M].
//
// A row with missing entries subtracts what the missing ones add to that sum: (mean_nd - b_d)^2
// and var_nd for every missing d. ProjectMasked takes the mask of the first R rows only (the rows
// with missing entries; the rest are fully observed), so only those R rows need [D]-sized means.
//
// Building it costs one [B, D] x [D, M] product; each evaluation then costs O(M^2) per point (plus
// O(M D) for each of the R masked rows) instead of the O(M D) per point of forming the [B, D]
// means, which is what the annealed chain (K+1 evaluations per step) and IWVI (K samples) pay for
// images (D = 560, 784 > M = 50). The expansion subtracts terms as large as |x_c,n|^2 to get the
// squared error: in float64 the rounding is negligible; in float32 it is about 1e-7 |x_c,n|^2
// (gp_test.go bounds it against the direct form).
type Projected struct {
	SqNorm *Node // |x_c,n|^2: [B]
	Cross  *Node // W x_c,n: [B, M]
	// For ProjectMasked (else nil): Observed [B] counts each row's observed entries and Missing
	// [R, D] marks the missing entries (1 = missing) of the first R rows.
	Observed, Missing *Node
	b, r              int   // rows, and masked rows (0 when fully observed)
	rows              *Node // row numbers of the masked rows [R*s, 1] int32 (set by Tile)
}

// Project reduces fully observed data x [B, D] to Projected statistics for this Posterior.
func (p *Posterior) Project(x *Node) *Projected {
	xc := p.centre(x)
	return &Projected{SqNorm: ReduceSum(Square(xc), -1), Cross: MatMul(xc, Transpose(p.meanProjection(), 0, 1)),
		b: x.Shape().Dim(0)}
}

// ProjectMasked reduces data x [B, D] whose first R rows have the observation mask mask [R, D]
// (1 = observed) and whose other B - R rows are fully observed (R < B; missing entries of x may
// hold any finite value).
func (p *Posterior) ProjectMasked(x, mask *Node) *Projected {
	b, r, d := x.Shape().Dim(0), mask.Shape().Dim(0), x.Shape().Dim(1)
	full := Concatenate([]*Node{mask, Ones(x.Graph(), shapes.Make(x.DType(), b-r, d))}, 0) // [B, D]
	xc := Mul(full, p.centre(x))
	pr := &Projected{SqNorm: ReduceSum(Square(xc), -1), Cross: MatMul(xc, Transpose(p.meanProjection(), 0, 1)),
		Observed: ReduceSum(full, -1), Missing: OneMinus(mask), b: b, r: r}
	pr.rows = maskedRows(x.Graph(), b, r, 1)
	return pr
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

// ProjectedFit returns, at latent points h [N, Q] whose rows match pr's, the squared error of
// the predictive mean over the observed entries sum_d mask_nd (x_nd - mean_nd)^2 [N] and the
// summed predictive variance over them sum_d mask_nd var_nd [N], without forming the [N, D]
// means of the fully observed rows.
func (p *Posterior) ProjectedFit(h *Node, pr *Projected) (sqErr, varSum *Node) {
	kfu := p.kz.Cross(h) // [N, M]
	fit := ReduceSum(Mul(Sub(MatMul(kfu, p.meanGram()), MulScalar(pr.Cross, 2)), kfu), -1)
	sqErr, varSum = Add(pr.SqNorm, fit), p.summedVariance(kfu, p.kz.Diag(h))
	if pr.Missing == nil {
		return sqErr, varSum
	}
	// The masked rows: remove what their missing entries contributed.
	meanR, lostVar := p.MaskedMarginals(Gather(h, pr.rows, true), pr.Missing) // [R, D], [R]
	lostSq := ReduceSum(Mul(pr.Missing, Square(p.centre(meanR))), -1)         // [R]
	zeros := ZerosLike(sqErr)
	sqErr = Sub(sqErr, ScatterSum(zeros, pr.rows, lostSq, true, true))
	varSum = Sub(varSum, ScatterSum(zeros, pr.rows, lostVar, true, true))
	return sqErr, varSum
}

// meanGram returns G = W W^T [M, M] with W = T Mu, cached.
func (p *Posterior) meanGram() *Node {
	if p.gram == nil {
		w := p.meanProjection()
		p.gram = DotGeneral(w, []int{1}, nil, w, []int{1}, nil)
	}
	return p.gram
}

// ProjectionPays reports whether ProjectedFit is cheaper than forming the means when a batch of b
// points, r of them with missing entries (0 when fully observed), is evaluated at rows latent
// points in all (samples x evaluations x b): in multiply-adds, rows·M·D for the means against
// b·M·D + M²·D (Project and G) + rows·M² + (rows·r/b)·M·D (the masked rows' means).
func (in *Inducing) ProjectionPays(b, rows, r int) bool {
	m, d := in.M, in.D
	return rows*m*d > b*m*d+m*m*d+rows*m*m+rows*r/b*m*d
}
