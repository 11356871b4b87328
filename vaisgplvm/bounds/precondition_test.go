package bounds_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
)

// TestPreconditionedEqualsPlainWhenLIsIdentity: with q0 = N(a, I) the whitened chain is the plain
// chain shifted by a, so the two bounds agree to rounding.
func TestPreconditionedEqualsPlainWhenLIsIdentity(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const k = 4
	m := tinyModel(t, tinyX, "vais", k)
	m.Latent.Scale0 = 1 // L_n = I at initialisation
	ctx := mlmodel.NewStore().RootScope()
	out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, x, idx, e0, ek *Node) []*Node {
		b := m.BatchFor(ctx, x, nil, idx)
		var eps []*Node
		for i := 0; i < k; i++ {
			eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
		}
		betas := Const(x.Graph(), linear(k))
		etas := MulScalar(OnesLike(betas), 0.05)
		plain, _ := bounds.VAIS(b, e0, eps, betas, etas, anneal.Options{})
		pre, _ := bounds.VAIS(b, e0, eps, betas, etas, anneal.Options{Precondition: true})
		return []*Node{plain.PerPoint, pre.PerPoint, plain.Particles, pre.Particles}
	}, tinyX, []int32{0, 1}, noise(rng, 3, 2, 1), noise(rng, k, 3, 2, 1))
	if d := testutil.MaxAbsDiff(vars.Flat64(out[0]), vars.Flat64(out[1])); d > 1e-9 {
		t.Errorf("per-point bounds differ by %g: plain %v preconditioned %v", d, vars.Flat64(out[0]), vars.Flat64(out[1]))
	}
	if d := testutil.MaxAbsDiff(vars.Flat64(out[2]), vars.Flat64(out[3])); d > 1e-9 {
		t.Errorf("chain ends H_K differ by %g", d)
	}
}

// gaussianGap runs VAIS on a conjugate problem with a known evidence: prior N(0, I_Q), likelihood
// exp(-|h - mu|^2 / (2 tau^2)) (unnormalised), q0 = N(posterior mean + offset, scale^2 I). It returns
// log Z - mean(L_n) and the standard error over the S chains. log Z is
// (Q/2) log(tau^2 / (1 + tau^2)) - |mu|^2 / (2 (1 + tau^2)).
func gaussianGap(t *testing.T, k int, eta float64, opt anneal.Options) (gap, se float64) {
	// q0 is off the posterior N(mu / (1 + tau^2), tau^2 / (1 + tau^2)) in mean and spread.
	const q, s, tau, mu, scale, offset = 4, 2000, 0.05, 0.8, 0.08, 0.04
	rng := rand.New(rand.NewPCG(uint64(k), 21))
	postMean := mu/(1+tau*tau) + offset
	out := MustExecOnce(testutil.Backend(), func(e0, ek *Node) *Node {
		g := e0.Graph()
		eye := ConstAsDType(g, e0.DType(), [][][]float64{identity(q, scale)})
		mean := Const(g, [][]float64{constVec(q, postMean)})
		b := &bounds.Batch{
			N:  1,
			Q0: &latent.Q0{Q: q, Mean: mean, Scale: eye},
			LogLik: func(h *Node) *Node {
				return MulScalar(ReduceSum(Square(AddScalar(h, -mu)), -1), -0.5/(tau*tau))
			},
			KLU: ScalarZero(g, e0.DType()),
		}
		var eps []*Node
		for i := 0; i < k; i++ {
			eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
		}
		betas := Const(g, linear(k))
		_, c := bounds.VAIS(b, e0, eps, betas, MulScalar(OnesLike(betas), eta), opt)
		return c.LogW
	}, noise(rng, s, 1, q), noise(rng, max(k, 1), s, 1, q))
	logZ := 0.5*q*math.Log(tau*tau/(1+tau*tau)) - q*mu*mu/(2*(1+tau*tau))
	w := vars.Flat64(out)
	var mean, sq float64
	for _, v := range w {
		mean += v / float64(len(w))
		sq += v * v / float64(len(w))
	}
	return logZ - mean, math.Sqrt((sq - mean*mean) / float64(len(w)))
}

// TestPreconditioningKeepsSharpChainsStable: with a sharp posterior (std 0.05) and q0 of a
// similar spread, plain Langevin with eta = 0.01 is unstable (eta times the target precision is
// about 4 > 2) and the bound collapses, while the preconditioned chain with a 20 times larger
// eta (0.2, relative to q0's spread: 0.2 x 0.08^2 x 401 = 0.5) stays below log Z and tightens the
// K = 0 bound.
func TestPreconditioningKeepsSharpChainsStable(t *testing.T) {
	const k, etaPlain, etaPre = 10, 0.01, 0.2
	pre := anneal.Options{Precondition: true}
	g0, se0 := gaussianGap(t, 0, etaPre, pre)
	gp, sep := gaussianGap(t, k, etaPre, pre)
	gPlain, _ := gaussianGap(t, k, etaPlain, anneal.Options{})
	t.Logf("gap K=0 %.4f ± %.4f; K=%d preconditioned %.4f ± %.4f; plain %.4g", g0, se0, k, gp, sep, gPlain)
	if gp < -4*sep || g0 < -4*se0 {
		t.Errorf("a bound exceeds log Z: gaps K=0 %.4f, K=%d %.4f", g0, k, gp)
	}
	if !(gp < g0-4*(sep+se0)) {
		t.Errorf("preconditioned K=%d gap %.4f is not below the K=0 gap %.4f", k, gp, g0)
	}
	if !(gPlain > 100*g0) {
		t.Errorf("plain Langevin with eta = %g should blow up here (gap %.4g vs K=0 %.4f); the test premise is wrong", etaPlain, gPlain, g0)
	}
}

func identity(q int, v float64) [][]float64 {
	m := make([][]float64, q)
	for i := range m {
		m[i] = make([]float64, q)
		m[i][i] = v
	}
	return m
}

func constVec(q int, v float64) []float64 {
	out := make([]float64, q)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestTamingBoundsAnUnstableChain: the plain chain with eta = 0.01 on the sharp target overflows
// (see above); with the tamed drift the same chain gives a finite bound below log Z, and with a
// small, stable eta taming changes the bound by little.
func TestTamingBoundsAnUnstableChain(t *testing.T) {
	const k = 10
	gUntamed, _ := gaussianGap(t, k, 0.01, anneal.Options{})
	gTamed, seTamed := gaussianGap(t, k, 0.01, anneal.Options{Tamed: true})
	t.Logf("eta 0.01: untamed gap %.4g, tamed gap %.4f ± %.4f", gUntamed, gTamed, seTamed)
	if !(gTamed > -4*seTamed) || !(gTamed < 50) {
		t.Errorf("tamed gap %.4f: want a finite bound below log Z (gap in [0, 50))", gTamed)
	}
	if !(gUntamed > 1e3*gTamed) {
		t.Errorf("the untamed chain should overflow here (gap %.4g vs tamed %.4f)", gUntamed, gTamed)
	}
	// eta = 1e-4 is stable (1e-4 x 401 << 2): taming is a small perturbation there.
	a, sa := gaussianGap(t, k, 1e-4, anneal.Options{})
	b, sb := gaussianGap(t, k, 1e-4, anneal.Options{Tamed: true})
	if math.Abs(a-b) > 4*(sa+sb)+0.05 {
		t.Errorf("eta 1e-4: untamed gap %.4f and tamed %.4f should agree", a, b)
	}
}
