package kernels

import (
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Stationary is an ARD stationary kernel k(h, h') = s^2 rho(r), r^2 = sum_q (h_q - h'_q)^2 / l_q^2,
// with rho(r) = exp(-r^2/2) (SE), (1 + sqrt3 r) exp(-sqrt3 r) (Matern-3/2) or
// (1 + sqrt5 r + 5 r^2/3) exp(-sqrt5 r) (Matern-5/2).
// Variables (scope "kernel"): raw_variance (scalar), raw_lengthscale [Q].
type Stationary struct {
	Config
	Kind string // "se", "matern32" or "matern52"
}

// Name implements Kernel.
func (k *Stationary) Name() string { return k.Kind }

func (k *Stationary) variance(ctx *mlmodel.Scope, g *Graph) *Node {
	return positive(ctx.At("kernel"), g, "variance", k.Variance, 0)
}

// Lengthscales implements Kernel: [Q].
func (k *Stationary) Lengthscales(ctx *mlmodel.Scope, g *Graph) *Node {
	return positive(ctx.At("kernel"), g, "lengthscale", k.Lengthscale, k.Q)
}

// Matrix implements Kernel: [N1, Q] x [N2, Q] -> [N1, N2] (Prepare(ctx, x2).Cross(x1)).
func (k *Stationary) Matrix(ctx *mlmodel.Scope, x1, x2 *Node) *Node {
	return k.Prepare(ctx, x2).Cross(x1)
}

// Diag implements Kernel: [N, Q] -> [N], equal to the kernel variance.
func (k *Stationary) Diag(ctx *mlmodel.Scope, x *Node) *Node {
	return constantDiag(x, k.variance(ctx, x.Graph()))
}

// constantDiag returns the kernel variance for every row of x [N, Q]: [N].
func constantDiag(x, variance *Node) *Node { return Mul(OnesLike(ReduceSum(x, -1)), variance) }

// Prepare implements Kernel. The squared distances come from one matrix product of augmented
// inputs, r2 = [|a|^2, 1, a] . [1, |b|^2, -2b]^T with a = x1/l, b = x2/l; this avoids [N1, N2]-sized
// broadcasts, which are slow on the pure-Go backend. The lengthscales, the kernel variance and the
// x2 side [1, |b|^2, -2b]^T are built here, once.
func (k *Stationary) Prepare(ctx *mlmodel.Scope, x2 *Node) Prepared {
	g := x2.Graph()
	ls := InsertAxes(k.Lengthscales(ctx, g), 0)
	b := Div(x2, ls)
	b2 := InsertAxes(ReduceSum(Square(b), -1), -1) // [N2, 1]
	rhsT := Transpose(hstack(OnesLike(b2), b2, MulScalar(b, -2)), 0, 1)
	return &stationaryAt{k: k, ls: ls, rhsT: rhsT, variance: k.variance(ctx, g)}
}

// stationaryAt is a Stationary kernel prepared at x2.
type stationaryAt struct {
	k                  *Stationary
	ls, rhsT, variance *Node // [1, Q], [Q+2, N2], scalar
}

// Cross implements Prepared: [N1, Q] -> [N1, N2].
func (p *stationaryAt) Cross(x1 *Node) *Node {
	a := Div(x1, p.ls)
	a2 := InsertAxes(ReduceSum(Square(a), -1), -1) // [N1, 1]
	lhs := hstack(a2, OnesLike(a2), a)
	r2 := Max(MatMul(lhs, p.rhsT), ScalarZero(x1.Graph(), x1.DType()))
	return Mul(p.k.profile(r2), p.variance)
}

// Diag implements Prepared: [N1, Q] -> [N1], equal to the kernel variance.
func (p *stationaryAt) Diag(x1 *Node) *Node { return constantDiag(x1, p.variance) }

// profile maps squared scaled distances to rho(r).
func (k *Stationary) profile(r2 *Node) *Node {
	switch k.Kind {
	case "matern32", "matern52":
		// r = sqrt(max(r2, tiny)) keeps the gradient finite on the diagonal (r2 = 0).
		r := Sqrt(Max(r2, Scalar(r2.Graph(), r2.DType(), 1e-30)))
		if k.Kind == "matern32" {
			s3r := MulScalar(r, math.Sqrt(3))
			return Mul(OnePlus(s3r), Exp(Neg(s3r)))
		}
		s5r := MulScalar(r, math.Sqrt(5))
		return Mul(Add(OnePlus(s5r), MulScalar(r2, 5.0/3.0)), Exp(Neg(s5r)))
	}
	return Exp(MulScalar(r2, -0.5))
}

// hstack concatenates [N, c_i] blocks along columns. (With GoMLX v0.26.0 it multiplied by constant
// selection matrices, since Concatenate's second derivative needs Pad, which the pure-Go backend
// then lacked.)
func hstack(blocks ...*Node) *Node {
	return Concatenate(blocks, 1)
}
