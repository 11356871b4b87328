package linalg

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

// SolveLower returns L^-1 B for lower-triangular L [n, n] (or [B, n, n]) and B [n, k] (or [B, n, k]).
// It multiplies by the triangular inverse, which is accurate for the well-conditioned factors of
// jittered kernel matrices and far cheaper than an unrolled substitution on every backend.
func SolveLower(l, b *Node) *Node {
	return MatMul(TriangularInverse(l), b)
}

// CholeskySolve returns A^-1 B = L^-T L^-1 B given the Cholesky factor L of A.
// l: [n, n] or [B, n, n]; b: [n, k] or [B, n, k].
func CholeskySolve(l, b *Node) *Node {
	x := TriangularInverse(l)
	return MatMul(transposeLast(x), MatMul(x, b))
}

// LogDetFromCholesky returns log det A = 2 sum_i log L_ii for the factor L of A: [n, n] gives a
// scalar, [B, n, n] gives [B].
func LogDetFromCholesky(l *Node) *Node {
	n := l.Shape().Dim(-1)
	diag := ReduceSum(Mul(l, diagonalMask(l, n)), -1)
	return MulScalar(ReduceSum(Log(diag), -1), 2)
}

// LogDet returns log det A for a symmetric positive-definite A: [n, n] gives a scalar, [B, n, n]
// gives [B]. NaN when A is not positive definite.
func LogDet(a *Node) *Node {
	return LogDetFromCholesky(Cholesky(a))
}

// transposeLast swaps the last two axes.
func transposeLast(x *Node) *Node {
	return Transpose(x, x.Rank()-2, x.Rank()-1)
}
