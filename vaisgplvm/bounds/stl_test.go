package bounds_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/stat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// TestSTLKeepsValueAndExpectedGradient: with STL the VAIS log weights of S independent one-chain
// bounds (K = 3, preconditioned and plain) are the same values (1e-12), and the gradient of their
// mean with respect to q0's means and scale parameters differs from the full gradient by the
// score of q0, whose expectation is 0: over 20 repetitions of 200 draws the mean difference is
// within 4 standard errors of 0, while the differences themselves are not 0 (the estimators
// differ). A wrong path term (e.g. dropping the whole log q0(H_0) gradient) moves the mean by
// the entropy gradient, about 1 per point for the scale.
func TestSTLKeepsValueAndExpectedGradient(t *testing.T) {
	const s, reps, k = 200, 20, 3
	m := tinyModel(t, tinyX, "vais", k)
	vais, err := bounds.Lookup("vais")
	if err != nil {
		t.Fatal(err)
	}
	for _, pre := range []bool{true, false} {
		rng := rand.New(rand.NewPCG(21, 3))
		var diffs [][]float64 // [reps][params]
		for r := 0; r < reps; r++ {
			eps0, chain := noise(rng, s, 2, 1), noise(rng, k, s, 2, 1)
			out := mlmodel.MustExecOnceN(testutil.Backend(), mlmodel.NewStore(), func(ctx *mlmodel.Scope, x, idx, e0, ce *Node) []*Node {
				b := m.BatchFor(ctx, x, nil, idx)
				g := x.Graph()
				in := bounds.Inputs{Sizes: bounds.Sizes{K: k, Samples: s}, Eps0: e0, ChainEps: ce,
					Anneal: func() (*Node, *Node) {
						return Const(g, []float64{1.0 / 3, 2.0 / 3, 1}), Const(g, []float64{0.05, 0.05, 0.05})
					},
					Options: anneal.Options{Precondition: pre, Tamed: true}}
				full, _ := vais.Evaluate(b, in)
				in.STL = true
				stl, _ := vais.Evaluate(b, in)
				lc := ctx.Store().Scope("/latent")
				params := []*Node{lc.GetVariable("mean").ValueGraph(g), lc.GetVariable("raw_scale").ValueGraph(g)}
				gf := Gradient(ReduceAllMean(full.LogW), params...)
				gs := Gradient(ReduceAllMean(stl.LogW), params...)
				return []*Node{full.LogW, stl.LogW, Sub(gs[0], gf[0]), Sub(gs[1], gf[1])}
			}, tinyX, []int32{0, 1}, eps0, chain)
			if d := testutil.MaxAbsDiff(vars.Flat64(out[0]), vars.Flat64(out[1])); d > 1e-12 {
				t.Fatalf("precondition %v: STL changed the log weights by %g", pre, d)
			}
			diffs = append(diffs, append(vars.Flat64(out[2]), vars.Flat64(out[3])...))
		}
		for p := range diffs[0] {
			col := make([]float64, reps)
			for r := range diffs {
				col[r] = diffs[r][p]
			}
			mean, se := stat.Mean(col, nil), stat.StdDev(col, nil)/math.Sqrt(reps)
			if se == 0 || math.Abs(mean) > 4*se {
				t.Errorf("precondition %v, parameter %d: E[STL - full gradient] = %.5f ± %.5f, want 0 (and a non-zero spread)", pre, p, mean, se)
			}
		}
	}
}
