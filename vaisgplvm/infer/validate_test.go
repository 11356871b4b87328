package infer_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// TestValidatedExact: on 80 points of a known curve (IWVI, 200 iterations), the validated exact
// conditional is refitted, conditions on all 80 rows, and prices held-out rows with half their
// entries hidden: its predictive noise is above the refit's in-sample noise (a latent fitted from
// half a row errs more than a conditioning row's), and it imputes 12 new points' hidden entries
// better than their column means; Latents with Exact reconstructs with it (its hidden entries'
// MSE is the one ScoreMissingExact reports); bad shares and Exact with SingleLatent are refused.
func TestValidatedExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	_, xTrain := sample(rng, 80)
	_, xTest := sample(rng, 12)
	cfg := model.DefaultConfig("iwvi", 2)
	cfg.M, cfg.K, cfg.Batch = 12, 4, 0
	tr := toy.Fit(t, cfg, xTrain, nil, 200)
	ev, err := eval.Evaluate(tr, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := infer.ValidatedExact(context.Background(), tr, xTrain, ev.Latent, infer.ExactValidation{Hide: 0.5, Iters: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Refitted || !(ex.PredictiveNoise > ex.Noise) {
		t.Errorf("conditional %+v: want a refit and a predictive noise above the in-sample noise", *ex)
	}
	x, mask := make([][]float64, len(xTest)), make([][]float64, len(xTest))
	for i, r := range xTest {
		x[i], mask[i] = append([]float64(nil), r...), []float64{1, 1, 1, 1}
		for _, j := range []int{i % 4, (i + 1) % 4} {
			x[i][j], mask[i][j] = 0, 0
		}
	}
	res, err := infer.Latents(context.Background(), tr, x, mask, infer.Options{Iters: 100})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := res.ScoreMissingExact(xTest, ex)
	if err != nil {
		t.Fatal(err)
	}
	colMSE, n := 0.0, 0
	for i := range xTest {
		for j := range xTest[i] {
			if mask[i][j] == 0 {
				mean := 0.0
				for _, r := range xTrain {
					mean += r[j] / float64(len(xTrain))
				}
				colMSE += (xTest[i][j] - mean) * (xTest[i][j] - mean)
				n++
			}
		}
	}
	if colMSE /= float64(n); !(sc.MSEPredictive < 0.5*colMSE) {
		t.Errorf("held-out MSE %.4g, column means' %.4g: want under half", sc.MSEPredictive, colMSE)
	}
	// Latents with Exact: its reconstruction of the hidden entries is the mixture ScoreMissingExact
	// scores under the conditional it returns
	ex2, err := infer.Latents(context.Background(), tr, x, mask, infer.Options{Iters: 100, Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	sc2, err := ex2.ScoreMissingExact(xTest, ex2.Exact)
	if err != nil {
		t.Fatal(err)
	}
	sse, cnt := 0.0, 0
	for i := range xTest {
		for j := range xTest[i] {
			if mask[i][j] == 0 {
				sse += (xTest[i][j] - ex2.Recon[i][j]) * (xTest[i][j] - ex2.Recon[i][j])
				cnt++
			}
		}
	}
	if got := sse / float64(cnt); math.Abs(got-sc2.MSEPredictive) > 1e-12 || ex2.Exact == nil || !ex2.Exact.Refitted {
		t.Errorf("Latents with Exact: reconstruction MSE %.10g, scored %.10g (conditional %v)", got, sc2.MSEPredictive, ex2.Exact != nil)
	}
	if _, err := infer.Latents(context.Background(), tr, x, mask, infer.Options{Iters: 1, Exact: true, SingleLatent: true}); err == nil {
		t.Error("Exact with SingleLatent should be refused")
	}
	for _, o := range []infer.ExactValidation{{Hide: 0}, {Hide: 1}, {Hide: 0.5, Share: 0.6}} {
		if _, err := infer.ValidatedExact(context.Background(), tr, xTrain, ev.Latent, o); err == nil {
			t.Errorf("%+v: want an error", o)
		}
	}
}
