package cmf

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/ais"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// TestExperimentOnOwnData runs the held-out comparison on toy data (3 families, 60 steps): every
// family has finite bounds, the held-out IW bound with K = 20 is above K = 1 (the K = 1 bound
// is the bound itself, within their errors), the AIS log-likelihood is above the bound on the same
// points, and the table and figures render. Bad options are refused before any work.
func TestExperimentOnOwnData(t *testing.T) {
	ds := &data.Dataset{Name: "toy", X: toy(40, 5, false)}
	o := ExperimentOptions{Data: ds, Config: Config{LatentDim: 2, M: 8, Hidden: 10, AuxHidden: 10, LR: 0.01, Batch: 20},
		Iters: 60, Test: 10, FitIters: 30, Draws: 4, Ks: []int{1, 20}, Reps: 3, AIS: ais.Options{Temps: 200, Runs: 4}, AISPoints: 5,
		Backend: testutil.Backend()}
	res, err := Experiment(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Families) != 3 || res.Train != 30 || res.Test != 10 {
		t.Fatalf("families %d, train %d, test %d", len(res.Families), res.Train, res.Test)
	}
	for _, f := range res.Families {
		k1, k20 := f.IW[0], f.IW[1]
		if !(k20.PerPoint > k1.PerPoint) {
			t.Errorf("%s: IW K=20 %.3f not above K=1 %.3f", f.Family, k20.PerPoint, k1.PerPoint)
		}
		if !(f.LogLik.PerPoint+3*f.LogLik.SE > f.TestBoundAIS) {
			t.Errorf("%s: AIS log p(y) %.3f ± %.3f below the bound %.3f on the same points", f.Family, f.LogLik.PerPoint, f.LogLik.SE, f.TestBoundAIS)
		}
		if len(f.Warnings) != 0 {
			t.Errorf("%s: warnings %q", f.Family, f.Warnings)
		}
		if len(f.Curve) != 60 || f.Rise == nil || f.Rise.Steps != 12 {
			t.Errorf("%s: curve of %d steps, final rise %+v (want windows of 12 steps, a fifth)", f.Family, len(f.Curve), f.Rise)
		}
		if want := map[bool]int{true: 2, false: 0}[f.Family == "cmf"]; len(f.Marginal) != want {
			t.Errorf("%s: %d marginal bounds, want %d (cmf: K = 10 and 100 by default)", f.Family, len(f.Marginal), want)
		}
	}
	if md := res.Markdown(); len(md) < 100 {
		t.Errorf("markdown: %q", md)
	}
	figs, err := res.Figures()
	if err != nil || len(figs) != 5 { // curves, iw, three latent plots (no images)
		t.Errorf("figures: %d, %v", len(figs), err)
	}
	for _, bad := range []ExperimentOptions{{Dataset: "oilflow"}, {Data: ds, Families: []string{"vae"}}, {Data: ds, Ks: []int{0}}, {Data: ds, Draws: 1}} {
		if _, err := Experiment(context.Background(), bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
}

// TestFitFreezesGlobals fits 3 held-out points to a trained model with M = 8 inducing inputs
// (more than the held-out count): every global variable of the held-out model equals the trained
// model's after 20 steps, the locals have moved from their start at the nearest training point,
// and the held-out bound is finite.
func TestFitFreezesGlobals(t *testing.T) {
	y := toy(33, 5, false)
	for _, fam := range []string{"cmf", "meanfield"} {
		m := newModel(t, Config{Family: fam, LatentDim: 2, M: 8, Hidden: 8, AuxHidden: 8, LR: 0.01, Batch: 10}, y[:30])
		if err := m.Train(context.Background(), 20, nil); err != nil {
			t.Fatal(err)
		}
		held, err := m.Fit(context.Background(), y[30:], 20)
		if err != nil {
			t.Fatalf("%s: %v", fam, err)
		}
		if held.Cfg.M != 8 || held.N != 3 || held.Iter != 20 {
			t.Fatalf("%s: held-out M %d, N %d, steps %d", fam, held.Cfg.M, held.N, held.Iter)
		}
		globals := 0
		vars.Each(m.Ctx, func(v *mlmodel.Variable) {
			if strings.HasPrefix(v.Scope(), "/local") || strings.HasPrefix(v.Scope(), "/AdamOptimizer") || !v.Shape().DType.IsFloat() {
				return // locals, optimiser state, the RNG state
			}
			hv := held.Ctx.Store().Scope(v.Scope()).GetVariable(v.Name())
			if hv == nil {
				t.Errorf("%s: %s/%s missing from the held-out model", fam, v.Scope(), v.Name())
				return
			}
			a, b := vars.Flat64(v.MustValue()), vars.Flat64(hv.MustValue())
			if !slices.Equal(a, b) {
				t.Errorf("%s: %s/%s changed while fitting held-out points", fam, v.Scope(), v.Name())
			}
			globals++
		})
		if globals < 4 {
			t.Errorf("%s: only %d global variables compared", fam, globals)
		}
		mean, _, err := held.locals()
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(mean[0], held.init.mean[0]) {
			t.Errorf("%s: held-out locals did not move", fam)
		}
		if b, err := held.Bound(4); err != nil || math.IsNaN(b.PerPoint) {
			t.Errorf("%s: held-out bound %v, %v", fam, b.PerPoint, err)
		}
	}
}

// TestCheckAIS checks the AIS warning on hand-made numbers: none when AIS is above the bound on
// average (even with one point below) or below it within 3 combined standard errors, one naming
// the counts when it is below by more.
func TestCheckAIS(t *testing.T) {
	bound := []float64{10, 20, 30}
	ok := FamilyResult{Family: "cmf", LogLik: Estimate{PerPoint: 21, SE: 0.1, Points: []float64{9, 22, 32}}, TestBoundAIS: 20, TestBoundAISSE: 0.1}
	if w := ok.checkAIS(bound, 100); w != "" {
		t.Errorf("warning for AIS above the bound: %s", w)
	}
	bad := FamilyResult{Family: "cmf", LogLik: Estimate{PerPoint: 19, SE: 0.1, Points: []float64{9, 21, 27}}, TestBoundAIS: 20, TestBoundAISSE: 0.4}
	if w := bad.checkAIS(bound, 100); w != "" { // 1 below, 3 s.e. = 1.24
		t.Errorf("warning for AIS within its error of the bound: %s", w)
	}
	bad.Family, bad.TestBoundAISSE = "amortised", 0.2 // 3 s.e. = 0.67
	w := bad.checkAIS(bound, 100)
	for _, want := range []string{"amortised", "19.00 ± 0.10", "20.00 ± 0.20", "same 3 points (on 2 of them)", "did not converge", "(now 100)"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q lacks %q", w, want)
		}
	}
}

// TestExperimentWarnsOnUnconvergedAIS runs AIS with a single temperature (importance sampling
// from the prior with one sample per run) on a trained toy model: its estimate falls below the
// mean-field bound, and the result carries the warning in JSON and Markdown.
func TestExperimentWarnsOnUnconvergedAIS(t *testing.T) {
	ds := &data.Dataset{Name: "toy", X: toy(40, 5, false)}
	o := ExperimentOptions{Data: ds, Families: []string{"meanfield"}, Config: Config{LatentDim: 2, Hidden: 10, LR: 0.01, Batch: 20},
		Iters: 100, Test: 10, FitIters: 30, Draws: 4, Ks: []int{1}, Reps: 2, AIS: ais.Options{Temps: 1, Runs: 2}, AISPoints: 10,
		Backend: testutil.Backend()}
	res, err := Experiment(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Families[0]
	if len(f.Warnings) != 1 || !strings.Contains(res.Markdown(), "Warning: meanfield: the AIS log p(y)") {
		t.Fatalf("AIS %.3f against the bound %.3f: warnings %q", f.LogLik.PerPoint, f.TestBoundAIS, f.Warnings)
	}
}

// TestWarmStartOptions: a warm start needs cmf and mean-field among the families (the default
// families have both) and GP input dim = latent dim.
func TestWarmStartOptions(t *testing.T) {
	for _, c := range []struct {
		fams  []string
		input int
		ok    bool
	}{{nil, 0, true}, {[]string{"cmf", "meanfield"}, 0, true}, {[]string{"cmf"}, 0, false}, {nil, 3, false}} {
		o := ExperimentOptions{Dataset: "frey", Families: c.fams, WarmStart: true, Config: Config{LatentDim: 2, InputDim: c.input}}
		if err := o.Check(); (err == nil) != c.ok {
			t.Errorf("families %v, input dim %d: Check() = %v, want ok %v", c.fams, c.input, err, c.ok)
		}
	}
}

// TestFrozenDecoderExperiment: with the warm start and the decoder frozen, cmf's decoder is
// mean-field's, so the decoder's AIS log-likelihood (same points, same AIS noise) is the same for
// both families to 1e-9, while cmf's own bound differs; the table says the decoder was frozen.
// Freezing without the warm start is refused.
func TestFrozenDecoderExperiment(t *testing.T) {
	ds := &data.Dataset{Name: "toy", X: toy(40, 5, false)}
	o := ExperimentOptions{Data: ds, Families: []string{"cmf", "meanfield"}, WarmStart: true, FreezeDecoder: true,
		Config: Config{LatentDim: 2, InputDim: 2, M: 8, Hidden: 10, AuxHidden: 10, LR: 0.01, Batch: 20},
		Iters:  40, Test: 10, FitIters: 20, Draws: 4, Ks: []int{1}, Reps: 2, AIS: ais.Options{Temps: 50, Runs: 2}, AISPoints: 5,
		Backend: testutil.Backend()}
	res, err := Experiment(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	c, m := res.Families[0], res.Families[1]
	if math.Abs(c.LogLik.PerPoint-m.LogLik.PerPoint) > 1e-9 || c.TestBound.PerPoint == m.TestBound.PerPoint {
		t.Errorf("AIS log p(y): cmf %.12g, mean-field %.12g (want equal); held-out bounds %.6g and %.6g (want different)",
			c.LogLik.PerPoint, m.LogLik.PerPoint, c.TestBound.PerPoint, m.TestBound.PerPoint)
	}
	if !strings.Contains(res.Table().Title, "decoder frozen at mean-field's") {
		t.Errorf("title %q does not say the decoder was frozen", res.Table().Title)
	}
	o.WarmStart = false
	if err := o.Check(); err == nil {
		t.Error("FreezeDecoder without WarmStart accepted")
	}
}
