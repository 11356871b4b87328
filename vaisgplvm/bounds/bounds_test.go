package bounds_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// tinyModel is a GPLVM with N points in D dimensions, Q = 1, M = N.
func tinyModel(t *testing.T, x [][]float64, method string, k int) *model.Model {
	cfg := model.DefaultConfig(method, 1)
	cfg.M, cfg.K, cfg.Eta, cfg.Scale0 = len(x), k, 0.01, 0.5
	m, err := model.New(cfg, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func noise(rng *rand.Rand, dims ...int) *tensors.Tensor { return vars.Normal(rng, dims...) }

var tinyX = [][]float64{{0.9, -0.4, 0.3}, {-0.7, 0.5, -0.2}}

// TestBoundIdentities: IWVI with K = 1 and VAIS with K = 0 both equal the single-sample MF
// estimate with a Monte Carlo KL, on the same noise (to rounding).
func TestBoundIdentities(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	m := tinyModel(t, tinyX, "vais", 0)
	ctx := mlmodel.NewStore().RootScope()
	eps := noise(rng, 1, 2, 1)
	out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, x, idx, e *Node) []*Node {
		b := m.BatchFor(ctx, x, nil, idx)
		mfRes := bounds.MF(b, e, true)
		iw := bounds.IWVI(b, e)
		betas, etas := Const(x.Graph(), []float64{1}), Const(x.Graph(), []float64{0.01})
		va, _ := bounds.VAIS(b, e, nil, betas, etas, anneal.Options{})
		return []*Node{mfRes.PerPoint, iw.PerPoint, va.PerPoint}
	}, tinyX, []int32{0, 1}, eps)
	mfv, iwv, vav := vars.Flat64(out[0]), vars.Flat64(out[1]), vars.Flat64(out[2])
	for n := range mfv {
		if math.Abs(mfv[n]-iwv[n]) > 1e-10 || math.Abs(mfv[n]-vav[n]) > 1e-10 {
			t.Errorf("point %d: MF(MC KL) %.12g, IWVI(K=1) %.12g, VAIS(K=0) %.12g should be equal", n, mfv[n], iwv[n], vav[n])
		}
	}
}

// TestAnalyticKLMatchesMonteCarlo: the MF bound with the closed-form KL(q0||p) agrees with the
// Monte Carlo KL estimate within 4 standard errors (S = 20000 samples).
func TestAnalyticKLMatchesMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	m := tinyModel(t, tinyX, "mf", 1)
	const s = 20000
	eps := noise(rng, s, 2, 1)
	out := mlmodel.MustExecOnceN(testutil.Backend(), mlmodel.NewStore(),
		func(ctx *mlmodel.Scope, x, idx, e *Node) []*Node {
			b := m.BatchFor(ctx, x, nil, idx)
			h := b.Q0.Sample(e)
			return []*Node{b.Q0.KLToPrior(), Sub(b.Q0.LogProb(h), logPrior(h))}
		}, tinyX, []int32{0, 1}, eps)
	kl, samples := vars.Flat64(out[0]), vars.Flat64(out[1])
	for n := 0; n < 2; n++ {
		var mean, sq float64
		for i := 0; i < s; i++ {
			v := samples[i*2+n]
			mean += v / s
			sq += v * v / s
		}
		se := math.Sqrt((sq - mean*mean) / s)
		if math.Abs(mean-kl[n]) > 4*se {
			t.Errorf("point %d: analytic KL %g, Monte Carlo %g ± %g", n, kl[n], mean, se)
		}
	}
}

func logPrior(h *Node) *Node {
	return AddScalar(MulScalar(ReduceSum(Square(h), -1), -0.5), -0.5*math.Log(2*math.Pi))
}

// exactLogMarginal computes log p(X) = log ∫ N(X | 0, K(H) + s^2 I) N(H | 0, I) dH for N = 2,
// Q = 1 (SE kernel) by a tensor-product trapezoid rule on [-8, 8]^2 in float64.
func exactLogMarginal(x [][]float64, kvar, ls, s2 float64) float64 {
	const grid = 401
	lo, hi := -8.0, 8.0
	step := (hi - lo) / (grid - 1)
	d := len(x[0])
	var terms []float64
	for i := 0; i < grid; i++ {
		for j := 0; j < grid; j++ {
			h1, h2 := lo+float64(i)*step, lo+float64(j)*step
			k12 := kvar * math.Exp(-0.5*(h1-h2)*(h1-h2)/(ls*ls))
			c := mat.NewSymDense(2, []float64{kvar + s2, k12, k12, kvar + s2})
			var ch mat.Cholesky
			ch.Factorize(c)
			ll := 0.0
			for dd := 0; dd < d; dd++ {
				v := mat.NewVecDense(2, []float64{x[0][dd], x[1][dd]})
				var sol mat.VecDense
				_ = ch.SolveVecTo(&sol, v)
				ll += -0.5*mat.Dot(v, &sol) - 0.5*ch.LogDet() - math.Log(2*math.Pi)
			}
			lp := -0.5*(h1*h1+h2*h2) - math.Log(2*math.Pi)
			terms = append(terms, ll+lp+2*math.Log(step))
		}
	}
	mx := math.Inf(-1)
	for _, v := range terms {
		mx = math.Max(mx, v)
	}
	sum := 0.0
	for _, v := range terms {
		sum += math.Exp(v - mx)
	}
	return mx + math.Log(sum)
}

// TestBoundsAreBounds: on a tiny GPLVM (N = 2, Q = 1, D = 3) every bound's Monte Carlo mean lies
// below the exact log p(X) computed by quadrature with the same hyperparameters, and VAIS with a
// small eta gets closer to it as K grows (K = 0, 4, 16).
func TestBoundsAreBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const s = 4000 // Monte Carlo draws per estimate
	estimate := func(method string, k int, opt anneal.Options) (mean, se float64) {
		m := tinyModel(t, tinyX, method, k)
		ctx := mlmodel.NewStore().RootScope()
		var vals []float64
		// Per-draw total bound: sum_n L_n - KL(q(u)||p(u)), with S = 1 per draw.
		out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, x, idx, e0, ek *Node) []*Node {
			b := m.BatchFor(ctx, x, nil, idx)
			var logW *Node
			switch method {
			case "mf":
				h := b.Q0.Sample(e0)
				logW = Sub(Add(b.LogLik(h), logPrior(h)), b.Q0.LogProb(h))
			case "uha":
				uha, err := bounds.Lookup("uha")
				if err != nil {
					panic(err)
				}
				betas := Const(x.Graph(), linear(k))
				res, _ := uha.Evaluate(b, bounds.Inputs{Sizes: bounds.Sizes{K: k, Samples: 1}, Eps0: e0, ChainEps: ek,
					Anneal: func() (*Node, *Node) { return betas, MulScalar(OnesLike(betas), 0.02) }})
				logW = res.LogW
			default:
				var eps []*Node
				for i := 0; i < k; i++ {
					eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
				}
				betas := Const(x.Graph(), linear(k))
				etas := MulScalar(OnesLike(betas), 0.02)
				_, c := bounds.VAIS(b, e0, eps, betas, etas, opt)
				logW = c.LogW
			}
			return []*Node{Sub(ReduceSum(logW, 1), b.KLU)}
		}, tinyX, []int32{0, 1}, noise(rng, s, 2, 1), noise(rng, chainSteps(method, k), s, 2, 1))
		vals = vars.Flat64(out[0])
		var sq float64
		for _, v := range vals {
			mean += v / s
			sq += v * v / s
		}
		return mean, math.Sqrt((sq - mean*mean) / s)
	}
	// Hyperparameters of the model at initialisation (see model.New): kernel variance = mean
	// column variance, lengthscale 1, noise variance 0.1 * that variance.
	kvar := meanColumnVariance(tinyX)
	exact := exactLogMarginal(tinyX, kvar, 1, 0.1*kvar+1e-6)
	mfMean, mfSE := estimate("mf", 1, anneal.Options{})
	t.Logf("exact log p(X) = %.4f; MF %.4f ± %.4f", exact, mfMean, mfSE)
	if mfMean-4*mfSE > exact {
		t.Errorf("MF bound %.4f ± %.4f above exact log p(X) %.4f", mfMean, mfSE, exact)
	}
	for _, opt := range []anneal.Options{{}, {Precondition: true}, {Precondition: true, Tamed: true}} {
		checkVAIS(t, exact, func(k int) (float64, float64) { return estimate("vais", k, opt) }, "VAIS", opt)
	}
	checkVAIS(t, exact, func(k int) (float64, float64) { return estimate("uha", k, anneal.Options{}) }, "UHA", anneal.Options{})
}

// checkVAIS asserts that an annealed bound (VAIS or UHA) with K = 0, 4, 16 stays below the exact log
// marginal and tightens.
func checkVAIS(t *testing.T, exact float64, estimate func(k int) (float64, float64), name string, opt anneal.Options) {
	prev, first := math.Inf(-1), math.NaN()
	for _, k := range []int{0, 4, 16} {
		v, se := estimate(k)
		t.Logf("%s %+v K=%d: %.4f ± %.4f (gap %.4f)", name, opt, k, v, se, exact-v)
		if v-4*se > exact {
			t.Errorf("%s K=%d bound %.4f ± %.4f above exact log p(X) %.4f", name, k, v, se, exact)
		}
		if v < prev-4*se {
			t.Errorf("%s K=%d bound %.4f is lower than with fewer steps (%.4f)", name, k, v, prev)
		}
		if k == 0 {
			first = v
		}
		if k == 16 && !(v > first+4*se) {
			t.Errorf("%s K=16 (%.4f) is not tighter than K=0 (%.4f)", name, v, first)
		}
		prev = v
	}
}

// chainSteps is the leading dimension of a bound's chain noise (bounds.Method.ChainSteps).
func chainSteps(method string, k int) int {
	m, err := bounds.Lookup(method)
	if err != nil {
		panic(err)
	}
	return m.ChainSteps(bounds.Sizes{K: k, Samples: 1})
}

func linear(k int) []float64 {
	if k == 0 {
		return []float64{1}
	}
	v, _ := anneal.Fixed{Kind: "linear"}.BetaValues(k)
	return v
}

func meanColumnVariance(x [][]float64) float64 {
	d := len(x[0])
	total := 0.0
	for j := 0; j < d; j++ {
		mu := 0.0
		for i := range x {
			mu += x[i][j] / float64(len(x))
		}
		s := 0.0
		for i := range x {
			s += (x[i][j] - mu) * (x[i][j] - mu)
		}
		total += s / float64(len(x)-1)
	}
	return total / float64(d)
}
