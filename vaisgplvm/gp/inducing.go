// Package gp holds the sparse variational GP over D outputs that share one kernel: inducing inputs
// Z [M, Q], the variational distribution q(u_d) = N(m_d, S_d S_d^T) (whitened by default), its KL
// divergence to the prior, the predictive marginals of f at latent points, and the Gaussian
// likelihood's analytic expected log-likelihood.
//
// Variables live under the context scope "inducing" (z, q_mu, q_sqrt) and "likelihood"
// (raw_noise_variance).
package gp

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// Inducing describes the inducing variables.
type Inducing struct {
	M, D, Q  int
	Whitened bool        // u = L v with Kuu = L L^T and q(v) = N(m, S S^T); else q(u) directly
	Z0       [][]float64 // initial inducing inputs [M, Q]
	Jitter   float64     // relative jitter: Kuu + Jitter * kernelVariance * I; 0 means linalg.DefaultJitter
	// SharedSqrt uses one S for every output (q(u_d) = N(m_d, S S^T)), as the optimal q(u) of
	// Titsias & Lawrence (2010) has for fully observed data. Costs O(M^2) instead of O(D M^2) per
	// point, which matters for images (D = 560, 784) with missing pixels.
	SharedSqrt bool
	// Bias0, when set ([D]), gives each output a learned constant mean function b_d (variable
	// "inducing/mean_bias") initialised to Bias0: f_d ~ GP(b_d, k). Nil: zero mean, as in the paper.
	Bias0 []float64
	// UnwhitenedScale is the initial diagonal of S_d when not whitened (sqrt of the kernel variance).
	UnwhitenedScale float64
}

// Validate reports inconsistent sizes.
func (in *Inducing) Validate() error {
	if in.M <= 0 || in.D <= 0 || in.Q <= 0 {
		return fmt.Errorf("gp: need M, D, Q > 0, got M=%d D=%d Q=%d", in.M, in.D, in.Q)
	}
	if len(in.Z0) != in.M {
		return fmt.Errorf("gp: initial Z has %d rows, want M=%d", len(in.Z0), in.M)
	}
	for i, r := range in.Z0 {
		if len(r) != in.Q {
			return fmt.Errorf("gp: initial Z row %d has %d columns, want Q=%d", i, len(r), in.Q)
		}
	}
	return nil
}

// Posterior is the part of the sparse GP that does not depend on the latent points: built once
// per graph and then evaluated at many latent points (the Langevin chain evaluates it K+1 times).
type Posterior struct {
	In     *Inducing
	Kernel kernels.Kernel
	ctx    *mlmodel.Scope
	Z      *Node // [M, Q]
	L      *Node // Cholesky factor of Kuu + jitter I: [M, M]
	LInv   *Node // L^-1: [M, M]
	Mu     *Node // variational means, one column per output: [M, D]
	S      *Node // lower-triangular square roots S_d: [D, M, M], or [1, M, M] when SharedSqrt
	Bias   *Node // constant mean function b [D], or nil (zero mean)

	// kz is the kernel prepared at Z: k(., Z) and k(h, h) without rebuilding Z's side per call.
	kz kernels.Prepared
	// Built on first use and shared by every Predict on this graph (see conditional.go).
	sigma, proj, meanProj *Node
	vFactor, gram         *Node // V = L^-1 Mu (unwhitened) and V V^T (see Projected)
	kGram                 *Node // G of Projected's kernel-space form
	masked, maskedFor     *Node // A_n for the mask node maskedFor (see MaskedMarginals)
}

// NewPosterior reads the inducing variables from ctx and factorises Kuu.
func NewPosterior(ctx *mlmodel.Scope, g *Graph, in *Inducing, k kernels.Kernel) *Posterior {
	c := ctx.At("inducing")
	p := &Posterior{In: in, Kernel: k, ctx: ctx}
	p.Z = vars.New(c, "z", in.Z0).ValueGraph(g)
	mu0 := make([][]float64, in.M)
	for i := range mu0 {
		mu0[i] = make([]float64, in.D)
	}
	p.Mu = vars.New(c, "q_mu", mu0).ValueGraph(g)
	if in.Bias0 != nil {
		p.Bias = vars.New(c, "mean_bias", in.Bias0).ValueGraph(g)
	}
	p.kz = k.Prepare(ctx, p.Z)
	kuu := p.kz.Cross(p.Z)
	jitter := in.Jitter
	if jitter == 0 {
		jitter = linalg.DefaultJitter
	}
	// The mean prior variance of u: the kernel variance for stationary kernels. A mean, not a max:
	// GoMLX passes a max's gradient to every tied entry, which counted the jitter's dependence on
	// the kernel variance M times.
	kvar := ReduceAllMean(p.kz.Diag(p.Z))
	eye := linalg.Eye(g, in.M, kuu.DType())
	kuu = Add(kuu, Mul(eye, MulScalar(kvar, jitter)))
	p.L, p.LInv = linalg.CholeskyWithInverse(kuu)

	// q_sqrt starts at the identity (whitened: q(v) = prior) or at sqrt(kernel variance) I
	// (unwhitened: a prior-scale q(u) that ignores the correlations of Kuu).
	scale := 1.0
	if !in.Whitened {
		scale = in.UnwhitenedScale
	}
	nS := in.D
	if in.SharedSqrt {
		nS = 1
	}
	s0 := make([][][]float64, nS)
	for d := range s0 {
		s0[d] = make([][]float64, in.M)
		for i := range s0[d] {
			s0[d][i] = make([]float64, in.M)
			s0[d][i][i] = scale
		}
	}
	p.S = TakeLowerTriangular(vars.New(c, "q_sqrt", s0).ValueGraph(g), 0)
	return p
}

// Cross returns k(h, Z) [N, M] at latent points h [N, Q], with the kernel prepared at Z once per
// Posterior (as every prediction uses it).
func (p *Posterior) Cross(h *Node) *Node { return p.kz.Cross(h) }

// KernelDiag returns k(h_n, h_n) [N] at latent points h [N, Q].
func (p *Posterior) KernelDiag(h *Node) *Node { return p.kz.Diag(h) }
