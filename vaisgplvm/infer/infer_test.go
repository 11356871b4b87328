package infer_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// curve maps a true 1-D latent t to 4-D data.
func curve(t float64) []float64 { return []float64{math.Sin(t), math.Cos(t), t / 2, t * t / 4} }

func sample(rng *rand.Rand, n int) (ts []float64, x [][]float64) {
	for i := 0; i < n; i++ {
		t := rng.Float64()*4 - 2
		r := curve(t)
		for j := range r {
			r[j] += 0.03 * rng.NormFloat64()
		}
		ts, x = append(ts, t), append(x, r)
	}
	return ts, x
}

// TestInferPlacesNewPointsNearTheirLatents trains on 80 points of a known curve, then infers 12
// held-out points (fully observed, then with half their entries missing) with the model frozen.
// Inferred latents must sit next to training latents of points with nearby true latents, and the
// missing entries must be reconstructed far better than by column means; MF, VAIS, the underdamped
// bound (its damping and mass frozen with the globals). VAIS also with per-point
// step-size factors (kept with the latents, so the fit of the new points starts its own).
func TestInferPlacesNewPointsNearTheirLatents(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	tTrain, xTrain := sample(rng, 80)
	tTest, xTest := sample(rng, 12)
	for _, method := range []string{"mf", "vais", "vais+point-eta", "uha"} {
		cfg := model.DefaultConfig(strings.TrimSuffix(method, "+point-eta"), 2)
		cfg.M, cfg.K, cfg.Batch = 12, 3, 0
		cfg.PointEta = strings.HasSuffix(method, "+point-eta") // the new points get factors of their own
		tr := toy.Fit(t, cfg, xTrain, nil, 300)
		trainEval, err := eval.Evaluate(tr, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		full, err := infer.Latents(context.Background(), tr, xTest, nil, infer.Options{Iters: 200})
		if err != nil {
			t.Fatal(err)
		}
		// Neighbourhood: the training point nearest to each inferred latent has a nearby true latent.
		good := 0
		for i, h := range full.Latent {
			best, bestD := 0, math.Inf(1)
			for j, g := range trainEval.Latent {
				d := 0.0
				for q := range h {
					d += (h[q] - g[q]) * (h[q] - g[q])
				}
				if d < bestD {
					best, bestD = j, d
				}
			}
			if math.Abs(tTrain[best]-tTest[i]) < 0.3 {
				good++
			}
		}
		mseFull := mse(xTest, full.Recon, nil, true)
		t.Logf("%s: %d/12 inferred latents next to a training point with a nearby true latent; reconstruction MSE %.5f; -bound/N* %.3f",
			method, good, mseFull, full.NegELBO)
		if good < 10 {
			t.Errorf("%s: only %d of 12 held-out points land near training points with similar true latents", method, good)
		}
		if mseFull > 0.01 {
			t.Errorf("%s: reconstruction MSE of fully observed held-out points %.4f, want < 0.01 (noise variance 0.0009)", method, mseFull)
		}
		// Half the entries missing: alternate which two of the four are observed.
		mask := make([][]float64, len(xTest))
		for i := range mask {
			mask[i] = []float64{1, 1, 0, 0}
			if i%2 == 1 {
				mask[i] = []float64{0, 1, 1, 0}
			}
		}
		part, err := infer.Latents(context.Background(), tr, xTest, mask, infer.Options{Iters: 200})
		if err != nil {
			t.Fatal(err)
		}
		missing := mse(xTest, part.Recon, mask, false)
		baseline := mse(xTest, columnMeans(xTrain, len(xTest)), mask, false)
		t.Logf("%s: MSE on missing entries %.4f (column-mean imputation %.4f)", method, missing, baseline)
		if !(missing < 0.2*baseline) {
			t.Errorf("%s: missing entries reconstructed with MSE %.4f, not well below mean imputation %.4f", method, missing, baseline)
		}
		sc, err := part.ScoreMissing(xTest)
		if err != nil {
			t.Fatal(err)
		}
		// Recon is the posterior predictive mixture's (Options.SingleLatent unset)
		if math.Abs(sc.MSEPredictive-missing) > 1e-9*missing || sc.Entries != 2*len(xTest) || math.IsNaN(sc.NELL) || math.IsNaN(sc.NELLPredictive) {
			t.Errorf("%s: ScoreMissing %+v, want the mixture's MSE %g over %d entries", method, sc, missing, 2*len(xTest))
		}
	}
}

func TestInferRejectsBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	_, xTrain := sample(rng, 20)
	cfg := model.DefaultConfig("mf", 2)
	cfg.M = 5
	tr := toy.Fit(t, cfg, xTrain, nil, 2)
	cases := map[string]struct {
		x, mask [][]float64
	}{
		"columns":     {[][]float64{{1, 2, 3}}, nil},
		"not finite":  {[][]float64{{1, math.NaN(), 3, 4}}, nil},
		"no observed": {[][]float64{{1, 2, 3, 4}}, [][]float64{{0, 0, 0, 0}}},
		"mask rows":   {[][]float64{{1, 2, 3, 4}}, [][]float64{{1, 1, 1, 1}, {1, 1, 1, 1}}},
		"no data":     {nil, nil},
	}
	for name, c := range cases {
		if _, err := infer.Latents(context.Background(), tr, c.x, c.mask, infer.Options{Iters: 1}); err == nil || !strings.HasPrefix(err.Error(), "infer:") {
			t.Errorf("%s: error %v, want an infer: error", name, err)
		}
	}
	// A NaN in a missing entry is fine.
	if _, err := infer.Latents(context.Background(), tr, [][]float64{{1, math.NaN(), 3, 4}}, [][]float64{{1, 0, 1, 1}}, infer.Options{Iters: 1}); err != nil {
		t.Errorf("NaN at a masked entry: %v", err)
	}
}

// mse over observed (observed=true) or missing (observed=false) entries of mask (nil = all).
func mse(x, pred, mask [][]float64, observed bool) float64 {
	s, c := 0.0, 0.0
	for i := range x {
		for j := range x[i] {
			obs := mask == nil || mask[i][j] != 0
			if obs != observed {
				continue
			}
			s += (x[i][j] - pred[i][j]) * (x[i][j] - pred[i][j])
			c++
		}
	}
	return s / c
}

func columnMeans(x [][]float64, rows int) [][]float64 {
	mu := make([]float64, len(x[0]))
	for _, r := range x {
		for j, v := range r {
			mu[j] += v / float64(len(x))
		}
	}
	out := make([][]float64, rows)
	for i := range out {
		out[i] = mu
	}
	return out
}
