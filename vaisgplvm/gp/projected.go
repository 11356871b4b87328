package gp

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck
)

// Projected is a batch of fully observed data x [B, D] reduced to the two statistics that the
// Gaussian expected log-likelihood needs at any latent point (see ExpectedLogLikProjected). With
// W = T Mu [M, D] (the mean projection of Predict: mean_n = W^T k_n + b) and x_c = x - b:
//
//	SqNorm_n = |x_c,n|^2     [B]
//	Cross_n  = W x_c,n       [B, M]
//
// so that the squared error of the predictive mean at h_n needs only [M]-sized terms:
//
//	sum_d (x_nd - mean_nd)^2 = SqNorm_n - 2 k_n^T Cross_n + k_n^T G k_n,   G = W W^T [M, M].
//
// Building it costs one [B, D] x [D, M] product; each evaluation then costs O(M^2) per point
// instead of the O(M D) of forming the [B, D] means, which is what the annealed chain (K+1
// evaluations per step) and IWVI (K samples) pay for images (D = 560, 784 > M = 50). The
// expansion subtracts terms as large as |x_c,n|^2 to get the squared error: in float64 the
// rounding is negligible; in float32 the error is about 1e-7 |x_c,n|^2 (gp_test.go bounds it
// against the direct form).
type Projected struct {
	SqNorm *Node // |x_n - b|^2: [B]
	Cross  *Node // W (x_n - b): [B, M]
}

// Project reduces fully observed data x [B, D] to Projected statistics for this Posterior.
func (p *Posterior) Project(x *Node) *Projected {
	xc := x
	if p.Bias != nil {
		xc = Sub(x, InsertAxes(p.Bias, 0))
	}
	return &Projected{
		SqNorm: ReduceSum(Square(xc), -1),
		Cross:  MatMul(xc, Transpose(p.meanProjection(), 0, 1)),
	}
}

// Tile repeats the statistics for s samples of every point, sample-major like the latent points
// [s*B, Q] they are evaluated at: SqNorm [s*B], Cross [s*B, M]. s == 1 returns pr itself.
func (pr *Projected) Tile(s int) *Projected {
	if s == 1 {
		return pr
	}
	b, m := pr.Cross.Shape().Dim(0), pr.Cross.Shape().Dim(1)
	return &Projected{
		SqNorm: Reshape(BroadcastToDims(InsertAxes(pr.SqNorm, 0), s, b), s*b),
		Cross:  Reshape(BroadcastToDims(InsertAxes(pr.Cross, 0), s, b, m), s*b, m),
	}
}

// ProjectedFit returns, at latent points h [N, Q] whose rows match pr's, the squared error of
// the predictive mean sum_d (x_nd - mean_nd)^2 [N] and the summed predictive variance
// sum_d var_nd [N], without forming the [N, D] means.
func (p *Posterior) ProjectedFit(h *Node, pr *Projected) (sqErr, varSum *Node) {
	kfu := p.kz.Cross(h) // [N, M]
	fit := ReduceSum(Mul(Sub(MatMul(kfu, p.meanGram()), MulScalar(pr.Cross, 2)), kfu), -1)
	return Add(pr.SqNorm, fit), p.summedVariance(kfu, p.kz.Diag(h))
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
// points is evaluated at rows latent points in all (samples x evaluations x b): in
// multiply-adds, rows·M·D for the means against b·M·D + M²·D (Project and G) + rows·M².
func (in *Inducing) ProjectionPays(b, rows int) bool {
	m, d := in.M, in.D
	return rows*m*d > b*m*d+m*m*d+rows*m*m
}
