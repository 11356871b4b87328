package gp

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck
)

// Marginals are the predictive marginals of f at latent points.
type Marginals struct {
	Mean *Node // [N, D]
	// Var is the per-output variance [N, D] when computed per output, else nil.
	Var *Node
	// VarSum is sum_d Var[n, d]: [N]. Always set.
	VarSum *Node
}

// Predict returns the marginals q(f_d(h_n)) = N(mean_nd, var_nd) at h [N, Q]:
//
//	psi  = K(h, Z) L^-T                         [N, M]
//	P    = psi (whitened) or psi L^-1            [N, M]
//	mean = P m                                   [N, D]
//	var  = k(h, h) - |psi_n|^2 + |S_d^T P_n|^2    [N, D]
//
// perOutput=false computes only sum_d var (through Sigma = sum_d S_d S_d^T, cheaper when D is large
// and there is no missing data).
func (p *Posterior) Predict(h *Node, perOutput bool) Marginals {
	kfu := p.Kernel.Matrix(p.ctx, h, p.Z)       // [N, M]
	psi := MatMul(kfu, Transpose(p.LInv, 0, 1)) // [N, M]
	proj := psi
	if !p.In.Whitened {
		proj = MatMul(psi, p.LInv)
	}
	mean := MatMul(proj, p.Mu)
	base := Sub(p.Kernel.Diag(p.ctx, h), ReduceSum(Square(psi), -1)) // [N]
	d := float64(p.In.D)
	if perOutput {
		t := Einsum("nm,dmk->ndk", proj, p.S)                    // [N, D, M]
		v := Add(InsertAxes(base, -1), ReduceSum(Square(t), -1)) // [N, D]
		return Marginals{Mean: mean, Var: v, VarSum: ReduceSum(v, -1)}
	}
	quad := ReduceSum(Mul(MatMul(proj, p.sumSST()), proj), -1) // [N]
	return Marginals{Mean: mean, VarSum: Add(MulScalar(base, d), quad)}
}

// sumSST returns Sigma = sum_d S_d S_d^T [M, M] as one contraction over (d, k), built once per
// Posterior (the chain calls Predict K+1 times).
func (p *Posterior) sumSST() *Node {
	if p.sigma == nil {
		p.sigma = DotGeneral(p.S, []int{0, 2}, nil, p.S, []int{0, 2}, nil)
	}
	return p.sigma
}
