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
	// ELBO is the collapsed bound in nats (the whole data set's, not per point):
	//
	//	F = -(ND/2) log(2 pi s^2) - (D/2) log|B| - |Y|^2 / (2 s^2) + |C|^2 / 2
	//	    - (D/2) (psi0 / s^2 - tr(L^-1 Psi2 L^-T) / s^2) - sum_n KL(q(h_n) || N(0, I))
	//
	// with Kuu = L L^T (jittered as gp.Posterior does), A = L^-1 Psi1^T / s [M, N],
	// B = I + L^-1 Psi2 L^-T / s^2 = L_B L_B^T [M, M], C = L_B^-1 A Y / s [M, D], Y [N, D] the data less
	// the mean function, psi0 = sum_n E k(h_n, h_n), Psi1 [N, M], Psi2 = sum_n E k(Z, h_n) k(h_n, Z).
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
	psi0, psi1, psi2, err := kernels.PsiSumsFull(ctx, m.Kernel, q0.Mean, q0.Scale, post.Z)
	if err != nil {
		return nil, fmt.Errorf("converge: %w", err)
	}
	if post.Bias != nil {
		y = Sub(y, InsertAxes(post.Bias, 0))
	}
	s2 := m.Lik.NoiseVariance(ctx, g)
	s := Sqrt(s2)
	a := Div(MatMul(post.LInv, Transpose(psi1, 0, 1)), s)                       // [M, N]
	aat := Div(MatMul(MatMul(post.LInv, psi2), Transpose(post.LInv, 0, 1)), s2) // [M, M]
	mm := aat.Shape().Dim(0)
	b := Add(aat, linalg.Eye(g, mm, aat.DType()))
	lb, lbInv := linalg.CholeskyWithInverse(b)
	logDetB := MulScalar(ReduceAllSum(Log(diag(lb))), 2)
	c := Div(MatMul(lbInv, MatMul(a, y)), s) // [M, D]
	nd := float64(n * d)
	f := MulScalar(Log(MulScalar(s2, 2*math.Pi)), -0.5*nd)
	f = Sub(f, MulScalar(logDetB, 0.5*float64(d)))
	f = Sub(f, Div(MulScalar(ReduceAllSum(Square(y)), 0.5), s2))
	f = Add(f, MulScalar(ReduceAllSum(Square(c)), 0.5))
	f = Sub(f, MulScalar(Sub(Div(psi0, s2), trace(aat)), 0.5*float64(d)))
	f = Sub(f, ReduceAllSum(q0.KLToPrior()))
	return &Terms{ELBO: f, LBInv: lbInv, C: c, L: post.L, Z: post.Z}, nil
}

// diag returns the diagonal [n] of a square matrix [n, n].
func diag(x *Node) *Node {
	return ReduceSum(Mul(x, linalg.Eye(x.Graph(), x.Shape().Dim(0), x.DType())), -1)
}

// trace returns tr(x) for a square matrix x.
func trace(x *Node) *Node { return ReduceAllSum(diag(x)) }
