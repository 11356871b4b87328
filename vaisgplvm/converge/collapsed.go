package converge

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// Terms are the nodes of one evaluation of the collapsed bound.
type Terms struct {
	// ELBO is the collapsed bound in nats (the whole data set's, not per point), Titsias &
	// Lawrence (2010) eq. 18 with q(u) at its optimum, written in a form that keeps its precision
	// when the noise variance s^2 is small:
	//
	//	F = -(ND/2) log(2 pi s^2) - (D/2) log|B|
	//	    - (|Y - Psi1 M|^2 + tr(M^T Cov M)) / (2 s^2) - |L^T M|^2 / 2
	//	    - (D/2) (psi0 - |L^-1 Psi1^T|^2 - tr(L^-1 Cov L^-T)) / s^2 - sum_n KL(q(h_n) || N(0, I))
	//
	// with Kuu = L L^T (jittered as gp.Posterior does), Psi1 [N, M], Cov = sum_n Psi2[n] - Psi1^T
	// Psi1 [M, M] (kernels.PsiCovarianceSumFull), B = I + L^-1 (Psi1^T Psi1 + Cov) L^-T / s^2 =
	// L_B L_B^T [M, M], C = L_B^-1 L^-1 Psi1^T Y / s^2 [M, D], M = L^-T L_B^-T C [M, D] the optimal
	// q(u)'s mean, Y [N, D] the data less the mean function, psi0 = sum_n E k(h_n, h_n).
	//
	// The data-fit line equals the textbook -|Y|^2 / (2 s^2) + |C|^2 / 2, but as a sum of
	// non-negative terms evaluated at M it is stationary in M: M's rounding errors (amplified by
	// the conditioning of Kuu and B) enter only at second order, and the gradient is taken with M
	// held (at the optimum the partial derivatives are the total ones). The textbook form cancels
	// terms of 1e8 nats to 1e4 and carried rounding noise of 1e-4 nats per point on oil flow at
	// s^2 5e-5, enough to stall L-BFGS; this form's is below 1e-6.
	ELBO *Node
	// LBInv is L_B^-1 [M, M] and C is C [M, D]: the optimal whitened q(v_d) = N(L_B^-T c_d, B^-1),
	// u = L v (OptimalQU).
	LBInv, C *Node
	L        *Node // L [M, M], Kuu's Cholesky factor
	Z        *Node // the inducing inputs [M, Q]
}

// Collapsed builds the collapsed mean-field bound of m for the data y [N, D] (every point, fully
// observed) from the variables in ctx, as model.Model's bounds read them: q0's mean and scale
// (scope "latent"), Z and the mean function (scope "inducing"; q_mu and q_sqrt are read by nothing
// here), the kernel and the noise variance. Errors: data with missing entries, a kernel without
// closed-form psi statistics.
func Collapsed(ctx *mlmodel.Scope, m *model.Model, y *Node) (*Terms, error) {
	if m.HasMask() {
		return nil, fmt.Errorf("converge: the collapsed bound needs fully observed data; this model has missing entries")
	}
	g := y.Graph()
	n, d := y.Shape().Dim(0), y.Shape().Dim(1)
	q0 := latent.Batch(ctx, g, m.Latent, Iota(g, shapes.Make(dtypes.Int32, n), 0))
	post := gp.NewPosterior(ctx, g, m.Inducing, m.Kernel)
	psi0, psi1, cov, err := kernels.PsiCovarianceSumFull(ctx, m.Kernel, q0.Mean, q0.Scale, post.Z)
	if err != nil {
		return nil, fmt.Errorf("converge: %w", err)
	}
	if post.Bias != nil {
		y = Sub(y, InsertAxes(post.Bias, 0))
	}
	s2 := m.Lik.NoiseVariance(ctx, g)
	lInvT := Transpose(post.LInv, 0, 1)
	a := MatMul(post.LInv, Transpose(psi1, 0, 1))            // L^-1 Psi1^T [M, N]
	covW := MatMul(MatMul(post.LInv, cov), lInvT)            // L^-1 Cov L^-T [M, M]
	aat := Div(Add(MatMul(a, Transpose(a, 0, 1)), covW), s2) // L^-1 Psi2 L^-T / s^2
	mm := aat.Shape().Dim(0)
	lb, lbInv := linalg.CholeskyWithInverse(Add(aat, linalg.Eye(g, mm, aat.DType())))
	logDetB := MulScalar(ReduceAllSum(Log(diag(lb))), 2)
	c := Div(MatMul(lbInv, MatMul(a, y)), s2) // [M, D]
	mean := StopGradient(MatMul(lInvT, MatMul(Transpose(lbInv, 0, 1), c)))
	resid := Sub(y, MatMul(psi1, mean))
	fit := Add(ReduceAllSum(Square(resid)), ReduceAllSum(Mul(mean, MatMul(cov, mean))))
	nd := float64(n * d)
	f := MulScalar(Log(MulScalar(s2, 2*math.Pi)), -0.5*nd)
	f = Sub(f, MulScalar(logDetB, 0.5*float64(d)))
	f = Sub(f, Div(MulScalar(fit, 0.5), s2))
	f = Sub(f, MulScalar(ReduceAllSum(Square(MatMul(Transpose(post.L, 0, 1), mean))), 0.5))
	nystrom := Sub(Sub(psi0, ReduceAllSum(Square(a))), trace(covW)) // sum_n E[k_nn - k_n^T Kuu^-1 k_n]
	f = Sub(f, MulScalar(Div(nystrom, s2), 0.5*float64(d)))
	f = Sub(f, ReduceAllSum(q0.KLToPrior()))
	return &Terms{ELBO: f, LBInv: lbInv, C: c, L: post.L, Z: post.Z}, nil
}

// diag returns the diagonal [n] of a square matrix [n, n].
func diag(x *Node) *Node {
	return ReduceSum(Mul(x, linalg.Eye(x.Graph(), x.Shape().Dim(0), x.DType())), -1)
}

// trace returns tr(x) for a square matrix x.
func trace(x *Node) *Node { return ReduceAllSum(diag(x)) }
