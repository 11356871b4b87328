package anneal_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// gap returns log Z - E[log w] for the annealed chain from q0 = N(0, I) to the unnormalised
// Gaussian target gamma(h) = Z N(h | mu, sigma^2 I) in dim dimensions (log Z = 0 here), averaged
// over s chains, with its standard error.
func gap(t *testing.T, k int, eta float64, alg1 bool) (float64, float64) {
	const dim, s = 10, 2000
	const mu, sigma = 1.5, 0.5
	rng := rand.New(rand.NewPCG(uint64(k), 11))
	nz := func(n int) *tensors.Tensor {
		v := make([]float64, n*s*dim)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return tensors.FromFlatDataAndDimensions(v, n, s, 1, dim)
	}
	logN := func(h *Node, m, sd float64) *Node {
		z := DivScalar(AddScalar(h, -m), sd)
		return AddScalar(MulScalar(ReduceSum(Square(z), -1), -0.5), -float64(dim)*(math.Log(sd)+0.5*math.Log(2*math.Pi)))
	}
	out := MustExecOnce(testutil.Backend(), func(e0, ek *Node) *Node {
		h0 := Squeeze(e0, 0) // q0 = N(0, I): H_0 = eps
		var eps []*Node
		for i := 0; i < k; i++ {
			eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
		}
		betas, _ := anneal.Fixed{Kind: "linear"}.BetaValues(max(k, 1))
		b := Const(e0.Graph(), betas)
		c := anneal.Run(h0, eps, b, MulScalar(OnesLike(b), eta),
			func(h *Node) *Node { return logN(h, mu, sigma) },
			func(h *Node) *Node { return logN(h, 0, 1) },
			anneal.Options{Algorithm1Sign: alg1})
		return c.LogW
	}, nz(1), nz(max(k, 1)))
	w := vars.Flat64(out)
	var mean, sq float64
	for _, v := range w {
		mean += v / float64(len(w))
		sq += v * v / float64(len(w))
	}
	return -mean, math.Sqrt((sq - mean*mean) / float64(len(w)))
}

// TestEq15SignTightensAlgorithm1Loosens: with the backward-kernel sign of Eq. 15 the gap to log Z
// shrinks as K grows; with the sign printed in Algorithm 1 it grows (the misprint).
func TestEq15SignTightensAlgorithm1Loosens(t *testing.T) {
	const eta = 0.05
	g0, _ := gap(t, 0, eta, false)
	g20, se20 := gap(t, 20, eta, false)
	a20, sa20 := gap(t, 20, eta, true)
	t.Logf("gap K=0: %.3f; K=20 Eq.15 sign: %.3f ± %.3f; K=20 Algorithm 1 sign: %.3f ± %.3f", g0, g20, se20, a20, sa20)
	if g20 < -4*se20 {
		t.Errorf("Eq. 15 gap %.3f is negative: the bound exceeds log Z", g20)
	}
	if !(g20 < 0.5*g0) {
		t.Errorf("Eq. 15 sign: gap with K=20 (%.3f) should be well below K=0 (%.3f)", g20, g0)
	}
	if !(a20 > g20+4*(se20+sa20)) || !(a20 > g0) {
		t.Errorf("Algorithm 1 sign: gap with K=20 (%.3f) should exceed both Eq. 15's (%.3f) and K=0 (%.3f)", a20, g20, g0)
	}
}

func TestSchedules(t *testing.T) {
	for _, kind := range []string{"linear", "sigmoid", "power"} {
		b, err := anneal.Fixed{Kind: kind}.BetaValues(7)
		if err != nil {
			t.Fatal(err)
		}
		if b[6] != 1 {
			t.Errorf("%s: beta_K = %g, want exactly 1", kind, b[6])
		}
		for i := 1; i < 7; i++ {
			if b[i] < b[i-1] || b[0] <= 0 {
				t.Errorf("%s: not increasing in (0, 1]: %v", kind, b)
			}
		}
	}
	if _, err := (anneal.Fixed{Kind: "custom", Values: []float64{0.5, 0.2, 1}}).BetaValues(3); err == nil {
		t.Error("a decreasing custom schedule should be rejected")
	}
	// The learned schedule starts as the linear one and ends at 1.
	out := mlmodel.MustExecOnce(testutil.Backend(), mlmodel.NewStore(), func(ctx *mlmodel.Scope, g *Graph) *Node {
		return anneal.Learned{}.Betas(ctx, g, 4)
	})
	if d := testutil.MaxAbsDiff(vars.Flat64(out), []float64{0.25, 0.5, 0.75, 1}); d > 1e-12 {
		t.Errorf("learned schedule at initialisation %v, want linear", vars.Flat64(out))
	}
}

func TestParseSchedule(t *testing.T) {
	s, err := anneal.ParseSchedule("custom:0.2, 0.6,1")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := s.(anneal.Fixed).BetaValues(3); testutil.MaxAbsDiff(b, []float64{0.2, 0.6, 1}) != 0 {
		t.Errorf("custom schedule parsed as %v", b)
	}
	if s, err := anneal.ParseSchedule("power:3"); err != nil || s.(anneal.Fixed).Param != 3 {
		t.Errorf("power:3 parsed as %v, %v", s, err)
	}
	for _, bad := range []string{"custom:0.5,0.2,1", "custom:0.5,x", "custom:0.5", "sigmoid:-1", "power:abc", "cosine", ""} {
		if _, err := anneal.ParseSchedule(bad); err == nil {
			t.Errorf("ParseSchedule(%q) should fail", bad)
		}
	}
}
