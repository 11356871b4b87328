package anneal_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// goPaperD is App. D's recursion in float64: eta_k = 0.9 eta_{k-1} + 0.1 eta0 / sqrt(G_k + 1e-8),
// eta_0 = eta0, G_k = m_1 + ... + m_k.
func goPaperD(m []float64, eta0 float64) []float64 {
	out := make([]float64, len(m))
	prev, g := eta0, 0.0
	for k, v := range m {
		g += v
		out[k] = 0.9*prev + 0.1*eta0/math.Sqrt(g+1e-8)
		prev = out[k]
	}
	return out
}

// TestPaperDEtas: the graph's App. D step sizes equal the float64 recursion to 1e-14 relative,
// for made-up mean squared scores.
func TestPaperDEtas(t *testing.T) {
	m := []float64{0.5, 2, 4, 1e-3, 30}
	got := vars.Flat64(MustExecOnce(testutil.Backend(), func(m *Node) *Node { return anneal.PaperDEtas(m, 0.05) }, m))
	want := goPaperD(m, 0.05)
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-14*want[k] {
			t.Errorf("eta_%d = %.17g, want %.17g", k+1, got[k], want[k])
		}
	}
}

// TestPaperDAdapt: with StepSize.PaperD, Etas starts from mean squared scores of 1 (eta_k of the
// recursion with m = 1), Adapt stores the chain's per-transition mean squared scores, and the next
// Etas is the recursion on those; the stored values equal the mean of the squared scores computed
// in float64 from the chain's path (Gaussian target, untamed chain).
func TestPaperDAdapt(t *testing.T) {
	const k, s = 4, 30
	rule := anneal.StepSize{Eta0: 0.2, PaperD: true}
	if err := rule.Validate(); err != nil {
		t.Fatal(err)
	}
	if (anneal.StepSize{Eta0: 0.2, PaperD: true, Adaptive: true}).Validate() == nil {
		t.Error("PaperD with Adaptive: want an error")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	e0, ek := vars.Normal(rng, s, 1, accDim), vars.Normal(rng, k, s, 1, accDim)
	betas, _ := anneal.Fixed{Kind: "linear"}.BetaValues(k)
	ctx := mlmodel.NewStore().RootScope()
	exec := mlmodel.MustNewExec(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, e0, ek *Node) []*Node {
		g := e0.Graph()
		var eps []*Node
		for i := 0; i < k; i++ {
			eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
		}
		etas := rule.Etas(ctx, g, k)
		c := anneal.Run(e0, eps, Const(g, betas), etas,
			func(h *Node) *Node { return accLogN(h, accMu, accSigma) },
			func(h *Node) *Node { return accLogN(h, 0, 1) }, anneal.Options{})
		rule.Adapt(ctx, c)
		out := []*Node{etas}
		for _, h := range c.Path[:k] {
			out = append(out, Reshape(h, s, accDim))
		}
		return out
	})
	first := exec.MustExec(e0, ek)
	ones := []float64{1, 1, 1, 1}
	if got, want := vars.Flat64(first[0]), goPaperD(ones, 0.2); math.Abs(got[k-1]-want[k-1]) > 1e-14 {
		t.Errorf("initial etas %v, want %v", got, want)
	}
	// The mean squared score of transition j at H_{j-1}: beta_j grad log gamma + (1 - beta_j) grad log q0.
	m := make([]float64, k)
	for j := 0; j < k; j++ {
		h := vars.Flat64(first[1+j])
		for n := 0; n < s; n++ {
			a, b := goGradLogN(h[n*accDim:(n+1)*accDim], accMu, accSigma), goGradLogN(h[n*accDim:(n+1)*accDim], 0, 1)
			for i := range a {
				v := betas[j]*a[i] + (1-betas[j])*b[i]
				m[j] += v * v / (s * accDim)
			}
		}
	}
	second := exec.MustExec(e0, ek)
	got, want := vars.Flat64(second[0]), goPaperD(m, 0.2)
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-12*want[j] {
			t.Errorf("after Adapt: eta_%d = %.15g, want %.15g (m = %v)", j+1, got[j], want[j], m)
		}
	}
}

// TestStepSizeScale: Scale multiplies the step sizes of every rule (fixed, adaptive, App. D) and
// 0 or 1 leave them as they are, to 1e-14 relative.
func TestStepSizeScale(t *testing.T) {
	const k = 3
	for _, rule := range []anneal.StepSize{{Eta0: 0.2}, {Eta0: 0.2, Adaptive: true}, {Eta0: 0.2, PaperD: true}} {
		for _, scale := range []float64{0, 1, 0.25, 3} {
			scaled := rule
			scaled.Scale = scale
			ctx := mlmodel.NewStore().RootScope()
			out := mlmodel.MustNewExec(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, x *Node) []*Node {
				return []*Node{rule.Etas(ctx, x.Graph(), k), scaled.Etas(ctx, x.Graph(), k)}
			}).MustExec(float64(0))
			base, got := vars.Flat64(out[0]), vars.Flat64(out[1])
			want := scale
			if scale == 0 {
				want = 1
			}
			for i := range base {
				if math.Abs(got[i]-want*base[i]) > 1e-14*base[i] || !(base[i] > 0) {
					t.Errorf("%+v: eta_%d %g, want %g x %g", scaled, i+1, got[i], want, base[i])
				}
			}
		}
	}
}
