package cmf

import (
	"context"
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// TestDecodeMatchesTheLikelihood: after training, the Bernoulli decoder's means (Decode) give
// log p(y = 1 | z) = sum_p log mean_p, equal to the likelihood the bound uses (1e-12); the
// Gaussian decoder's means have the data's width. (Decode also returns the unused log variance
// from its graph: the pure-Go backend failed on a graph with an unused computed node.)
func TestDecodeMatchesTheLikelihood(t *testing.T) {
	for _, lik := range []string{"bernoulli", "gaussian"} {
		m := newModel(t, Config{Family: "cmf", Likelihood: lik, LatentDim: 2, InputDim: 2, M: 5, Hidden: 8, AuxHidden: 8},
			toy(12, 5, lik == "bernoulli"))
		if err := m.Train(context.Background(), 3, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Latents(); err != nil {
			t.Fatal(err)
		}
		z := [][]float64{{0, 1}, {1, -0.5}}
		mean, err := m.Decode(z)
		if err != nil {
			t.Fatal(err)
		}
		if len(mean) != 2 || len(mean[0]) != 5 {
			t.Fatalf("%s: decoded %dx%d, want 2x5", lik, len(mean), len(mean[0]))
		}
		if lik == "gaussian" {
			continue
		}
		ones := [][]float64{{1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}}
		out := mlmodel.MustExecOnceN(m.Backend, m.Ctx.Store(), func(ctx *mlmodel.Scope, z, y *Node) []*Node {
			return []*Node{m.logLik(ctx, InsertAxes(z, 1), y)} // [2, 1] per z
		}, z, ones[:1])
		ll := vars.Flat64(out[0])
		for i := range z {
			want := 0.0
			for _, p := range mean[i] {
				want += math.Log(p)
			}
			if math.Abs(ll[i]-want) > 1e-12 {
				t.Errorf("log p(1 | z_%d) = %.15g, sum log Decode = %.15g", i, ll[i], want)
			}
		}
	}
}
