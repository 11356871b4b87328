package gp

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// NaturalStep returns q(u)'s parameters after one natural-gradient ascent step of size gamma on an
// objective F (Hensman et al. 2013; Salimbeni et al. 2018): with q(u_d) = N(m_d, S_d),
// S_d = L_d L_d^T, natural parameters theta_1 = S^-1 m, theta_2 = -S^-1 / 2 and expectation
// parameters eta_1 = m, eta_2 = S + m m^T, it sets theta <- theta + gamma dF/deta, which on a
// bound that is Gaussian-conjugate in q(u) (a Gaussian likelihood at fixed latent draws, with the
// KL to the prior) reaches its optimal q(u) in one step of gamma = 1. Whitened or not alike: the
// step is the same in any affine parameterisation of u.
//
// mu [M, D] holds the means m_d as columns and sqrt [D, M, M] the factors L_d (only their lower
// triangle is read); gMu [M, D] and gSqrt [D, M, M] are dF/dmu and dF/dsqrt (autodiff's gradients
// of the quantity to maximise, e.g. the ELBO in nats, not per point); gamma is a scalar in (0, 1].
// It returns the new mu [M, D] and lower-triangular sqrt [D, M, M]. dF/dS is recovered from dF/dL
// as dF/dS = L^-T A L^-1 / 2, A the symmetric matrix whose lower triangle is that of L^T dF/dL.
// A step whose new precision S^-1 - 2 gamma dF/dS is not positive definite gives NaN entries
// (lower gamma).
func NaturalStep(mu, sqrt, gMu, gSqrt, gamma *Node) (newMu, newSqrt *Node) {
	l := TakeLowerTriangular(sqrt, 0)
	lInv := linalg.TriangularInverse(l)
	lInvT := Transpose(lInv, 1, 2)
	b := MatMul(Transpose(l, 1, 2), TakeLowerTriangular(gSqrt, 0)) // L^T dF/dL [D, M, M]
	a := Add(TakeLowerTriangular(b, 0), Transpose(TakeLowerTriangular(b, -1), 1, 2))
	gS := MulScalar(MatMul(MatMul(lInvT, a), lInv), 0.5) // dF/dS [D, M, M]
	m := InsertAxes(Transpose(mu, 0, 1), -1)             // [D, M, 1]
	gM := InsertAxes(Transpose(gMu, 0, 1), -1)
	sInv := MatMul(lInvT, lInv)
	theta1 := Add(MatMul(sInv, m), Mul(gamma, Sub(gM, MulScalar(MatMul(gS, m), 2)))) // theta_1 + gamma dF/deta_1
	prec := Sub(sInv, MulScalar(Mul(gamma, gS), 2))                                  // -2 (theta_2 + gamma dF/deta_2)
	// The new S = prec^-1 and its lower factor from one factorisation: with J the exchange matrix
	// (rows and columns reversed), J prec J = R R^T gives S = (J R^-T J)(J R^-T J)^T, and
	// J R^-T J is lower triangular.
	_, rInv := linalg.CholeskyWithInverse(Reverse(symmetric(prec), 1, 2))
	newSqrt = Reverse(Transpose(rInv, 1, 2), 1, 2)
	cov := MatMul(newSqrt, Transpose(newSqrt, 1, 2))
	newMu = Transpose(Squeeze(MatMul(cov, theta1), -1), 0, 1)
	return newMu, newSqrt
}

// symmetric returns (x + x^T) / 2 over the last two axes: rounding leaves products that should be
// symmetric slightly off.
func symmetric(x *Node) *Node {
	return MulScalar(Add(x, Transpose(x, x.Rank()-2, x.Rank()-1)), 0.5)
}
