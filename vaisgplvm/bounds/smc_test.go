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
)

// smcEstimates returns reps independent estimates of the tiny GPLVM's total bound sum_n L_n -
// KL(q(u) || p(u)) of the smc bound with s chains, k steps and the resampling threshold, each from
// its own noise: the two points are repeated reps times in one batch (their own q0 through idx).
func smcEstimates(t *testing.T, k, s, reps int, threshold float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 5))
	m := tinyModel(t, tinyX, "smc", k)
	x := make([][]float64, 2*reps)
	idx := make([]int32, 2*reps)
	for r := range reps {
		x[2*r], x[2*r+1], idx[2*r], idx[2*r+1] = tinyX[0], tinyX[1], 0, 1
	}
	smc, err := bounds.Lookup("smc")
	if err != nil {
		t.Fatal(err)
	}
	sizes := bounds.Sizes{K: k, Samples: s}
	ctx := mlmodel.NewStore().RootScope()
	out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, xt, it, e0, ek *Node) []*Node {
		b := m.BatchFor(ctx, xt, nil, it)
		betas := Const(xt.Graph(), linear(k))
		res, _ := smc.Evaluate(b, bounds.Inputs{Sizes: sizes, Eps0: e0, ChainEps: ek, Settings: map[string]float64{"ess-threshold": threshold},
			Options: anneal.Options{Precondition: true, Tamed: true},
			Anneal:  func() (*Node, *Node) { return betas, MulScalar(OnesLike(betas), 0.05) }})
		pairs := ReduceSum(Reshape(res.PerPoint, reps, 2), 1)
		return []*Node{Sub(pairs, b.KLU)}
	}, x, idx, noise(rng, s, 2*reps, 1), noise(rng, smc.ChainSteps(sizes), s, 2*reps, 1))
	return vars.Flat64(out[0])
}

// TestSMCBound: on the tiny GPLVM, the smc bound with 4 chains lies below the exact log p(X) (by
// quadrature) for K = 4 and 16, tightens with K, and with threshold 0 (never resampling) equals
// VAIS with 4 chains; resampling at half the chains' ESS is reported beside it.
func TestSMCBound(t *testing.T) {
	kvar := meanColumnVariance(tinyX)
	exact := exactLogMarginal(tinyX, kvar, 1, 0.1*kvar+1e-6)
	meanSE := func(v []float64) (float64, float64) {
		var m, sq float64
		for _, x := range v {
			m, sq = m+x/float64(len(v)), sq+x*x/float64(len(v))
		}
		return m, math.Sqrt((sq - m*m) / float64(len(v)))
	}
	prev := math.Inf(-1)
	for _, k := range []int{4, 16} {
		v, se := meanSE(smcEstimates(t, k, 4, 2000, 0.5, uint64(k)))
		never, nse := meanSE(smcEstimates(t, k, 4, 2000, 0, uint64(k)))
		t.Logf("exact %.4f; smc K=%d, 4 chains: resampling %.4f ± %.4f, never %.4f ± %.4f", exact, k, v, se, never, nse)
		if v-4*se > exact || never-4*nse > exact {
			t.Errorf("K=%d: smc %.4f ± %.4f (never resampling %.4f) above exact log p(X) %.4f", k, v, se, never, exact)
		}
		if v < prev-4*se {
			t.Errorf("K=%d: smc %.4f lower than with fewer steps (%.4f)", k, v, prev)
		}
		prev = v
	}
	if smc, _ := bounds.Lookup("smc"); smc.Validate(bounds.Sizes{K: 4, Samples: 1}) == nil {
		t.Error("smc with one chain: want a refusal (nothing to resample)")
	}
}
