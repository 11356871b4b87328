package cmf

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// jitter is added to K_uu's diagonal, relative to the kernel variance.
const jitter = 1e-6

// noise is one step's standard normal draws: epsU [S, M, Dz] (u), beta [S, B, R] (X), xi
// [S, B, Dz] (f) and eta [S, B, Dz] (z). The baselines read eta only; the others are [S, 1, 1].
type noise struct{ epsU, beta, xi, eta *Node }

// draw is a family evaluated at a mini-batch: S samples z [S, B, Dz]; reg [S, B], the bound's
// terms besides log p(y | z) (the bound per point is log p(y | z) - reg), the sum of kl (term B,
// the KL to p(z)) and aux (term C, 0 for the baselines); and logQ [S, B], the log density ratio
// log q(z, a) - log r(a | z) of the sample (a: the auxiliary variables), so that
// log p(y | z) + log p(z) - logQ is the sample's log importance weight.
type draw struct {
	z, reg, kl, aux, logQ *Node
	// cmf only: the parameters read, q(z | X)'s variance v [B, Dz] (collapsed: k_ii + s^2) and
	// r(X | z)'s mean and log variance [S, B, R] at the samples z (what MarginalBound reuses).
	gp                *gpParts
	v, rMean, rLogVar *Node
}

// draw evaluates the model's family at the points idx [B] with data y [B, P].
func (m *Model) draw(ctx *mlmodel.Scope, y, idx *Node, nz noise) *draw {
	switch m.Cfg.Family {
	case "meanfield":
		g := y.Graph()
		local := ctx.At("local")
		mean := gatherRows(vars.New(local, "mean", m.init.mean).ValueGraph(g), idx)
		logVar := gatherRows(vars.New(local, "log_var", m.init.logVar).ValueGraph(g), idx)
		return gaussianDraw(mean, logVar, nz.eta)
	case "amortised":
		out := mlp(ctx, "encoder", y, m.Cfg.AuxHidden, m.Cfg.LatentDim, m.Cfg.LatentDim)
		return gaussianDraw(out[0], out[1], nz.eta)
	}
	return m.cmfDraw(ctx, idx, nz)
}

// gaussianDraw is the baselines' q(z_i) = N(mean_i, diag exp(logVar_i)) ([B, Dz] each): the
// closed-form KL(q(z_i) || N(0, I)) and the reparameterised samples mean + exp(logVar/2) eta.
func gaussianDraw(mean, logVar, eta *Node) *draw {
	sd := Exp(MulScalar(logVar, 0.5))
	z := Add(InsertAxes(mean, 0), Mul(InsertAxes(sd, 0), eta))
	kl := MulScalar(ReduceSum(Sub(Add(Exp(logVar), Square(mean)), OnePlus(logVar)), -1), 0.5) // [B]
	s := eta.Shape().Dim(0)
	logQ := logNormalStd(eta, InsertAxes(logVar, 0))
	klS := BroadcastToDims(InsertAxes(kl, 0), s, kl.Shape().Dim(0))
	return &draw{z: z, reg: klS, kl: klS, aux: ZerosLike(klS), logQ: logQ}
}

// logNormalStd returns log N(mean + exp(logVar/2) e | mean, diag exp(logVar)) from the standard
// normal draw e: sum over the last axis of -(log 2 pi + logVar + e^2) / 2.
func logNormalStd(e, logVar *Node) *Node {
	return MulScalar(ReduceSum(Add(AddScalar(logVar, math.Log(2*math.Pi)), Square(e)), -1), -0.5)
}

// gatherRows returns the rows idx [B] of v [N, C]: [B, C].
func gatherRows(v, idx *Node) *Node { return Gather(v, InsertAxes(idx, -1)) }

// gpParts are the cmf family's parameters at a batch of B points, as graph nodes: the inducing
// inputs zu [M, R], L^-1 for K_uu = L L^T [M, M], the whitened q(u~) mean kappa~ [M, Dz], the
// kernel variance kvar (scalar), s^2 of q(z | .) [B, Dz] and q(X)'s means phi and log variances
// logPhi [B, R].
type gpParts struct {
	gpc                                      *mlmodel.Scope
	zu, lInv, kappa, kvar, zVar, phi, logPhi *Node
}

// parts reads the cmf family's parameters for the points idx [B].
func (m *Model) parts(ctx *mlmodel.Scope, idx *Node, b int, dt dtypes.DType) *gpParts {
	c, g := m.Cfg, idx.Graph()
	p := &gpParts{gpc: ctx.At("gp")}
	local := ctx.At("local")
	p.zu = vars.New(p.gpc, "inducing", m.init.inducing).ValueGraph(g)
	p.kvar = ReduceMean(m.kernel.Diag(p.gpc, p.zu))
	kuu := Add(m.kernel.Matrix(p.gpc, p.zu, p.zu), MulScalar(Mul(linalg.Eye(g, c.M, dt), p.kvar), jitter))
	_, p.lInv = linalg.CholeskyWithInverse(kuu)
	p.kappa = vars.New(p.gpc, "q_mean_whitened", m.init.kappa).ValueGraph(g)
	p.zVar = m.zVariance(p.gpc, local, idx, b)
	p.phi = gatherRows(vars.New(local, "phi", m.init.mean).ValueGraph(g), idx)
	p.logPhi = gatherRows(vars.New(local, "log_phi_var", m.init.logVar).ValueGraph(g), idx)
	return p
}

// project returns A = K_xu L^-T for GP inputs x [S, B, R]: [S, B, M]; f's mean is A kappa~.
func (m *Model) project(p *gpParts, x *Node) *Node {
	s, b, r := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	kxu := Reshape(m.kernel.Matrix(p.gpc, Reshape(x, s*b, r), p.zu), s, b, m.Cfg.M)
	return Einsum("sbm,nm->sbn", kxu, p.lInv)
}

// cmfDraw is the GP-LVM-CMF family (see the package doc for the sampling path and the terms).
func (m *Model) cmfDraw(ctx *mlmodel.Scope, idx *Node, nz noise) *draw {
	c := m.Cfg
	dt := nz.eta.DType()
	s, b := nz.beta.Shape().Dim(0), nz.beta.Shape().Dim(1)
	dz, r := float64(c.LatentDim), c.InputDim
	p := m.parts(ctx, idx, b, dt)
	zu, lInv, kappa, kvar, zVar, phi, logPhi := p.zu, p.lInv, p.kappa, p.kvar, p.zVar, p.phi, p.logPhi
	gpc := p.gpc

	x := Add(InsertAxes(phi, 0), Mul(InsertAxes(Exp(MulScalar(logPhi, 0.5)), 0), nz.beta)) // [S, B, R]
	a := m.project(p, x)                                                                   // A = K_xu L^-T
	var f, v *Node                                                                         // z = f + sqrt(v) eta
	if c.Bound == "collapsed" {
		// u and f integrated out given X: q(z_i | X_i) = N(A_i kappa~, (k_ii + s^2) I), since the
		// whitened q(u~) = N(kappa~, I) gives f(X_i) the variance k_ii (stationary kernel: kvar).
		f = Einsum("sbm,md->sbd", a, kappa)
		v = Add(zVar, kvar)
	} else {
		u := Add(InsertAxes(kappa, 0), nz.epsU)                                  // whitened u~ [S, M, Dz]
		fMean := Einsum("sbm,smd->sbd", a, u)                                    // [S, B, Dz]
		fVar := Max(Sub(kvar, ReduceSum(Square(a), -1)), MulScalar(kvar, 1e-10)) // [S, B], floored for sqrt's gradient
		f = Add(fMean, Mul(InsertAxes(Sqrt(fVar), -1), nz.xi))
		v = zVar
	}
	logV := Log(v)                                   // [B, Dz]
	z := Add(f, Mul(InsertAxes(Sqrt(v), 0), nz.eta)) // [S, B, Dz]
	varTerm := ReduceSum(Sub(v, OnePlus(logV)), -1)  // sum_d (v_d - 1 - log v_d): [B]

	// Term B: E KL(N(f_i, diag v_i) || N(0, I)) (collapsed: f_i = A_i kappa~, v_i = k_ii + s_i^2).
	var termB *Node
	if c.TermB == "mc" {
		termB = MulScalar(Add(ReduceSum(Square(f), -1), InsertAxes(varTerm, 0)), 0.5)
	} else {
		psi, err := kernels.PsiStatistics(gpc, m.kernel, phi, Exp(logPhi), zu)
		if err != nil {
			panic(err) // New accepts only the SE kernel
		}
		w := MatMul(Transpose(lInv, 0, 1), kappa)                                          // L^-T kappa~ [M, Dz]
		quad := ReduceSum(Mul(Einsum("bmn,nd->bmd", psi.Psi2, w), InsertAxes(w, 0)), 1, 2) // E|A_i kappa~|^2: [B]
		perPoint := Add(quad, varTerm)
		if c.Bound != "collapsed" {
			perPoint = Add(perPoint, MulScalar(psi.Psi0, dz)) // the u and f spread, paid for in the KL
		}
		termB = BroadcastToDims(InsertAxes(MulScalar(perPoint, 0.5), 0), s, b)
	}
	// Term C: E[log q(X_i) - log r(X_i | z_i)] with the entropy of q(X_i) exact; r(u | z) = q(u).
	out := mlp(ctx, "aux", z, c.AuxHidden, r, r)
	logR := logNormal(x, out[0], out[1])                                                // [S, B]
	entropyX := MulScalar(ReduceSum(AddScalar(logPhi, 1+math.Log(2*math.Pi)), -1), 0.5) // [B]
	termC := Neg(Add(logR, InsertAxes(entropyX, 0)))

	logQzf := AddScalar(MulScalar(Add(ReduceSum(Square(nz.eta), -1), InsertAxes(ReduceSum(logV, -1), 0)), -0.5), -0.5*dz*math.Log(2*math.Pi))
	logQx := logNormalStd(nz.beta, InsertAxes(logPhi, 0))
	return &draw{z: z, reg: Add(termB, termC), kl: termB, aux: termC, logQ: Sub(Add(logQzf, logQx), logR),
		gp: p, v: v, rMean: out[0], rLogVar: out[1]}
}

// zVariance returns s^2 of q(z | f) (or of q(z | X), collapsed) for the batch's b points as
// [B, Dz]: one shared value (gp/raw_z_var), or with Cfg.PointVar each point's own diagonal
// (local/raw_z_var [N, Dz]; a held-out model starts them at ZVar0).
func (m *Model) zVariance(gpc, local *mlmodel.Scope, idx *Node, b int) *Node {
	c, g := m.Cfg, idx.Graph()
	if c.PointVar {
		raw := vars.New(local, "raw_z_var", filled(m.N, c.LatentDim, vars.InvSoftplus(c.ZVar0))).ValueGraph(g)
		return Softplus(gatherRows(raw, idx))
	}
	v := Softplus(vars.New(gpc, "raw_z_var", vars.InvSoftplus(c.ZVar0)).ValueGraph(g))
	return BroadcastToDims(v, b, c.LatentDim)
}
