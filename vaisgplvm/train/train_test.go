package train_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestResumeIsExact: 3 iterations, a checkpoint, a fresh trainer loading it and 3 more give the
// same curve as 6 iterations in one go (batches and noise depend only on seed and iteration),
// also with the adaptive step size's, the per-point step-size factors' and gradient clipping's
// state (clipping at 1x the running RMS, so that most steps are clipped and the state matters),
// and with q(u) trained by natural-gradient steps (IWVI, NatGrad 0.5).
// The straight run builds each step's inputs in Step (NoPrefetch), the others prepare them in the
// background: the curves must still agree to the last bit.
func TestResumeIsExact(t *testing.T) {
	variants := map[string]func(c *model.Config){
		"vais+adapt-eta": func(c *model.Config) { c.AdaptEta, c.Eta = true, 1 },
		"vais+clip-grad": func(c *model.Config) { c.ClipGrad = 1 },
		"vais+point-eta": func(c *model.Config) { c.PointEta, c.Eta = true, 1 },
		"iwvi+natgrad":   func(c *model.Config) { c.NatGrad = 0.5 },
	}
	var states []float64        // gradient clipping's running mean of squared norms, straight and resumed
	var pointScales [][]float64 // per-point step-size factors, straight and resumed
	for _, method := range append(model.Methods(), "vais+adapt-eta", "vais+clip-grad", "vais+point-eta", "iwvi+natgrad") {
		mutate := func(*model.Config) {}
		if v, ok := variants[method]; ok {
			method, mutate = method[:strings.Index(method, "+")], v
		}
		straight := toy.Trainer(t, method, mutate)
		straight.NoPrefetch = true // each step's inputs built in Step: the same as prefetched ones
		if err := straight.Run(context.Background(), 6, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		first := toy.Trainer(t, method, mutate)
		if err := first.Run(context.Background(), 3, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "ck.gob")
		if err := first.Save(path); err != nil {
			t.Fatal(err)
		}
		resumed := toy.Trainer(t, method, mutate)
		if err := resumed.Load(path); err != nil {
			t.Fatal(err)
		}
		if err := resumed.Run(context.Background(), 6, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		if d := testutil.MaxAbsDiff(straight.Curve, resumed.Curve); d != 0 || len(resumed.Curve) != 6 {
			t.Errorf("%s: resumed curve %v differs from straight %v (max diff %g)", method, resumed.Curve, straight.Curve, d)
		}
		for _, tr := range []*train.Trainer{straight, resumed} {
			if v := tr.Ctx.At("gradient_clip").GetVariable("sq_norm"); v != nil {
				val, _ := v.Value()
				states = append(states, vars.Flat64(val)[0])
			}
			if v := tr.Ctx.At("latent").GetVariable("log_eta_scale"); v != nil {
				val, _ := v.Value()
				pointScales = append(pointScales, vars.Flat64(val))
			}
		}
	}
	if len(pointScales) != 2 || testutil.MaxAbsDiff(pointScales[0], pointScales[1]) != 0 || testutil.MaxAbsDiff(pointScales[0], make([]float64, 30)) == 0 {
		t.Errorf("per-point step-size factors after 6 steps, straight and resumed: %v; want two equal vectors, not all 0", pointScales)
	}
	if len(states) != 2 || states[0] != states[1] || !(states[0] > 0) {
		t.Errorf("gradient clipping state after 6 steps, straight and resumed: %v; want two equal positive values", states)
	}
}

// TestAdaptiveEtaInTraining: with AdaptEta the step sizes move during training (down from a too
// large eta where the first transition rarely accepts, up from a far too small one where every
// move accepts) and afterwards every transition's acceptance rate is near the 0.8 target.
func TestAdaptiveEtaInTraining(t *testing.T) {
	pts := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, eta0 := range []float64{4, 1e-3} {
		tr := toy.Trainer(t, "vais", func(c *model.Config) { c.AdaptEta, c.Eta, c.AdaptRate = true, eta0, 0.5 })
		before, err := eval.Weights(tr, pts, 20, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Run(context.Background(), 80, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		p, err := tr.Params()
		if err != nil {
			t.Fatal(err)
		}
		after, err := eval.Weights(tr, pts, 20, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("eta0 %g: acceptance %.3f -> %.3f, etas %.4g", eta0, before.Accept, after.Accept, p.Etas)
		if eta0 > 1 && !(p.Etas[0] < eta0/2) {
			t.Errorf("eta0 %g: eta_1 = %g, want it reduced (acceptance was %.3f)", eta0, p.Etas[0], before.Accept[0])
		}
		for k, e := range p.Etas {
			if eta0 < 1 && !(e > 10*eta0) {
				t.Errorf("eta0 %g: eta_%d = %g, want it grown (acceptance was %.3f)", eta0, k+1, e, before.Accept[k])
			}
			if math.Abs(after.Accept[k]-0.8) > 0.15 {
				t.Errorf("eta0 %g: step %d acceptance %.3f after adaptation, want 0.8 ± 0.15", eta0, k+1, after.Accept[k])
			}
		}
	}
}

// TestClipGradOnlyActsWhenClipping: with a clipping factor no step reaches (1e9), training through
// the clipped-gradient path gives the same curve as without clipping (the gradients are multiplied
// by exactly 1); with the running mean of squared norms preset to 1e-20, every step is clipped to
// a norm of ~1e-10 and Adam barely moves the parameters (its epsilon is 1e-7: steps ~1e-3 of the
// learning rate and less), while unclipped training moves them by about the learning rate per step
// (measured: 0.4% against 41%).
func TestClipGradOnlyActsWhenClipping(t *testing.T) {
	// moved returns the largest relative change of the lengthscales and noise variance.
	run := func(clip, preset float64) (curve []float64, clipped int, moved float64) {
		tr := toy.Trainer(t, "vais", func(c *model.Config) { c.ClipGrad = clip })
		if preset > 0 {
			tr.Ctx.At("gradient_clip").VariableWithValue("sq_norm", preset)
		}
		before, err := tr.Params()
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Run(context.Background(), 20, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		after, err := tr.Params()
		if err != nil {
			t.Fatal(err)
		}
		a := append([]float64{before.NoiseVariance}, before.Lengthscales...)
		b := append([]float64{after.NoiseVariance}, after.Lengthscales...)
		for i := range a {
			moved = math.Max(moved, math.Abs(b[i]/a[i]-1))
		}
		return tr.Curve, tr.ClippedSteps(), moved
	}
	plain, n0, m0 := run(0, 0)
	loose, n1, _ := run(1e9, 0)
	if d := testutil.MaxAbsDiff(plain, loose); d > 1e-12 || n0 != 0 || n1 != 0 {
		t.Errorf("clip 1e9: curve differs from unclipped by %g (clipped steps %d, %d), want 0", d, n0, n1)
	}
	_, n2, m2 := run(5, 1e-20)
	t.Logf("largest relative change of noise variance and lengthscales in 20 steps: unclipped %.3g, clipped to ~1e-10 %.3g (%d steps clipped)", m0, m2, n2)
	if n2 != 20 || !(m0 > 0.05) || !(m2 < 0.02*m0) {
		t.Errorf("preset clipping: %d of 20 steps clipped, parameters moved %.3g vs %.3g unclipped; want 20, and under 2%% of a change above 0.05", n2, m2, m0)
	}
}

// TestTrainingLowersTheBound: 60 iterations of each method lower the -ELBO on the toy curve.
func TestTrainingLowersTheBound(t *testing.T) {
	for _, method := range model.Methods() {
		tr := toy.Trainer(t, method, nil)
		before, err := eval.Evaluate(tr, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Run(context.Background(), 60, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		after, err := eval.Evaluate(tr, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: -ELBO/N %.3f -> %.3f, MSE %.4f -> %.4f", method, before.NegELBO, after.NegELBO, before.MSE, after.MSE)
		if !(after.NegELBO < before.NegELBO-0.5) {
			t.Errorf("%s: -ELBO/N did not fall: %.3f -> %.3f", method, before.NegELBO, after.NegELBO)
		}
	}
}

func TestCheckpointErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gob")
	if err := os.WriteFile(bad, []byte("not a checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := toy.Trainer(t, "mf", nil)
	if err := tr.Load(bad); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("loading garbage: error %v, want one saying the file is corrupt", err)
	}
	if err := tr.Load(filepath.Join(dir, "missing.gob")); err == nil {
		t.Error("loading a missing file should fail")
	}
	good := filepath.Join(dir, "good.gob")
	if err := tr.Save(good); err != nil {
		t.Fatal(err)
	}
	other := toy.Trainer(t, "mf", func(c *model.Config) { c.M = 5 })
	if err := other.Load(good); err == nil || !strings.Contains(err.Error(), "settings") {
		t.Errorf("loading a checkpoint of other settings: error %v, want one naming the settings", err)
	}
	// A truncated file is an error, never a panic.
	buf, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc.gob")
	_ = os.WriteFile(trunc, buf[:len(buf)/2], 0o644)
	if err := toy.Trainer(t, "mf", nil).Load(trunc); err == nil {
		t.Error("loading a truncated checkpoint should fail")
	}
}

// TestDivergenceStopsWithIteration: an absurd learning rate makes the bound non-finite; Run stops
// with an error naming the iteration, and a checkpoint saved before stays loadable.
func TestDivergenceStopsWithIteration(t *testing.T) {
	tr := toy.Trainer(t, "vais", func(c *model.Config) { c.LR = 1e4; c.Precondition = false; c.Eta = 1 })
	path := filepath.Join(t.TempDir(), "last.gob")
	if err := tr.Save(path); err != nil {
		t.Fatal(err)
	}
	err := tr.Run(context.Background(), 50, train.RunOptions{})
	if err == nil {
		t.Fatalf("training with lr 1e4 did not diverge in 50 iterations: curve %v", tr.Curve)
	}
	if !strings.Contains(err.Error(), "diverged at iteration") {
		t.Errorf("error %q should say where it diverged", err)
	}
	if err := toy.Trainer(t, "vais", func(c *model.Config) { c.LR = 1e4; c.Precondition = false; c.Eta = 1 }).Load(path); err != nil {
		t.Errorf("the checkpoint written before divergence is unreadable: %v", err)
	}
}

// TestWeights: ESS lies in [1, K] and the entropy in [0, log K] for IWVI and VAIS; MF has no
// weights; an out-of-range point is an error. (ESS and entropy themselves are tested in metrics.)
func TestWeights(t *testing.T) {
	for _, method := range []string{"iwvi", "vais"} {
		tr := toy.Trainer(t, method, nil)
		if err := tr.Run(context.Background(), 20, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		st, err := eval.Weights(tr, []int{0, 3, 7, 11}, 25, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: ESS %.2f, entropy %.3f (log 25 = %.3f)", method, st.ESS, st.Entropy, math.Log(25))
		if !(st.ESS >= 1 && st.ESS <= 25) || !(st.Entropy >= 0 && st.Entropy <= math.Log(25)+1e-12) || st.Points != 4 {
			t.Errorf("%s: ESS %g or entropy %g out of range", method, st.ESS, st.Entropy)
		}
		mean := 0.0
		for _, e := range st.PerPointESS {
			mean += e / float64(len(st.PerPointESS))
		}
		if len(st.PerPointESS) != 4 || math.Abs(mean-st.ESS) > 1e-12 {
			t.Errorf("%s: per-point ESS %v do not average to %g", method, st.PerPointESS, st.ESS)
		}
	}
	if _, err := eval.Weights(toy.Trainer(t, "mf", nil), []int{0}, 5, 1); err == nil {
		t.Error("MF has no importance weights: want an error")
	}
	if _, err := eval.Weights(toy.Trainer(t, "iwvi", nil), []int{99}, 5, 1); err == nil {
		t.Error("an out-of-range point should be an error")
	}
}

// TestFloat32MatchesFloat64: on the same seeds, the float32 model's bound at initialisation agrees
// with float64 to 1e-4 relative, and after 60 iterations its -ELBO/N to 0.1 nats and its MSE to 10%.
func TestFloat32MatchesFloat64(t *testing.T) {
	for _, method := range model.Methods() {
		var evs [2][2]*eval.Evaluation
		for i, dt := range []string{"float64", "float32"} {
			tr := toy.Trainer(t, method, func(c *model.Config) { c.DType = dt })
			before, err := eval.Evaluate(tr, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Run(context.Background(), 60, train.RunOptions{}); err != nil {
				t.Fatalf("%s %s: %v", method, dt, err)
			}
			after, err := eval.Evaluate(tr, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			evs[i] = [2]*eval.Evaluation{before, after}
		}
		b64, b32 := evs[0][0].NegELBO, evs[1][0].NegELBO
		a64, a32 := evs[0][1], evs[1][1]
		t.Logf("%s: -ELBO/N at init f64 %.6f f32 %.6f; after 60 it f64 %.4f f32 %.4f; MSE %.5f vs %.5f",
			method, b64, b32, a64.NegELBO, a32.NegELBO, a64.MSE, a32.MSE)
		if math.Abs(b64-b32) > 1e-4*math.Max(1, math.Abs(b64)) {
			t.Errorf("%s: initial bound float32 %.6f vs float64 %.6f", method, b32, b64)
		}
		if math.Abs(a64.NegELBO-a32.NegELBO) > 0.1 || math.Abs(a64.MSE-a32.MSE) > 0.1*a64.MSE {
			t.Errorf("%s: after training float32 (%.4f, MSE %.5f) differs from float64 (%.4f, MSE %.5f)",
				method, a32.NegELBO, a32.MSE, a64.NegELBO, a64.MSE)
		}
	}
}

// TestStepCompilesOnce: every method, mini-batch and full batch, builds its training graph once
// and reuses it (no recompilation per iteration).
func TestStepCompilesOnce(t *testing.T) {
	for _, method := range model.Methods() {
		for _, batch := range []int{10, 0} {
			tr := toy.Trainer(t, method, func(c *model.Config) { c.Batch = batch })
			if err := tr.Run(context.Background(), 4, train.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			if n := tr.CompiledGraphs(); n != 1 {
				t.Errorf("%s batch %d: %d graphs built in 4 steps, want 1", method, batch, n)
			}
		}
	}
}

// TestGraphOpsGrowLinearlyInK: the VAIS training graph (with its second-order gradient through the
// chain) grows by the same number of operations for each added annealing step, so graph size is
// linear in K; MF's graph has matrix products too and is smaller than VAIS's.
func TestGraphOpsGrowLinearlyInK(t *testing.T) {
	ops := func(method string, k int) (int, int) {
		tr := toy.Trainer(t, method, func(c *model.Config) { c.K = k })
		if n, _ := tr.GraphOps(); n != 0 {
			t.Errorf("GraphOps before the first step = %d, want 0", n)
		}
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
		return tr.GraphOps()
	}
	mf, mfDots := ops("mf", 1)
	n2, d2 := ops("vais", 2)
	n4, _ := ops("vais", 4)
	n6, _ := ops("vais", 6)
	t.Logf("graph ops: MF %d (%d matmuls); VAIS K=2 %d (%d matmuls), K=4 %d, K=6 %d", mf, mfDots, n2, d2, n4, n6)
	if mfDots == 0 || d2 <= mfDots || !(n2 > mf) {
		t.Errorf("MF %d ops (%d dots) should be fewer than VAIS K=2's %d (%d dots)", mf, mfDots, n2, d2)
	}
	if step1, step2 := n4-n2, n6-n4; step1 <= 0 || math.Abs(float64(step2-step1)) > 0.05*float64(step1) {
		t.Errorf("ops added per 2 steps: %d then %d, want equal within 5%% (linear in K)", step1, step2)
	}
}

// TestAdamBeta2: after one step Adam's second moment is (1 - beta2) g^2, so with the same first
// gradient (same parameters and noise) AdamBeta2 = 0.5 gives 500 times the default 0.999's, entry
// by entry; an out-of-range decay is rejected.
func TestAdamBeta2(t *testing.T) {
	moments := func(beta2 float64) []float64 {
		tr := toy.Trainer(t, "vais", func(c *model.Config) { c.AdamBeta2 = beta2 })
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
		var out []float64
		vars.Each(tr.Ctx, func(v *mlmodel.Variable) {
			if strings.HasSuffix(v.Name(), "_2nd_moment") {
				val, _ := v.Value()
				out = append(out, vars.Flat64(val)...)
			}
		})
		return out
	}
	def, half := moments(0), moments(0.5)
	if len(def) == 0 || len(def) != len(half) {
		t.Fatalf("found %d and %d second-moment entries", len(def), len(half))
	}
	worst, nonzero := 0.0, 0
	for i := range def {
		if def[i] == 0 {
			continue
		}
		nonzero++
		worst = math.Max(worst, math.Abs(half[i]/def[i]-500)/500)
	}
	if nonzero < len(def)/4 || worst > 1e-9 { // rows of points outside the batch have no gradient
		t.Errorf("second moments with beta2 0.5 / 0.999: %d of %d nonzero, worst relative deviation from 500: %.3g", nonzero, len(def), worst)
	}
	for _, bad := range []float64{1, -0.1, math.NaN()} {
		c := model.DefaultConfig("vais", 2)
		c.AdamBeta2 = bad
		if c.Validate() == nil {
			t.Errorf("AdamBeta2 = %g should be rejected", bad)
		}
	}
}

// TestRunEvents: Run reports every step to its observer, with the bound, the iteration, the total
// and the step's -ELBO per point (the value appended to Curve).
func TestRunEvents(t *testing.T) {
	tr := toy.Trainer(t, "iwvi", nil)
	var got []train.Event
	if err := tr.Run(context.Background(), 3, train.RunOptions{Observe: func(e train.Event) { got = append(got, e) }}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d events for 3 steps", len(got))
	}
	for i, e := range got {
		if e.Method != "iwvi" || e.Iter != i+1 || e.Total != 3 || e.NegELBO != tr.Curve[i] || !(e.Seconds > 0) {
			t.Errorf("event %d = %+v, want iwvi, iteration %d of 3, -ELBO %g, seconds > 0", i, e, i+1, tr.Curve[i])
		}
	}
}
