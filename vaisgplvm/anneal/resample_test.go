package anneal_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// resampledToy runs s resampling chains of k steps for each of b independent copies of a toy like
// gap's (q0 = N(0, I), target N(h | mu, sd^2 I) in 10 dimensions, log Z = 0) and returns LogZ [b],
// the resamplings per copy, and, for the same noise, Run's LogW [s, b].
func resampledToy(k, s, b int, mu, sd, eta, threshold float64, seed uint64) (logZ, count, runLogW []float64) {
	const dim = 10
	rng := rand.New(rand.NewPCG(seed, 3))
	normals := func(dims ...int) *tensors.Tensor { return vars.Normal(rng, dims...) }
	unif := make([]float64, k*b)
	for i := range unif {
		unif[i] = rng.Float64()
	}
	logN := func(h *Node, m, sd float64) *Node {
		z := DivScalar(AddScalar(h, -m), sd)
		return AddScalar(MulScalar(ReduceSum(Square(z), -1), -0.5), -float64(dim)*(math.Log(sd)+0.5*math.Log(2*math.Pi)))
	}
	out := MustExecOnceN(testutil.Backend(), func(e0, ek, u *Node) []*Node {
		var eps, us []*Node
		for i := 0; i < k; i++ {
			eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
			us = append(us, Squeeze(Slice(u, AxisElem(i)), 0))
		}
		betas, _ := anneal.Fixed{Kind: "linear"}.BetaValues(k)
		bt := Const(e0.Graph(), betas)
		etas := MulScalar(OnesLike(bt), eta)
		target := func(h *Node) *Node { return logN(h, mu, sd) }
		ref := func(h *Node) *Node { return logN(h, 0, 1) }
		r := anneal.RunResampled(e0, eps, us, bt, etas, target, ref, threshold, anneal.Options{})
		plain := anneal.Run(e0, eps, bt, etas, target, ref, anneal.Options{})
		return []*Node{r.LogZ, r.Resamplings, plain.LogW}
	}, normals(s, b, dim), normals(k, s, b, dim), tensors.FromFlatDataAndDimensions(unif, k, b))
	return vars.Flat64(out[0]), vars.Flat64(out[1]), vars.Flat64(out[2])
}

// TestResampledNeverIsVAIS: with threshold 0 no chain is resampled and LogZ is the log-mean-exp of
// Run's weights over the same chains (VAIS with S chains), to rounding.
func TestResampledNeverIsVAIS(t *testing.T) {
	const s, b = 4, 6
	logZ, count, w := resampledToy(5, s, b, 1.5, 0.5, 0.05, 0, 1)
	for n := range b {
		m := math.Inf(-1)
		for i := range s {
			m = math.Max(m, w[i*b+n])
		}
		sum := 0.0
		for i := range s {
			sum += math.Exp(w[i*b+n] - m)
		}
		if want := m + math.Log(sum/s); math.Abs(logZ[n]-want) > 1e-10*math.Max(1, math.Abs(want)) || count[n] != 0 {
			t.Errorf("point %d: LogZ %g (%g resamplings), log-mean-exp of Run's weights %g", n, logZ[n], count[n], want)
		}
	}
}

// TestResampledUnbiased: resampling at every step, exp(LogZ) is an unbiased estimator of Z = 1
// (its mean over 4000 independent copies within 4 standard errors, of at most 0.03, of 1), so LogZ
// is a lower bound in expectation; every step after the first resampled.
func TestResampledUnbiased(t *testing.T) {
	const k, s, b = 20, 8, 4000
	logZ, count, _ := resampledToy(k, s, b, 0.5, 0.8, 0.1, 1, 2)
	never, _, _ := resampledToy(k, s, b, 0.5, 0.8, 0.1, 0, 2)
	var mean, sq, meanLog, meanNever float64
	for n := range b {
		z := math.Exp(logZ[n])
		mean, sq = mean+z/b, sq+z*z/b
		meanLog, meanNever = meanLog+logZ[n]/b, meanNever+never[n]/b
		if count[n] != k-1 {
			t.Fatalf("copy %d resampled %g times, want %d", n, count[n], k-1)
		}
	}
	se := math.Sqrt((sq - mean*mean) / b)
	t.Logf("E[Z^] = %.4f ± %.4f (Z = 1); E[log Z^] resampling %.4f, never %.4f (log Z = 0)", mean, se, meanLog, meanNever)
	if math.Abs(mean-1) > 4*se || se > 0.03 || meanLog > 0.01 {
		t.Errorf("E[Z^] = %g ± %g, want 1; E[log Z^] = %g, want <= 0", mean, se, meanLog)
	}
}

// TestBackwardCorrectionUnbiased: any correction of the backward kernel's drift keeps exp(log w)
// an unbiased estimator of Z = 1 (here c(h) = 0.3 tanh(h) - 0.1 at every step, on the toy of
// TestResampledUnbiased, 4000 copies of 8 chains' log-mean-exp), while it changes the weights.
func TestBackwardCorrectionUnbiased(t *testing.T) {
	const dim, k, s, b = 10, 20, 8, 4000
	rng := rand.New(rand.NewPCG(8, 8))
	logN := func(h *Node, m, sd float64) *Node {
		z := DivScalar(AddScalar(h, -m), sd)
		return AddScalar(MulScalar(ReduceSum(Square(z), -1), -0.5), -float64(dim)*(math.Log(sd)+0.5*math.Log(2*math.Pi)))
	}
	run := func(corr bool) []float64 {
		out := MustExecOnce(testutil.Backend(), func(e0, ek *Node) *Node {
			var eps []*Node
			for i := 0; i < k; i++ {
				eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
			}
			betas, _ := anneal.Fixed{Kind: "linear"}.BetaValues(k)
			bt := Const(e0.Graph(), betas)
			opt := anneal.Options{}
			if corr {
				opt.Backward = func(h *Node, _ int) *Node { return AddScalar(MulScalar(Tanh(h), 0.3), -0.1) }
			}
			c := anneal.Run(e0, eps, bt, MulScalar(OnesLike(bt), 0.1),
				func(h *Node) *Node { return logN(h, 0.5, 0.8) }, func(h *Node) *Node { return logN(h, 0, 1) }, opt)
			return c.LogW
		}, vars.Normal(rng, s, b, dim), vars.Normal(rng, k, s, b, dim))
		return vars.Flat64(out)
	}
	plain := run(false)
	rng = rand.New(rand.NewPCG(8, 8)) // the same noise
	w := run(true)
	var mean, sq float64
	differ := false
	for n := range b {
		z := 0.0
		for i := range s {
			z += math.Exp(w[i*b+n]) / s
			differ = differ || w[i*b+n] != plain[i*b+n]
		}
		mean, sq = mean+z/b, sq+z*z/b
	}
	se := math.Sqrt((sq - mean*mean) / b)
	t.Logf("with the backward correction E[Z^] = %.4f ± %.4f (Z = 1)", mean, se)
	if math.Abs(mean-1) > 4*se || se > 0.05 || !differ {
		t.Errorf("E[Z^] = %g ± %g with a corrected backward kernel, want 1 (weights changed: %v)", mean, se, differ)
	}
}
