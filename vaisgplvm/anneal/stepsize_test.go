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

// The test target of this file: q0 = N(0, I) and gamma(h) = N(h | mu, sigma^2 I) in dim dimensions.
const (
	accDim          = 2
	accMu, accSigma = 1.5, 0.5
)

func accLogN(h *Node, m, sd float64) *Node {
	z := DivScalar(AddScalar(h, -m), sd)
	return AddScalar(MulScalar(ReduceSum(Square(z), -1), -0.5), -float64(accDim)*(math.Log(sd)+0.5*math.Log(2*math.Pi)))
}

// goLogN is accLogN in plain float64, and goGradLogN its gradient.
func goLogN(h []float64, m, sd float64) float64 {
	s := 0.0
	for _, v := range h {
		s += (v - m) * (v - m) / (sd * sd)
	}
	return -0.5*s - float64(len(h))*(math.Log(sd)+0.5*math.Log(2*math.Pi))
}

func goGradLogN(h []float64, m, sd float64) []float64 {
	g := make([]float64, len(h))
	for i, v := range h {
		g[i] = -(v - m) / (sd * sd)
	}
	return g
}

// goMALALogRatio is the Metropolis-Hastings log ratio of the Langevin move h -> h2 under
// log pi = beta log gamma + (1 - beta) log q0 (gamma with standard deviation sigma), written with the Gaussian kernel densities
// F(h2|h) = N(h2 | h + eta g(h), 2 eta I) and B(h|h2) = N(h | h2 + eta g(h2), 2 eta I):
// an independent form of Chain.LogAccept (which uses R_{k-1}).
func goMALALogRatio(h, h2 []float64, beta, eta, sigma float64) float64 {
	logPi := func(x []float64) float64 { return beta*goLogN(x, accMu, sigma) + (1-beta)*goLogN(x, 0, 1) }
	grad := func(x []float64) []float64 {
		a, b := goGradLogN(x, accMu, sigma), goGradLogN(x, 0, 1)
		for i := range a {
			a[i] = beta*a[i] + (1-beta)*b[i]
		}
		return a
	}
	logKernel := func(to, from []float64) float64 {
		g := grad(from)
		s := 0.0
		for i := range to {
			d := to[i] - from[i] - eta*g[i]
			s += d * d
		}
		return -s / (4 * eta)
	}
	return logPi(h2) - logPi(h) + logKernel(h, h2) - logKernel(h2, h)
}

// TestLogAcceptMatchesKernelDensities: the chain's log a_k (built from R_{k-1}) equals the MH ratio
// computed from the kernel densities in float64, chain by chain, at every step.
func TestLogAcceptMatchesKernelDensities(t *testing.T) {
	const k, s = 3, 50
	etas := []float64{0.3, 0.1, 0.05}
	rng := rand.New(rand.NewPCG(3, 4))
	e0 := vars.Normal(rng, 1, s, 1, accDim)
	ek := vars.Normal(rng, k, s, 1, accDim)
	betas, _ := anneal.Fixed{Kind: "linear"}.BetaValues(k)
	out := MustExecOnceN(testutil.Backend(), func(e0, ek *Node) []*Node {
		var eps []*Node
		for i := 0; i < k; i++ {
			eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
		}
		g := e0.Graph()
		c := anneal.Run(Squeeze(e0, 0), eps, Const(g, betas), Const(g, etas),
			func(h *Node) *Node { return accLogN(h, accMu, accSigma) },
			func(h *Node) *Node { return accLogN(h, 0, 1) }, anneal.Options{})
		out := append([]*Node{}, c.LogAccept...)
		for _, h := range c.Path {
			out = append(out, Reshape(h, s, accDim))
		}
		return append(out, c.AcceptRates(), c.MeanLogAccept())
	}, e0, ek)
	worst := 0.0
	for step := 0; step < k; step++ {
		la := vars.Flat64(out[step])
		from, to := vars.Flat64(out[k+step]), vars.Flat64(out[k+step+1])
		mean, meanLog := 0.0, 0.0
		for n := 0; n < s; n++ {
			want := goMALALogRatio(from[n*accDim:(n+1)*accDim], to[n*accDim:(n+1)*accDim], betas[step], etas[step], accSigma)
			worst = math.Max(worst, math.Abs(la[n]-want)/(1+math.Abs(want)))
			mean += math.Min(1, math.Exp(want)) / s
			meanLog += want / s
		}
		if got := vars.Flat64(out[2*k+1])[step]; math.Abs(got-mean) > 1e-12 {
			t.Errorf("step %d: AcceptRates %.15f, want %.15f", step+1, got, mean)
		}
		if got := vars.Flat64(out[2*k+2])[step]; math.Abs(got-meanLog) > 1e-10*(1+math.Abs(meanLog)) {
			t.Errorf("step %d: MeanLogAccept %.15f, want %.15f", step+1, got, meanLog)
		}
	}
	if worst > 1e-10 {
		t.Errorf("log a_k differs from the kernel-density MH ratio by %.3g (relative), want <= 1e-10", worst)
	}
}

// goAcceptRates runs n chains of the (untamed) annealed Langevin transitions in float64 with the
// given betas and etas (target standard deviation sigma) and returns the mean min(1, a_k) of each
// step: a brute-force reference.
func goAcceptRates(betas, etas []float64, sigma float64, n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	rates := make([]float64, len(betas))
	for c := 0; c < n; c++ {
		h := make([]float64, accDim)
		for i := range h {
			h[i] = rng.NormFloat64()
		}
		for k, beta := range betas {
			g := goGradLogN(h, accMu, sigma)
			q := goGradLogN(h, 0, 1)
			h2 := make([]float64, accDim)
			for i := range h {
				h2[i] = h[i] + etas[k]*(beta*g[i]+(1-beta)*q[i]) + math.Sqrt(2*etas[k])*rng.NormFloat64()
			}
			rates[k] += math.Min(1, math.Exp(goMALALogRatio(h, h2, beta, etas[k], sigma))) / float64(n)
			h = h2
		}
	}
	return rates
}

// TestAdaptiveStepSizeReachesTarget: starting from a far too large eta, the adaptive rule brings
// every transition's acceptance rate to the target; the rates are then checked by an independent
// float64 simulation of 200000 chains at the adapted etas.
func TestAdaptiveStepSizeReachesTarget(t *testing.T) {
	const k, s, iters = 3, 400, 300
	step := anneal.StepSize{Eta0: 2, Adaptive: true, TargetAccept: 0.7, AdaptRate: 0.05}
	if err := step.Validate(); err != nil {
		t.Fatal(err)
	}
	betas, _ := anneal.Fixed{Kind: "linear"}.BetaValues(k)
	ctx := mlmodel.NewStore().RootScope()
	exec := mlmodel.MustNewExec(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, e0, ek *Node) *Node {
		var eps []*Node
		for i := 0; i < k; i++ {
			eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
		}
		g := e0.Graph()
		c := anneal.Run(Squeeze(e0, 0), eps, Const(g, betas), step.Etas(ctx, g, k),
			func(h *Node) *Node { return accLogN(h, accMu, accSigma) },
			func(h *Node) *Node { return accLogN(h, 0, 1) }, anneal.Options{})
		step.Adapt(ctx, c)
		return c.AcceptRates()
	})
	rng := rand.New(rand.NewPCG(5, 6))
	var first []float64
	for it := 0; it < iters; it++ {
		out := exec.MustExec(vars.Normal(rng, 1, s, 1, accDim), vars.Normal(rng, k, s, 1, accDim))
		if it == 0 {
			first = vars.Flat64(out[0])
		}
	}
	v := ctx.At("anneal").GetVariable("log_eta")
	if v == nil {
		t.Fatal("adaptive step size created no anneal/log_eta variable")
	}
	if v.Trainable {
		t.Error("adaptive log_eta must not be trainable (the rule, not the optimiser, sets it)")
	}
	logEta := vars.Flat64(v.MustValue())
	etas := make([]float64, k)
	for i, l := range logEta {
		etas[i] = math.Exp(l)
	}
	ref := goAcceptRates(betas, etas, accSigma, 200000, 7)
	t.Logf("acceptance at eta0 = 2: %.3f; adapted etas %.4f; float64 reference acceptance %.3f (target 0.7)", first, etas, ref)
	for i := range ref {
		if first[i] > 0.5 {
			t.Errorf("step %d: acceptance %.3f at eta 2 should be low (the test needs a far-off start)", i+1, first[i])
		}
		if math.Abs(ref[i]-0.7) > 0.03 {
			t.Errorf("step %d: acceptance %.3f at the adapted eta %.4f, want 0.7 ± 0.03", i+1, ref[i], etas[i])
		}
	}
}

func TestStepSizeValidate(t *testing.T) {
	for _, bad := range []anneal.StepSize{
		{Eta0: 0}, {Eta0: -1}, {Eta0: math.Inf(1)},
		{Eta0: 0.1, Learned: true, Adaptive: true},
		{Eta0: 0.1, Adaptive: true, TargetAccept: 1},
		{Eta0: 0.1, Adaptive: true, TargetAccept: -0.2},
		{Eta0: 0.1, Adaptive: true, AdaptRate: 2},
		{Eta0: 0.1, Scale: -1}, {Eta0: 0.1, Scale: math.NaN()}, {Eta0: 0.1, Scale: math.Inf(1)},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v should be rejected", bad)
		}
	}
}
