package train_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestTrainingGradientMatchesFiniteDifferences: with the noise of one iteration held fixed, the
// training loss -ELBO/N is a smooth function of all trainable parameters (kernel, noise variance,
// Z, q(u), q0, learned schedule), and the gradient the trainer follows - autodiff through the
// Cholesky, the triangular inverses, the dot-product gradients and, for VAIS, through the whole
// annealed chain (second-order: the scores are gradients themselves) - must equal its central finite
// differences. Checked along 3 random directions in all parameters at once, after 3 Adam steps
// (away from the initial values), on the toy data with missing entries, for MF, IWVI and VAIS
// (plain, preconditioned + tamed, shared q(u) root, unwhitened, learned schedule and eta), and on
// 16-dimensional data, fully observed and with missing entries, where IWVI and VAIS take the
// projected fit (gp.Projected).
// The finite differences are Richardson-extrapolated central differences (steps 1e-4 and 5e-5 in
// float64), which agree with autodiff to about 1e-10 relative; the tolerance is 1e-8 relative.
// A max over tied entries in the jitter's scale (fixed: gp.Inducing now takes the mean) made
// autodiff differ by 1e-7 to 6e-6 relative, which this test catches.
func TestTrainingGradientMatchesFiniteDifferences(t *testing.T) {
	x := toy.Data(24)
	mask := make([][]float64, len(x))
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range mask {
		mask[i] = []float64{1, 1, 1, 1}
		if i%3 == 0 {
			mask[i][rng.IntN(4)] = 0
			x[i] = append([]float64(nil), x[i]...)
		}
	}
	wide := toy.Wide(x)
	for _, c := range []struct {
		name   string
		method string
		mutate func(*model.Config)
		// wide: 16 > M = 5 dimensions, where the projected fit (gp.Projected) is used: 1 fully
		// observed, 2 with missing entries in every 4th point.
		wide int
	}{
		{"mf", "mf", nil, 0},
		{"iwvi", "iwvi", nil, 0},
		{"vais default", "vais", nil, 0},
		{"vais plain", "vais", func(c *model.Config) { c.Precondition, c.Tamed, c.AdaptEta = false, false, false }, 0},
		{"vais shared unwhitened", "vais", func(c *model.Config) { c.SharedQSqrt, c.Whitened, c.Samples = true, false, 2 }, 0},
		{"vais learned", "vais", func(c *model.Config) { c.Schedule, c.LearnEta, c.AdaptEta = "learned", true, false }, 0},
		{"iwvi projected", "iwvi", nil, 1},
		{"vais projected", "vais", nil, 1},
		{"vais projected mean-bias unwhitened", "vais", func(c *model.Config) { c.MeanBias, c.Whitened = true, false }, 1},
		{"vais projected masked", "vais", func(c *model.Config) { c.Batch, c.K = 0, 5 }, 2},
		{"vais projected masked shared mean-bias", "vais", func(c *model.Config) {
			c.Batch, c.K, c.SharedQSqrt, c.MeanBias, c.Samples = 0, 5, true, true, 2
		}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := model.DefaultConfig(c.method, 2)
			cfg.M, cfg.K, cfg.Batch = 5, 3, 12
			if c.mutate != nil {
				c.mutate(&cfg)
			}
			data, dataMask := x, mask
			switch c.wide {
			case 1:
				data, dataMask = wide, nil
			case 2:
				data, dataMask = toy.WithNaN(wide, toy.WideMask(wide)), toy.WideMask(wide)
			}
			m, err := model.New(cfg, data, dataMask)
			if err != nil {
				t.Fatal(err)
			}
			b := m.BatchSize()
			if got := m.UsesProjectedFit(b, len(train.Inputs(m, 77, 7).Mask)); got != (c.wide > 0) {
				t.Fatalf("projected fit = %v, want %v", got, c.wide > 0)
			}
			tr, err := train.New(m, testutil.Backend())
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := tr.Step(); err != nil {
					t.Fatal(err)
				}
			}
			checkDirectionalDerivatives(t, tr)
		})
	}
}

// checkDirectionalDerivatives compares autodiff's gradient of the loss at iteration 7's inputs
// with central finite differences along random directions in all trainable variables.
func checkDirectionalDerivatives(t *testing.T, tr *train.Trainer) {
	m := tr.Model
	var params []*mlmodel.Variable
	for v := range tr.Ctx.Store().IterVariables() {
		if v.Trainable {
			params = append(params, v)
		}
	}
	loss := func(ctx *mlmodel.Scope, x, mask, idx, eps0, chain *Node) *Node {
		res, _ := m.Bound(ctx, x, mask, idx, eps0, chain)
		return DivScalar(Neg(res.ELBO), float64(m.N))
	}
	value := mlmodel.MustNewExec(tr.Backend, tr.Ctx.Store(), train.BoundGraph(m, func(ctx *mlmodel.Scope, x, mask, idx, eps0, chain *Node) []*Node {
		return []*Node{loss(ctx, x, mask, idx, eps0, chain)}
	}))
	grad := mlmodel.MustNewExec(tr.Backend, tr.Ctx.Store(), train.BoundGraph(m, func(ctx *mlmodel.Scope, x, mask, idx, eps0, chain *Node) []*Node {
		l := loss(ctx, x, mask, idx, eps0, chain)
		nodes := make([]*Node, len(params))
		for i, v := range params {
			nodes[i] = v.ValueGraph(l.Graph())
		}
		return Gradient(l, nodes...)
	}))
	in, err := train.Inputs(m, 77, 7).Args(m.DType())
	if err != nil {
		t.Fatal(err)
	}
	grads := grad.MustExec(in...)
	base := make([][]float64, len(params))
	for i, v := range params {
		base[i] = vars.Flat64(v.MustValue())
	}
	rng := rand.New(rand.NewPCG(3, 3))
	set := func(dir [][]float64, h float64) {
		for i, v := range params {
			val := make([]float64, len(base[i]))
			for k := range val {
				val[k] = base[i][k] + h*dir[i][k]
			}
			v.MustSetValue(tensors.FromFlatDataAndDimensions(val, v.Shape().Dimensions...))
		}
	}
	eval := func() float64 { return vars.Flat64(value.MustExec(in...)[0])[0] }
	const h = 1e-4
	for trial := range 3 {
		dir := make([][]float64, len(params))
		ad := 0.0
		for i := range params {
			g := vars.Flat64(grads[i])
			dir[i] = make([]float64, len(base[i]))
			for k := range dir[i] {
				dir[i][k] = rng.NormFloat64()
				ad += g[k] * dir[i][k]
			}
		}
		central := func(h float64) float64 {
			set(dir, h)
			plus := eval()
			set(dir, -h)
			minus := eval()
			set(dir, 0)
			return (plus - minus) / (2 * h)
		}
		// Richardson extrapolation of two central differences: error O(h^4), about 1e-10 relative here.
		fd := (4*central(h/2) - central(h)) / 3
		if diff := math.Abs(fd - ad); diff > 1e-8*math.Max(1, math.Abs(fd)) || math.IsNaN(ad) {
			t.Errorf("direction %d: autodiff %.10g, finite differences %.10g (difference %.3g, %d variables: %s)",
				trial, ad, fd, diff, len(params), names(params))
		}
	}
}

func names(vs []*mlmodel.Variable) string {
	s := ""
	for _, v := range vs {
		s += fmt.Sprintf("%s%v ", v.Path(), v.Shape().Dimensions)
	}
	return s
}
