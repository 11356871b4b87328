package kernels

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

// covarianceSum returns Cov = sum_n Psi1[n]^T Psi1[n] ⊙ expm1(delta_n) [M, M] (PsiCovarianceSumFull)
// for the exponent delta_n[m, m'] = (u_m.x_m' + x_m.u_m' + r_m + r_m') / 4, symmetric in m, m'.
// u, x: [N, M, Q]; r, psi1: [N, M].
//
// The [N, M, M] work dominates the collapsed bound's cost, so its gradient is written by hand
// rather than left to autodiff: one expm1 per entry (exp(delta) = 1 + expm1(delta) in the
// gradient), the symmetry of delta used to get du, dx and dr from one batched product, and no
// transposes of [N, M, M] tensors. With G [M, M] the adjoint of Cov and Gs = G + G^T:
//
//	d delta_n = Gs/2 ⊙ Psi1[n]^T Psi1[n] ⊙ exp(delta_n)
//	[du | dx | dr]_n = (d delta_n / 2) [x | u | 1]_n
//	dPsi1[n, m] = sum_m' Gs[m, m'] Psi1[n, m'] expm1(delta_n[m, m'])
//
// First derivatives only: the gradient graph is built from stopped values, so a second derivative
// through Cov is zero.
func covarianceSum(u, x, r, psi1 *Node) *Node {
	m, q := psi1.Shape().Dim(1), u.Shape().Dim(-1)
	// in = [u | x | r | Psi1] [N, M, 2Q+2] carries the gradient (see below); the forward pass reads
	// it stopped.
	in := Concatenate([]*Node{u, x, InsertAxes(r, -1), InsertAxes(psi1, -1)}, -1)
	column := func(t *Node, from, to int) *Node { return Slice(t, AxisRange(), AxisRange(), AxisRange(from, to)) }
	sin := StopGradient(in)
	su, sx, sr := column(sin, 0, q), column(sin, q, 2*q), column(sin, 2*q, 2*q+1)
	sp := Squeeze(column(sin, 2*q+1, 2*q+2), -1)
	ones := OnesLike(sr)
	left := MulScalar(Concatenate([]*Node{su, sx, sr, ones}, -1), 0.25)
	right := Concatenate([]*Node{sx, su, ones, sr}, -1)
	em1 := Expm1(Einsum("nmk,npk->nmp", left, right))   // expm1(delta) [N, M, M]
	outer := Mul(InsertAxes(sp, -1), InsertAxes(sp, 1)) // [N, M, M]
	terms := Mul(outer, em1)
	cov := ReduceSum(terms, 0)

	// The gradient enters through an identity on in, whose first M*M entries also form a link
	// that adds zero to Cov's value and carries Cov's adjoint G back to it.
	dep := IdentityWithCustomGradient(in, func(_, v *Node) *Node {
		g := Reshape(Slice(Reshape(v, -1), AxisRange(0, m*m)), m, m)
		gs := Add(g, Transpose(g, 0, 1))                                   // [M, M]
		half := Mul(Add(outer, terms), InsertAxes(MulScalar(gs, 0.25), 0)) // (d delta) / 2
		d := Einsum("nmp,npk->nmk", half, Concatenate([]*Node{sx, su, ones}, -1))
		dp := Einsum("nmp,np->nm", Mul(em1, InsertAxes(gs, 0)), sp)
		return Concatenate([]*Node{d, InsertAxes(dp, -1)}, -1)
	})
	link := Reshape(Slice(Reshape(dep, -1), AxisRange(0, m*m)), m, m)
	return Add(StopGradient(cov), Sub(link, StopGradient(link)))
}
