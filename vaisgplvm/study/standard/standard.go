// Package standard is the standard GPLVM of Lawrence (2003, 2005): point latents H [N, Q] found by
// maximum a posteriori, with the exact GP marginal likelihood (an N x N Cholesky per evaluation)
// and a N(0, I) prior on each h_n. The paper's Table 5 compares it with VAIS-GPLVM.
//
// The D outputs share one kernel and a Gaussian noise variance s^2:
//
//	log p(X | H) = sum_d log N(x_:d | 0, K_HH + s^2 I)
//	             = -D/2 log|K + s^2 I| - 1/2 tr((K + s^2 I)^-1 X X^T) - N D/2 log 2 pi
//
// Variables: the kernel's (scope "kernel"), the likelihood's (scope "likelihood") and the latent
// points "standard/latent" [N, Q] (initialised by PCA). Cost O(N^3) per iteration and O(N^2)
// memory, so it is for data sets of a few thousand points at most.
package standard

import (
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// GP is the exact GP of the standard GPLVM: a kernel and a Gaussian likelihood.
type GP struct {
	Kernel kernels.Kernel
	Lik    *gp.Gaussian
	// Jitter is added to the diagonal of K + s^2 I relative to the kernel's mean diagonal
	// (default linalg.DefaultJitter when 0).
	Jitter float64
}

// covariance returns K_HH + s^2 I + jitter [N, N] and s^2, for h [N, Q].
func (m *GP) covariance(ctx *mlmodel.Scope, h *Node) (a, s2 *Node) {
	g := h.Graph()
	n := h.Shape().Dim(0)
	k := m.Kernel.Matrix(ctx, h, h)
	s2 = m.Lik.NoiseVariance(ctx, g)
	jit := m.Jitter
	if jit == 0 {
		jit = linalg.DefaultJitter
	}
	diag := Add(s2, MulScalar(ReduceAllMean(m.Kernel.Diag(ctx, h)), jit))
	eye := linalg.Eye(g, n, h.DType())
	return Add(k, Mul(eye, diag)), s2
}

// factor returns the Cholesky factor of K_HH + s^2 I + jitter and s^2, for h [N, Q].
func (m *GP) factor(ctx *mlmodel.Scope, h *Node) (l, s2 *Node) {
	a, s2 := m.covariance(ctx, h)
	return linalg.Cholesky(a), s2
}

// LogMarginal returns log p(X | H) (nats, a scalar) for data x [N, D] and latent points h [N, Q]
// (equation above; Lawrence 2005 Eq. 4).
//
// Its gradient is attached in closed form: with A = K + s^2 I and alpha = A^-1 X,
// d log p / dA = (alpha alpha^T - D A^-1) / 2 (Rasmussen & Williams 2006, Eq. 5.9), built from the
// factor's inverse W = L^-1 (A^-1 = W^T W) and carried to the kernel's parameters, the noise and H
// by autodiff of A alone. This costs one N x N product where the factor's own gradient (linalg)
// costs three, and the value is the same. First derivatives only: the attached gradient is a
// constant of the graph, so a gradient of the gradient would be wrong (the MAP fit needs none).
func (m *GP) LogMarginal(ctx *mlmodel.Scope, x, h *Node) *Node {
	n, d := x.Shape().Dim(0), x.Shape().Dim(1)
	a, _ := m.covariance(ctx, h)
	l, w := linalg.CholeskyWithInverse(StopGradient(a))
	wx := MatMul(w, x) // L^-1 X: [N, D]
	quad := ReduceAllSum(Square(wx))
	logDet := linalg.LogDetFromCholesky(l)
	value := AddScalar(MulScalar(Add(MulScalar(logDet, float64(d)), quad), -0.5), -0.5*float64(n*d)*math.Log(2*math.Pi))
	wt := Transpose(w, 0, 1)
	alpha := MatMul(wt, wx) // A^-1 X: [N, D]
	grad := MulScalar(Sub(MatMul(alpha, Transpose(alpha, 0, 1)), MulScalar(MatMul(wt, w), float64(d))), 0.5)
	surrogate := ReduceAllSum(Mul(a, StopGradient(grad))) // value 0 after the subtraction, gradient grad
	return Add(value, Sub(surrogate, StopGradient(surrogate)))
}

// LogJoint returns the MAP objective log p(X | H) + sum_n log N(h_n | 0, I) (a scalar).
func (m *GP) LogJoint(ctx *mlmodel.Scope, x, h *Node) *Node {
	return Add(m.LogMarginal(ctx, x, h), ReduceAllSum(latent.LogPrior(h)))
}

// Posterior returns the exact GP posterior of f at the training latents h [N, Q] given x [N, D]:
// mean K (K + s^2 I)^-1 X [N, D] and variance diag(K - K (K + s^2 I)^-1 K) [N] (shared by the D
// outputs), and s^2.
func (m *GP) Posterior(ctx *mlmodel.Scope, x, h *Node) (mean, variance, s2 *Node) {
	return m.predict(ctx, x, h, h)
}

// ExpectedLogLik returns l_n = sum_d E[log N(x_nd | f_d(h_n), s^2)] under the exact posterior of f
// at the training latents: log N(x_nd | mean_nd, s^2) - variance_n / (2 s^2) summed over d, [N]:
// the quantity whose negative mean is the NELL column of the tables (there with the sparse
// posterior).
func (m *GP) ExpectedLogLik(ctx *mlmodel.Scope, x, h *Node) (ell, mean *Node) {
	mean, variance, s2 := m.Posterior(ctx, x, h)
	d := float64(x.Shape().Dim(1))
	sq := ReduceSum(Square(Sub(x, mean)), -1)
	quad := Div(Add(sq, MulScalar(variance, d)), MulScalar(s2, 2))
	logNorm := MulScalar(Log(MulScalar(s2, 2*math.Pi)), -0.5*d)
	return Sub(Add(ZerosLike(quad), logNorm), quad), mean
}
