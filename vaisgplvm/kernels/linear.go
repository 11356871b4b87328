package kernels

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Linear is the ARD linear kernel k(h, h') = sum_q v_q h_q h'_q with one variance v_q per latent
// dimension (initialised to Config.Variance). Variables (scope "kernel"): raw_variances [Q].
type Linear struct{ Config }

func init() { mustRegister("linear", func(cfg Config) Kernel { return &Linear{Config: cfg} }) }

// Name implements Kernel.
func (k *Linear) Name() string { return "linear" }

func (k *Linear) variances(ctx *mlmodel.Scope, g *Graph) *Node {
	return Positive(ctx.At("kernel"), g, "variances", k.Variance, k.Q)
}

// Lengthscales implements Kernel: 1/sqrt(v_q), so that small values mean relevant dimensions as
// for the stationary kernels.
func (k *Linear) Lengthscales(ctx *mlmodel.Scope, g *Graph) *Node {
	return Rsqrt(k.variances(ctx, g))
}

// Matrix implements Kernel: [N1, Q] x [N2, Q] -> [N1, N2] (Prepare(ctx, x2).Cross(x1)).
func (k *Linear) Matrix(ctx *mlmodel.Scope, x1, x2 *Node) *Node {
	return k.Prepare(ctx, x2).Cross(x1)
}

// Diag implements Kernel: [N, Q] -> [N].
func (k *Linear) Diag(ctx *mlmodel.Scope, x *Node) *Node {
	return linearDiag(x, InsertAxes(k.variances(ctx, x.Graph()), 0))
}

// linearDiag returns sum_q v_q x_nq^2: x [N, Q], v [1, Q] -> [N].
func linearDiag(x, v *Node) *Node { return ReduceSum(Mul(Square(x), v), -1) }

// Prepare implements Kernel: the variances and x2^T are built once.
func (k *Linear) Prepare(ctx *mlmodel.Scope, x2 *Node) Prepared {
	return &linearAt{v: InsertAxes(k.variances(ctx, x2.Graph()), 0), x2T: Transpose(x2, 0, 1)}
}

// linearAt is a Linear kernel prepared at x2.
type linearAt struct{ v, x2T *Node } // [1, Q], [Q, N2]

// Cross implements Prepared: [N1, Q] -> [N1, N2].
func (p *linearAt) Cross(x1 *Node) *Node { return MatMul(Mul(x1, p.v), p.x2T) }

// Diag implements Prepared: [N1, Q] -> [N1].
func (p *linearAt) Diag(x1 *Node) *Node { return linearDiag(x1, p.v) }
