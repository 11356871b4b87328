package eval_test

import (
	"context"
	"math"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestEvaluateArrangedBatch: when the batch is rearranged for the projected fit (points with
// missing entries first, model.ArrangeBatch), Evaluate still returns its per-point outputs in point
// order: each reconstruction is far closer to its own point's observed entries than to the
// next point's (a misplaced row would be as far as a random point), and each reconstruction latent
// closer to its own q0 mean than to the next point's.
func TestEvaluateArrangedBatch(t *testing.T) {
	x := toy.Wide(toy.Data(24))
	mask := toy.WideMask(x)
	cfg := model.DefaultConfig("iwvi", 2)
	cfg.M, cfg.K, cfg.Batch = 5, 5, 0
	m, err := model.New(cfg, toy.WithNaN(x, mask), mask)
	if err != nil {
		t.Fatal(err)
	}
	if bt := train.Inputs(m, 1, 0); len(bt.Mask) != 8 || bt.Idx[0] != 1 {
		t.Fatalf("batch not rearranged: %d mask rows (want 8), first point %d (want 1)", len(bt.Mask), bt.Idx[0])
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), 150, train.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	ev, err := eval.Evaluate(tr, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tr.Params()
	if err != nil {
		t.Fatal(err)
	}
	var ownX, nextX, ownH, nextH float64
	for n := range x {
		next := (n + 1) % len(x)
		for j := range x[n] {
			if mask[n][j] != 0 {
				ownX += sq(x[n][j] - ev.Recon[n][j])
				nextX += sq(x[n][j] - ev.Recon[next][j])
			}
		}
		for q := range ev.Latent[n] {
			ownH += sq(ev.Latent[n][q] - p.LatentMean[n][q])
			nextH += sq(ev.Latent[n][q] - p.LatentMean[next][q])
		}
	}
	t.Logf("squared distances: reconstruction own %.3g next %.3g; latent own %.3g next %.3g", ownX, nextX, ownH, nextH)
	if !(ownX < 0.2*nextX) || !(ownH < 0.2*nextH) {
		t.Errorf("per-point outputs out of order: reconstruction own %g vs next %g, latent own %g vs next %g",
			ownX, nextX, ownH, nextH)
	}
	if math.IsNaN(ev.MSE) || ev.MSE > 0.2*nextX/float64(len(x)*len(x[0])) {
		t.Errorf("MSE %g", ev.MSE)
	}
}

func sq(v float64) float64 { return v * v }

// TestEvaluateMonteCarloSE: with two noise draws the standard error of the -ELBO is |a - b| / 2
// (sd |a - b| / sqrt 2 over sqrt 2 draws), where a is the first draw's value (Evaluate with one
// draw uses the same first draw) and b = 2 mean - a; with one draw there is none.
func TestEvaluateMonteCarloSE(t *testing.T) {
	cfg := model.DefaultConfig("vais", 2)
	cfg.M, cfg.K, cfg.Batch = 5, 3, 0
	tr := toy.Fit(t, cfg, toy.Data(20), nil, 5)
	one, err := eval.Evaluate(tr, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	two, err := eval.Evaluate(tr, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if one.NegELBOSE != nil || two.NegELBOSE == nil {
		t.Fatalf("standard errors %v (one draw, want none) and %v (two draws)", one.NegELBOSE, two.NegELBOSE)
	}
	a := one.NegELBO
	b := 2*two.NegELBO - a
	if want := math.Abs(a-b) / 2; !(want > 0) || math.Abs(*two.NegELBOSE-want) > 1e-9*math.Abs(a) {
		t.Errorf("MC s.e. %g, want |a - b| / 2 = %g (a %g, b %g)", *two.NegELBOSE, want, a, b)
	}
}
