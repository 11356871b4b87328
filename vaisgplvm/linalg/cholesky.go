package linalg

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph ops read like math
)

// BaseBlock is the size at or below which the forward factorisation is unrolled column by column
// instead of being split in halves. Larger values mean fewer, larger recursive steps; 16 was the
// fastest on the pure-Go backend (docs/benchmarks.md, "Figures behind the code's choices").
var BaseBlock = 16

// Cholesky returns the lower-triangular factor L with A = L L^T.
//
// a: [n, n] or [B, n, n], symmetric positive definite; only its lower triangle is read.
// Returns L with the shape of a. Differentiable to any order (see the package doc).
// A matrix that is not positive definite gives NaN entries in L.
func Cholesky(a *Node) *Node {
	l, _ := CholeskyWithInverse(a)
	return l
}

// CholeskyWithInverse returns L (A = L L^T) and its inverse L^-1, both lower triangular and both
// differentiable. Computing them together costs about the same as computing L alone.
//
// a: [n, n] or [B, n, n]. Returns two nodes with the shape of a.
func CholeskyWithInverse(a *Node) (l, lInv *Node) {
	a3, unbatch := asBatch(a)
	lVal, xVal := cholInvForward(StopGradient(a3))
	l, lInv = attachCholeskyGradient(a3, lVal, xVal)
	return unbatch(l), unbatch(lInv)
}

// TriangularInverse returns L^-1 for a lower-triangular, non-singular L: [n, n] or [B, n, n].
// Differentiable to any order. Only the lower triangle of l is read.
func TriangularInverse(l *Node) *Node {
	l3, unbatch := asBatch(l)
	xVal := triInvForward(StopGradient(TakeLowerTriangular(l3, 0)))
	return unbatch(attachInverseGradient(TakeLowerTriangular(l3, 0), xVal))
}

// asBatch reshapes [n, n] to [1, n, n] and returns the function that undoes it.
func asBatch(a *Node) (*Node, func(*Node) *Node) {
	switch {
	case a.Rank() == 2 && a.Shape().Dim(0) == a.Shape().Dim(1):
		n := a.Shape().Dim(0)
		return Reshape(a, 1, n, n), func(x *Node) *Node { return Reshape(x, n, n) }
	case a.Rank() == 3 && a.Shape().Dim(1) == a.Shape().Dim(2):
		return a, func(x *Node) *Node { return x }
	}
	panic(fmt.Errorf("linalg: want a square matrix [n, n] or a batch [B, n, n], got shape %s", a.Shape())) // an error value: GoMLX turns it into the Exec's error
}

// cholInvForward computes (L, L^-1) of a batch [B, n, n] by recursive halving; gradients are not
// defined through it (its input must be stopped).
func cholInvForward(a *Node) (l, x *Node) {
	n := a.Shape().Dim(1)
	if n <= BaseBlock {
		return cholInvUnrolled(a)
	}
	h := n / 2
	a11 := Slice(a, AxisRange(), AxisRange(0, h), AxisRange(0, h))
	a21 := Slice(a, AxisRange(), AxisRange(h, n), AxisRange(0, h))
	a22 := Slice(a, AxisRange(), AxisRange(h, n), AxisRange(h, n))
	l11, x11 := cholInvForward(a11)
	l21 := MatMul(a21, Transpose(x11, 1, 2))
	l22, x22 := cholInvForward(Sub(a22, MatMul(l21, Transpose(l21, 1, 2))))
	x21 := Neg(MatMul(x22, MatMul(l21, x11)))
	return joinLower(l11, l21, l22), joinLower(x11, x21, x22)
}

// triInvForward computes L^-1 of a lower-triangular batch by recursive halving (no gradient).
func triInvForward(l *Node) *Node {
	n := l.Shape().Dim(1)
	if n <= BaseBlock {
		return triInvUnrolled(l)
	}
	h := n / 2
	x11 := triInvForward(Slice(l, AxisRange(), AxisRange(0, h), AxisRange(0, h)))
	x22 := triInvForward(Slice(l, AxisRange(), AxisRange(h, n), AxisRange(h, n)))
	l21 := Slice(l, AxisRange(), AxisRange(h, n), AxisRange(0, h))
	return joinLower(x11, Neg(MatMul(x22, MatMul(l21, x11))), x22)
}

// joinLower assembles [[b11, 0], [b21, b22]] from its blocks.
func joinLower(b11, b21, b22 *Node) *Node {
	zeros := ZerosLike(Transpose(b21, 1, 2))
	top := Concatenate([]*Node{b11, zeros}, 2)
	bottom := Concatenate([]*Node{b21, b22}, 2)
	return Concatenate([]*Node{top, bottom}, 1)
}

// cholInvUnrolled factors a small batch [B, n, n] column by column, right-looking, and inverts
// the factor in the same loop: step j takes column j of L from the Schur complement S (l_j =
// S e_j / sqrt(S_jj), rows >= j), updates S -= l_j l_j^T, and applies the step's row operations to
// X (row j divided by L_jj, then row i minus L_ij times it for i > j), which turns X = I into
// L^-1. X divides by the stored L_jj itself, so X inverts exactly the L returned (with the
// reciprocal square root, off by an ulp, the projected fit's gradients moved twice as far from the
// direct form's: gp/projected_test.go). Each step is element-wise work and outer products
// (broadcast multiplies), with no matrix product: a 50 x 50 factor and inverse with its gradient
// take 954 graph nodes instead of the 1296 of a left-looking factorisation followed by a
// substitution (one matrix-vector product per column and per row).
func cholInvUnrolled(a *Node) (l, x *Node) {
	g := a.Graph()
	dt := a.DType()
	batch, n := a.Shape().Dim(0), a.Shape().Dim(1)
	s := a
	x = eyeBatch(g, dt, batch, n)
	cols := make([]*Node, n)
	for j := 0; j < n; j++ {
		c := Slice(s, AxisRange(), AxisRange(), AxisRange(j, j+1)) // [B, n, 1]
		d := Sqrt(Slice(c, AxisRange(), AxisRange(j, j+1), AxisRange()))
		cols[j] = Mul(Div(c, d), rowRange(g, dt, n, j, n)) // column j of L, zero above j
		if j < n-1 {
			s = Sub(s, Mul(cols[j], Transpose(cols[j], 1, 2)))
		}
		x = eliminate(x, cols[j], Slice(cols[j], AxisRange(), AxisRange(j, j+1), AxisRange()), j)
	}
	return Concatenate(cols, 2), x
}

// eliminate applies step j of a column-oriented forward substitution to all columns of x at once:
// x_j <- x_j / L_jj (ljj [B, 1, 1]), then x_i <- x_i - L_ij x_j for i > j. lCol is column j of
// L [B, n, 1], zero above row j, with the same L_jj.
func eliminate(x, lCol, ljj *Node, j int) *Node {
	g, dt, n := x.Graph(), x.DType(), x.Shape().Dim(1)
	xj := Div(Slice(x, AxisRange(), AxisRange(j, j+1), AxisRange()), ljj) // new row j [B, 1, n]
	u := Sub(lCol, rowRange(g, dt, n, j, j+1))                            // L_jj - 1 at row j
	return Sub(x, Mul(u, xj))
}

// triInvUnrolled inverts a small lower-triangular batch [B, n, n] by column-oriented forward
// substitution on the identity (eliminate), one column of l per step. l must be zero above its
// diagonal (TriangularInverse takes the lower triangle before its blocks reach here).
func triInvUnrolled(l *Node) *Node {
	g := l.Graph()
	dt := l.DType()
	batch, n := l.Shape().Dim(0), l.Shape().Dim(1)
	x := eyeBatch(g, dt, batch, n)
	for j := 0; j < n; j++ {
		c := Slice(l, AxisRange(), AxisRange(), AxisRange(j, j+1))
		x = eliminate(x, c, Slice(c, AxisRange(), AxisRange(j, j+1), AxisRange()), j)
	}
	return x
}

// eyeBatch is the identity I_n repeated for a batch: [batch, n, n].
func eyeBatch(g *Graph, dt dtypes.DType, batch, n int) *Node {
	return BroadcastToShape(ExpandLeftToRank(Eye(g, n, dt), 3), shapes.Make(dt, batch, n, n))
}

// rowRange is the constant [1, n, 1] column with ones in rows from <= i < to and zeros elsewhere
// (rows >= j: rowRange(j, n); e_j: rowRange(j, j+1)).
func rowRange(g *Graph, dt dtypes.DType, n, from, to int) *Node {
	m := make([][]float64, n)
	for i := range m {
		m[i] = []float64{0}
		if i >= from && i < to {
			m[i][0] = 1
		}
	}
	return ConstAsDType(g, dt, [][][]float64{m})
}

// attachCholeskyGradient returns nodes equal to lVal and xVal = lVal^-1 whose gradients with
// respect to a follow the closed form of Murray (2016): Abar = sym(L^-T Phi(L^T Lbar) L^-1).
func attachCholeskyGradient(a, lVal, xVal *Node) (l, lInv *Node) {
	grad := func(_, lBar *Node) *Node {
		lBar = TakeLowerTriangular(lBar, 0)
		p := phi(MatMul(Transpose(l, 1, 2), lBar))
		s := MatMul(Transpose(lInv, 1, 2), MatMul(p, lInv))
		return MulScalar(Add(s, Transpose(s, 1, 2)), 0.5)
	}
	l = Add(StopGradient(lVal), Sub(IdentityWithCustomGradient(a, grad), StopGradient(a)))
	lInv = attachInverseGradient(l, xVal)
	return l, lInv
}

// attachInverseGradient returns a node equal to xVal = L^-1 whose gradient with respect to the
// lower-triangular l is Lbar = -tril(X^T Xbar X^T).
func attachInverseGradient(l, xVal *Node) *Node {
	var x *Node
	grad := func(_, xBar *Node) *Node {
		xt := Transpose(x, 1, 2)
		return Neg(TakeLowerTriangular(MatMul(xt, MatMul(xBar, xt)), 0))
	}
	x = Add(StopGradient(xVal), Sub(IdentityWithCustomGradient(l, grad), StopGradient(l)))
	return x
}

// phi keeps the lower triangle of a batch of matrices and halves its diagonal.
func phi(m *Node) *Node {
	n := m.Shape().Dim(-1)
	strict := TakeLowerTriangular(m, -1)
	diag := Mul(m, diagonalMask(m, n))
	return Add(strict, MulScalar(diag, 0.5))
}

// diagonalMask is the identity matrix of size n with the dtype and rank of x (leading axes of size 1).
func diagonalMask(x *Node, n int) *Node {
	return ExpandLeftToRank(Eye(x.Graph(), n, x.DType()), x.Rank())
}

// Eye returns the identity matrix I_n [n, n] of the given dtype.
func Eye(g *Graph, n int, dtype dtypes.DType) *Node {
	return ConvertDType(Diagonal(g, n), dtype)
}
