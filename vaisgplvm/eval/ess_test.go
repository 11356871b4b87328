package eval_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// maskedToy returns n points of d columns with every third point missing its second entry.
func maskedToy(n, d int) (x, mask [][]float64) {
	x = testutil.NormalRows(rand.New(rand.NewPCG(8, 8)), n, d, 1)
	mask = make([][]float64, n)
	for i := range x {
		mask[i] = make([]float64, d)
		for j := range mask[i] {
			mask[i][j] = 1
		}
		if i%3 == 0 && d > 1 {
			mask[i][1], x[i][1] = 0, math.NaN()
		}
	}
	return x, mask
}

// TestPixelLogLikSumsToLogLik: the per-entry expected log-likelihoods of model.PixelLogLik sum over
// the observed entries to the l_n(h) the bounds use (a different code path: masked marginals
// summed before the log density), to 1e-10 relative, and are 0 at the missing entries.
func TestPixelLogLikSumsToLogLik(t *testing.T) {
	x, mask := maskedToy(12, 4)
	cfg := model.DefaultConfig("iwvi", 2)
	cfg.M, cfg.K, cfg.Batch = 5, 3, 0
	m, err := model.New(cfg, x, mask)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	exec := mlmodel.MustNewExec(tr.Backend, tr.Ctx.Store(), train.BoundGraph(m, func(ctx *mlmodel.Scope, xb, mk, id, e0, _ *Node) []*Node {
		b := m.BatchFor(ctx, xb, mk, id)
		h := b.Q0.Sample(e0)
		return []*Node{m.PixelLogLik(ctx, xb, mk, h), b.LogLik(h)}
	}))
	bt := train.Inputs(m, 3, 0)
	args, err := bt.Args(m.DType())
	if err != nil {
		t.Fatal(err)
	}
	out := exec.MustExec(args...)
	pix, ll := vars.Flat64(out[0]), vars.Flat64(out[1]) // [K, B, D], [K, B]
	b, d := len(bt.Idx), m.D
	for s := range cfg.K {
		for n := range b {
			sum := 0.0
			for j := range d {
				v := pix[(s*b+n)*d+j]
				if n < len(bt.Mask) && bt.Mask[n][j] == 0 && v != 0 {
					t.Errorf("sample %d point %d: missing entry %d has %g, want 0", s, bt.Idx[n], j, v)
				}
				sum += v
			}
			if want := ll[s*b+n]; math.Abs(sum-want) > 1e-10*max(1, math.Abs(want)) {
				t.Errorf("sample %d point %d: per-entry terms sum to %.12g, l_n(h) = %.12g", s, bt.Idx[n], sum, want)
			}
		}
	}
}

// TestESSBreakdown: every definition lies in [1, K] (increments: [1, annealing steps]); IWVI's own
// particles are its q0 samples; with one column the per-pixel ESS is the q0-sample ESS exactly
// (same noise); the annealed bounds' weights are the sums of their increments (else Increments
// would be nil); MF has no particles.
func TestESSBreakdown(t *testing.T) {
	idx := []int{0, 1, 2, 3, 4, 5}
	const k = 8
	for _, c := range []struct {
		method string
		d      int
	}{{"vais", 4}, {"iwvi", 4}, {"uha", 4}, {"mf", 4}, {"iwvi", 1}} {
		x, mask := maskedToy(30, c.d)
		if c.d == 1 {
			mask = nil
		}
		cfg := model.DefaultConfig(c.method, min(2, c.d))
		cfg.M, cfg.K, cfg.Batch = 5, 4, 10
		tr := toy.Fit(t, cfg, x, mask, 20)
		e, err := eval.NewESSBreakdown(tr, idx, k, 5)
		if err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		inRange := func(name string, v []float64, top int) {
			for i, x := range v {
				if !(x >= 1-1e-12 && x <= float64(top)+1e-12) {
					t.Errorf("%s %s: point %d ESS %g outside [1, %d]", c.method, name, idx[i], x, top)
				}
			}
		}
		inRange("q0 samples", e.Q0Samples, k)
		inRange("per pixel", e.PerPixel, k)
		inRange("particles", e.Particles, k)
		inRange("increments", e.Increments, cfg.K)
		if len(e.Q0Samples) != len(idx) || len(e.PerPixel) != len(idx) {
			t.Errorf("%s: %d q0-sample and %d per-pixel values for %d points", c.method, len(e.Q0Samples), len(e.PerPixel), len(idx))
		}
		if (e.Particles == nil) != (c.method == "mf") {
			t.Errorf("%s: particles %v", c.method, e.Particles)
		}
		if annealed := c.method == "vais" || c.method == "uha"; (e.Increments != nil) != annealed {
			t.Errorf("%s: increments %v; want them for the annealed bounds only (their weight is the sum)", c.method, e.Increments)
		}
		if c.method == "iwvi" {
			for i := range idx {
				if e.Particles[i] != e.Q0Samples[i] {
					t.Errorf("iwvi point %d: particles %g, q0 samples %g; want the same weights", idx[i], e.Particles[i], e.Q0Samples[i])
				}
				if c.d == 1 && math.Abs(e.PerPixel[i]-e.Q0Samples[i]) > 1e-9 {
					t.Errorf("one column, point %d: per-pixel ESS %g, q0-sample ESS %g; want equal", idx[i], e.PerPixel[i], e.Q0Samples[i])
				}
			}
		}
	}
}
