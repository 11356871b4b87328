package gp

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// KL returns KL(q(u) || p(u)) summed over the D outputs (a scalar, in nats):
//
//	whitened:   sum_d 0.5 [tr(S_d S_d^T) + m_d^T m_d - M - log|S_d S_d^T|]
//	unwhitened: sum_d 0.5 [tr(Kuu^-1 S_d S_d^T) + m_d^T Kuu^-1 m_d - M + log|Kuu| - log|S_d S_d^T|]
//
// The diagonal of S_d is unconstrained (as in GPflow): log|S_d S_d^T| = sum_i log S_d,ii^2 holds
// for either sign, and a zero diagonal entry (a singular q(u)) gives +Inf.
func (p *Posterior) KL() *Node {
	m, d := float64(p.In.M), float64(p.In.D)
	eye := InsertAxes(linalg.Eye(p.S.Graph(), p.In.M, p.S.DType()), 0)
	logDetS := ReduceSum(Log(Square(ReduceSum(Mul(p.S, eye), -1))), -1) // [D]: log |S_d S_d^T|
	var tr, maha, logDetK *Node
	if p.In.Whitened {
		tr = ReduceAllSum(Square(p.S))
		maha = ReduceAllSum(Square(p.Mu))
		logDetK = ScalarZero(p.S.Graph(), p.S.DType())
	} else {
		tr = ReduceAllSum(Square(MatMul(InsertAxes(p.LInv, 0), p.S)))
		maha = ReduceAllSum(Square(MatMul(p.LInv, p.Mu)))
		logDetK = MulScalar(linalg.LogDetFromCholesky(p.L), d)
	}
	if p.In.SharedSqrt { // the one S serves all D outputs
		tr, logDetS = MulScalar(tr, d), MulScalar(logDetS, d)
	}
	kl := Sub(Add(Add(tr, maha), logDetK), ReduceAllSum(logDetS))
	return MulScalar(AddScalar(kl, -m*d), 0.5)
}
