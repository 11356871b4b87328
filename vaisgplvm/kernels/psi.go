package kernels

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Psi holds the SE-ARD kernel's expectations under Gaussian inputs q(x_n) = N(mu_n, diag s_n)
// (Titsias & Lawrence 2010, the psi statistics; GP-LVM-CMF derivation eqs. 16-17):
//
//	Psi0[n]       = E k(x_n, x_n)                         = s^2
//	Psi1[n, m]    = E k(x_n, z_m)                         = s^2 prod_q (1 + s_nq/l_q^2)^(-1/2) exp(-(mu_nq - z_mq)^2 / (2 (l_q^2 + s_nq)))
//	Psi2[n, m, m'] = E k(z_m, x_n) k(x_n, z_m')           = s^4 prod_q (1 + 2 s_nq/l_q^2)^(-1/2)
//	                  exp(-(z_mq - z_m'q)^2 / (4 l_q^2) - (mu_nq - (z_mq + z_m'q)/2)^2 / (l_q^2 + 2 s_nq))
//
// with s^2 the kernel variance and l_q the lengthscales. Summing Psi2 over n gives the [M, M]
// matrix <K_uf K_fu> of the bounds.
type Psi struct {
	Psi0 *Node // [N]
	Psi1 *Node // [N, M]
	Psi2 *Node // [N, M, M]
}

// PsiStatistics returns the psi statistics of the SE-ARD kernel for input means mu [N, Q], input
// variances s [N, Q] (> 0) and inducing inputs z [M, Q]. Errors: a kernel other than SE (the
// Matérn and linear kernels have no closed form here), or shapes that do not match.
func PsiStatistics(ctx *mlmodel.Scope, k Kernel, mu, s, z *Node) (*Psi, error) {
	st, ok := k.(*Stationary)
	if !ok || st.Kind != "se" {
		return nil, fmt.Errorf("kernels: psi statistics need the SE kernel, not %q", k.Name())
	}
	if mu.Rank() != 2 || !mu.Shape().Equal(s.Shape()) || z.Rank() != 2 || z.Shape().Dim(1) != mu.Shape().Dim(1) {
		return nil, fmt.Errorf("kernels: psi statistics need mu and s [N, Q] and z [M, Q]; got %s, %s, %s", mu.Shape(), s.Shape(), z.Shape())
	}
	g := mu.Graph()
	variance := st.variance(ctx, g)
	l2 := Square(st.Lengthscales(ctx, g))                     // [Q]
	l2a, l2b := InsertAxes(l2, 0, 0), InsertAxes(l2, 0, 0, 0) // [1, 1, Q], [1, 1, 1, Q]

	// Psi1: [N, M, Q] terms.
	den1 := Add(InsertAxes(s, 1), l2a)                                       // [N, 1, Q]
	d1 := Sub(InsertAxes(mu, 1), InsertAxes(z, 0))                           // [N, M, Q]
	log1 := MulScalar(Add(Log(Div(den1, l2a)), Div(Square(d1), den1)), -0.5) // [N, M, Q]
	psi1 := Mul(Exp(ReduceSum(log1, -1)), variance)

	// Psi2: [N, M, M, Q] terms.
	zm, zp := InsertAxes(z, 1), InsertAxes(z, 0)         // [M, 1, Q], [1, M, Q]
	dz := MulScalar(Square(Sub(zm, zp)), 0.25)           // [M, M, Q]
	zbar := MulScalar(Add(zm, zp), 0.5)                  // [M, M, Q]
	den2 := Add(MulScalar(InsertAxes(s, 1, 1), 2), l2b)  // [N, 1, 1, Q]
	d2 := Sub(InsertAxes(mu, 1, 1), InsertAxes(zbar, 0)) // [N, M, M, Q]
	log2 := Add(Add(MulScalar(Log(Div(den2, l2b)), 0.5), Div(InsertAxes(dz, 0), l2b)), Div(Square(d2), den2))
	psi2 := Mul(Exp(Neg(ReduceSum(log2, -1))), Square(variance))

	return &Psi{Psi0: constantDiag(mu, variance), Psi1: psi1, Psi2: psi2}, nil
}
