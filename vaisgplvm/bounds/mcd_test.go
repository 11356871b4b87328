package bounds_test

import (
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// TestMCDStartsAsVAIS: the mcd bound's network starts with output 0, so on the same noise its
// per-point bound equals VAIS's exactly, and it made its parameters under its scope.
func TestMCDStartsAsVAIS(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const k = 4
	m := tinyModel(t, tinyX, "vais", k)
	store := mlmodel.NewStore()
	e0, ek := noise(rng, 2, 2, 1), noise(rng, k, 2, 2, 1)
	out := mlmodel.MustExecOnceN(testutil.Backend(), store, func(ctx *mlmodel.Scope, x, idx, e0, ek *Node) []*Node {
		b := m.BatchFor(ctx, x, nil, idx)
		betas := Const(x.Graph(), linear(k))
		var res []*Node
		for _, name := range []string{"vais", "mcd"} {
			meth, err := bounds.Lookup(name)
			if err != nil {
				panic(err)
			}
			r, _ := meth.Evaluate(b, bounds.Inputs{Sizes: bounds.Sizes{K: k, Samples: 2}, Eps0: e0, ChainEps: ek,
				Scope: ctx.At("bound").At("%s", name), Options: anneal.Options{Precondition: true, Tamed: true},
				Anneal: func() (*Node, *Node) { return betas, MulScalar(OnesLike(betas), 0.05) }})
			res = append(res, r.PerPoint)
		}
		return res
	}, tinyX, []int32{0, 1}, e0, ek)
	v, mc := vars.Flat64(out[0]), vars.Flat64(out[1])
	if v[0] != mc[0] || v[1] != mc[1] {
		t.Errorf("mcd at initialisation %v, VAIS %v: want equal", mc, v)
	}
	if store.RootScope().At("bound").At("mcd").GetVariable("w2") == nil {
		t.Error("mcd made no parameter w2 under bound/mcd")
	}
}
