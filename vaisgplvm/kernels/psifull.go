package kernels

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// HasPsiStatistics reports whether k has closed-form psi statistics here (PsiStatistics,
// PsiStatisticsFull): the SE-ARD kernel only.
func HasPsiStatistics(k Kernel) bool {
	st, ok := k.(*Stationary)
	return ok && st.Kind == "se"
}

// PsiStatisticsFull returns the SE-ARD kernel's psi statistics (see Psi) under inputs with full
// covariances, q(x_n) = N(mu_n, S_n) with S_n = L_n L_n^T, as the latent package's q0 has them:
//
//	Psi1[n, m]     = s^2 |I + S_n Λ^-1|^(-1/2) exp(-(1/2) (mu_n - z_m)^T (Λ + S_n)^-1 (mu_n - z_m))
//	Psi2[n, m, m'] = s^4 |I + 2 S_n Λ^-1|^(-1/2) exp(-(1/4) (z_m - z_m')^T Λ^-1 (z_m - z_m')
//	                   - (1/2) (mu_n - zbar)^T (Λ/2 + S_n)^-1 (mu_n - zbar)),   zbar = (z_m + z_m')/2
//
// with Λ = diag(l_q^2). mu: [N, Q]; scale: L_n [N, Q, Q] lower triangular; z: [M, Q]. Returns Psi0
// [N], Psi1 [N, M], Psi2 [N, M, M]; with diagonal L_n it equals PsiStatistics at s = diag(L_n)^2.
// The quadratic forms go through the Cholesky factors C_n of Λ + S_n and Λ/2 + S_n: with
// w = C_n^-1 mu_n and v_m = C_n^-1 z_m, Psi2's form is |w - (v_m + v_m')/2|^2, expanded so that
// nothing of size [N, M, M, Q] is built. Errors: a kernel other than SE, shapes that do not match.
func PsiStatisticsFull(ctx *mlmodel.Scope, k Kernel, mu, scale, z *Node) (*Psi, error) {
	t, err := psiFull(ctx, k, mu, scale, z)
	if err != nil {
		return nil, err
	}
	logPsi2n, zdist := t.logPsi2()
	psi2 := Mul(Exp(Sub(logPsi2n, InsertAxes(zdist, 0))), Square(t.variance))
	return &Psi{Psi0: constantDiag(mu, t.variance), Psi1: t.psi1, Psi2: psi2}, nil
}

// PsiSumsFull returns what the collapsed bound needs of PsiStatisticsFull: psi0 = sum_n Psi0[n]
// (a scalar), Psi1 [N, M] and sum_n Psi2[n] [M, M], without building Psi2 [N, M, M] itself (the
// factors that do not depend on n are applied after the sum). Errors as PsiStatisticsFull's.
func PsiSumsFull(ctx *mlmodel.Scope, k Kernel, mu, scale, z *Node) (psi0, psi1, psi2 *Node, err error) {
	t, err := psiFull(ctx, k, mu, scale, z)
	if err != nil {
		return nil, nil, nil, err
	}
	psi0 = MulScalar(t.variance, float64(mu.Shape().Dim(0)))
	logPsi2n, zdist := t.logPsi2()
	psi2 = Mul(Mul(Exp(Neg(zdist)), ReduceSum(Exp(logPsi2n), 0)), Square(t.variance))
	return psi0, t.psi1, psi2, nil
}

// psiTerms are the parts of the full-covariance psi statistics: Psi1 [N, M], and what Psi2
// (logPsi2) and its covariance part (PsiCovarianceSumFull) are built from.
type psiTerms struct {
	variance, psi1, z *Node
	// What PsiCovarianceSumFull needs: the scale L_n [N, Q, Q], l^2 [Q], C1^-1 and C2^-1 [N, Q, Q]
	// (Λ + S_n = C1 C1^T, Λ/2 + S_n = C2 C2^T), a1 = C1^-1 (mu_n - z_m) and a2 = C2^-1 (mu_n - z_m)
	// [N, M, Q], half1 = (1/2) log|I + S_n Λ^-1| and half2 = (1/2) log|I + 2 S_n Λ^-1| [N].
	scale, l2, c1Inv, c2Inv, a1, a2, half1, half2 *Node
}

// psiFull computes psiTerms (see PsiStatisticsFull).
func psiFull(ctx *mlmodel.Scope, k Kernel, mu, scale, z *Node) (*psiTerms, error) {
	st, ok := k.(*Stationary)
	if !ok || st.Kind != "se" {
		return nil, fmt.Errorf("kernels: psi statistics need the SE kernel, not %q", k.Name())
	}
	n, q := mu.Shape().Dim(0), mu.Shape().Dim(-1)
	if mu.Rank() != 2 || scale.Rank() != 3 || scale.Shape().Dim(0) != n || scale.Shape().Dim(1) != q ||
		scale.Shape().Dim(2) != q || z.Rank() != 2 || z.Shape().Dim(1) != q {
		return nil, fmt.Errorf("kernels: full-covariance psi statistics need mu [N, Q], scale [N, Q, Q] and z [M, Q]; got %s, %s, %s",
			mu.Shape(), scale.Shape(), z.Shape())
	}
	g := mu.Graph()
	variance := st.variance(ctx, g)
	l2 := Square(st.Lengthscales(ctx, g)) // [Q]
	cov := Einsum("nij,nkj->nik", scale, scale)
	eye := InsertAxes(linalg.Eye(g, q, mu.DType()), 0) // [1, Q, Q]

	// Psi1 through C1 C1^T = Λ + S_n.
	w1, v1, half1, c1Inv := whitenedBy(Add(cov, Mul(eye, InsertAxes(l2, 0, 0))), l2, mu, z)
	a1 := Sub(InsertAxes(w1, 1), v1)
	quad1 := ReduceSum(Square(a1), -1) // [N, M]
	psi1 := Mul(Exp(Sub(MulScalar(quad1, -0.5), InsertAxes(half1, -1))), variance)

	// Psi2 through C2 C2^T = Λ/2 + S_n (logPsi2).
	l2h := MulScalar(l2, 0.5)
	w2, v2, half2, c2Inv := whitenedBy(Add(cov, Mul(eye, InsertAxes(l2h, 0, 0))), l2h, mu, z)
	return &psiTerms{variance: variance, psi1: psi1, z: z, scale: scale, l2: l2, c1Inv: c1Inv, c2Inv: c2Inv,
		a1: a1, a2: Sub(InsertAxes(w2, 1), v2), half1: half1, half2: half2}, nil
}

// logPsi2 returns Psi2[n] = variance^2 exp(logPsi2n[n] - zdist) as logPsi2n [N, M, M] and zdist
// [M, M]. With a2 = C2^-1 (mu_n - z_m), the whitened offset of the point's mean from z_m formed
// directly, |w - (v_m + v_m')/2|^2 = (|a_m|^2 + |a_m'|^2 + 2 a_m.a_m') / 4: no term grows with the
// distance of mu_n from the origin, so the exponent keeps the precision of the distances that
// matter (expanding around w instead left the bound with noise of 1e-4 nats per point on oil flow
// at a noise variance of 5e-5).
func (t *psiTerms) logPsi2() (logPsi2n, zdist *Node) {
	a := t.a2
	aa := MulScalar(ReduceSum(Square(a), -1), -0.125)                                    // [N, M]
	cross := MulScalar(Einsum("nmq,npq->nmp", a, a), -0.25)                              // [N, M, M]
	rowTerms := Add(InsertAxes(aa, -1), InsertAxes(Sub(aa, InsertAxes(t.half2, -1)), 1)) // [N, M, M]
	dz := Sub(InsertAxes(t.z, 1), InsertAxes(t.z, 0))                                    // [M, M, Q]
	zdist = MulScalar(ReduceSum(Div(Square(dz), InsertAxes(t.l2, 0, 0)), -1), 0.25)      // [M, M]
	return Add(cross, rowTerms), zdist
}

// whitenedBy factorises A_n = C_n C_n^T ([N, Q, Q], A_n = diag(d) + S_n) and returns w = C_n^-1 mu_n
// [N, Q], v = C_n^-1 z_m [N, M, Q], half = (1/2) log(|A_n| / |diag(d)|) [N] and C_n^-1 [N, Q, Q].
func whitenedBy(a, d, mu, z *Node) (w, v, half, cInv *Node) {
	c, cInv := linalg.CholeskyWithInverse(a)
	w = Einsum("nij,nj->ni", cInv, mu)
	v = Einsum("nij,mj->nmi", cInv, z)
	eye := InsertAxes(linalg.Eye(a.Graph(), a.Shape().Dim(-1), a.DType()), 0)
	logDiag := ReduceSum(Log(ReduceSum(Mul(c, eye), -1)), -1) // log |C_n| [N]
	half = Sub(logDiag, MulScalar(ReduceAllSum(Log(d)), 0.5))
	return w, v, half, cInv
}

// PsiCovarianceSumFull returns, beside PsiSumsFull's psi0 and Psi1 [N, M], the summed covariance
// of the features under q(x_n), Cov = sum_n (Psi2[n] - Psi1[n]^T Psi1[n]) [M, M] (positive
// semi-definite), computed without the cancellation of that difference: entry by entry,
// Psi2[n, m, m'] / (Psi1[n, m] Psi1[n, m']) = exp(delta) with
//
//	delta = log|I + S Λ^-1| - (1/2) log|I + 2 S Λ^-1|
//	        + abar^T (Λ + S)^-1 S (Λ + 2 S)^-1 abar - (1/4) d^T (Λ + S)^-1 S Λ^-1 d,
//
// abar = mu_n - (z_m + z_m')/2, d = z_m - z_m', each term a product that keeps its relative
// precision however small S_n is, and Cov = sum_n Psi1 Psi1 expm1(delta). The sum Psi2 of
// PsiSumsFull is Psi1^T Psi1 + Cov. The collapsed bound's data fit needs Cov to full precision
// when the noise variance is small (its quadratic form in q(u)'s mean is divided by it). Cov's
// gradient is written by hand (covarianceSum) and has no second derivative. Errors: as
// PsiStatisticsFull's.
func PsiCovarianceSumFull(ctx *mlmodel.Scope, k Kernel, mu, scale, z *Node) (psi0, psi1, cov *Node, err error) {
	t, err := psiFull(ctx, k, mu, scale, z)
	if err != nil {
		return nil, nil, nil, err
	}
	psi0 = MulScalar(t.variance, float64(mu.Shape().Dim(0)))
	// With a_m = mu_n - z_m: U_m = L^T (Λ + S)^-1 a_m, V_m = L^T (Λ + 2S)^-1 a_m, W_m = L^T Λ^-1 a_m
	// ([N, M, Q] each), abar = (a_m + a_m')/2 and d = a_m' - a_m, so the two forms are
	// (U_m + U_m').(V_m + V_m') / 4 and (U_m' - U_m).(W_m' - W_m) / 4; their difference is
	// (U_m.(V_m - W_m) + U_m'.(V_m' - W_m') + U_m.X_m' + X_m.U_m') / 4 with X = V + W: one product
	// of size [N, M, M].
	// The three come from one product with a: [U | X | V - W] = a [R_U | R_V + R_W | R_V - R_W]^T
	// with R_U = L^T (Λ + S)^-1, R_V = L^T (Λ + 2S)^-1, R_W = L^T Λ^-1 ([N, Q, Q] each).
	q := mu.Shape().Dim(-1)
	lt := Transpose(t.scale, 1, 2)                                                    // L_n^T [N, Q, Q]
	precision := func(cInv *Node) *Node { return Einsum("nji,njk->nik", cInv, cInv) } // C^-T C^-1
	ru := Einsum("nij,njk->nik", lt, precision(t.c1Inv))
	rv := MulScalar(Einsum("nij,njk->nik", lt, precision(t.c2Inv)), 0.5)
	rw := Div(lt, InsertAxes(t.l2, 0, 0))
	rs := Concatenate([]*Node{ru, Add(rv, rw), Sub(rv, rw)}, 1) // [N, 3Q, Q]
	a := Sub(InsertAxes(mu, 1), InsertAxes(z, 0))               // [N, M, Q]
	uxy := Einsum("nmj,nij->nmi", a, rs)                        // [N, M, 3Q]
	part := func(i int) *Node { return Slice(uxy, AxisRange(), AxisRange(), AxisRange(i*q, (i+1)*q)) }
	u, x := part(0), part(1)
	// delta = (U_m.X_m' + X_m.U_m' + r_m + r_m') / 4 with r_m = own_m + logDet / 2,
	// own_m = U_m.(V_m - W_m).
	own := ReduceSum(Mul(u, part(2)), -1)                       // [N, M]
	logDet := MulScalar(Sub(MulScalar(t.half1, 2), t.half2), 2) // [N]
	cov = covarianceSum(u, x, Add(own, InsertAxes(logDet, -1)), t.psi1)
	return psi0, t.psi1, cov, nil
}
