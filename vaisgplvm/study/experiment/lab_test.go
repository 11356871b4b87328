package experiment_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/evidence"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestScheduleLab: at a trained VAIS model, the lab's bound under the trained schedule agrees
// with Evaluate's -ELBO (an independent path) within 4 combined standard errors; the trained
// schedule given by hand reproduces it exactly (same noise); another schedule and a step-size
// factor change it; its gap is the bound minus the evidence estimate on the same points (to
// 1e-9); bad schedules and factors are refused; the trained model is unchanged.
func TestScheduleLab(t *testing.T) {
	tr := labTrainer(t, "vais")
	points := make([]int, 30)
	for i := range points {
		points[i] = i
	}
	ev, err := evidence.Estimate(context.Background(), tr, evidence.Options{Temps: 40, Runs: 2, Seed: 1, CheckTemps: -1})
	if err != nil {
		t.Fatal(err)
	}
	lab, err := experiment.NewScheduleLab(tr, points, 1, 7, ev)
	if err != nil {
		t.Fatal(err)
	}
	base, err := lab.Evaluate(experiment.LabSetting{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := eval.Evaluate(tr, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(base.NegBound - e.NegELBO); d > 4*math.Hypot(base.SE, *e.NegELBOSE) {
		t.Errorf("lab -bound %.4f ± %.4f, Evaluate -ELBO %.4f ± %.4f", base.NegBound, base.SE, e.NegELBO, *e.NegELBOSE)
	}
	betas, _ := lab.Trained()
	same, err := lab.Evaluate(experiment.LabSetting{Betas: betas, EtaScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(same.NegBound-base.NegBound) > 1e-9 {
		t.Errorf("the trained schedule by hand: %.12g, the trained one: %.12g", same.NegBound, base.NegBound)
	}
	if g := base.NegBound - ev.NegLogEvidencePerPoint; base.Gap == nil || math.Abs(*base.Gap-g) > 1e-9 {
		t.Errorf("gap %v, want -bound - -log evidence = %.9f", base.Gap, g)
	}
	other, err := lab.Evaluate(experiment.LabSetting{Betas: []float64{0.7, 0.8, 0.9, 1}, EtaScale: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := other.Paired(base); math.Abs(d-(other.NegBound-base.NegBound)) > 1e-9 {
		t.Errorf("paired difference %.9f, difference of the bounds %.9f", d, other.NegBound-base.NegBound)
	}
	if other.NegBound == base.NegBound || len(other.Accept) != 4 || other.Etas[0] != 2*base.Etas[0] {
		t.Errorf("another schedule and factor: %+v; base %+v", other, base)
	}
	if back := labEval(t, lab, experiment.LabSetting{}); back.NegBound != base.NegBound || fmt.Sprint(back.Betas) != fmt.Sprint(base.Betas) {
		t.Errorf("the trained chain after a hand-set one: %.12g with beta %v; first %.12g with beta %v", back.NegBound, back.Betas, base.NegBound, base.Betas)
	}
	for _, bad := range []experiment.LabSetting{{Betas: []float64{0.5, 1}}, {Betas: []float64{0.5, 0.4, 0.9, 1}},
		{Betas: []float64{0.2, 0.4, 0.6, 0.9}}, {EtaScale: -1}, {EtaScale: 1e300}} { // 1e300: a NaN s.e. before issue 50
		if _, err := lab.Evaluate(bad); err == nil {
			t.Errorf("setting %+v accepted", bad)
		}
	}
	after, err := eval.Evaluate(tr, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after.NegELBO != e.NegELBO {
		t.Errorf("the lab changed the trained model: -ELBO %.12g then %.12g", e.NegELBO, after.NegELBO)
	}
}

// TestScheduleLabDamping: a damping on a VAIS model runs the underdamped chain: the lab's bound
// agrees with evidence.Underdamped's (Evaluate's path, independent draws) at the same damping
// within 4 combined standard errors, two dampings differ, and the Langevin chain afterwards is
// the one before, exactly. On an underdamped (uha) model the trained chain is its trained damping
// (setting it by hand gives the same bound to 1e-9), and agrees with Evaluate within 4 s.e.
// Dampings outside [0, 1) are refused.
func TestScheduleLabDamping(t *testing.T) {
	points := make([]int, 30)
	for i := range points {
		points[i] = i
	}
	tr := labTrainer(t, "vais")
	lab, err := experiment.NewScheduleLab(tr, points, 1, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lab.TrainedDamping() != nil {
		t.Errorf("a VAIS model has a trained damping %v", *lab.TrainedDamping())
	}
	base := labEval(t, lab, experiment.LabSetting{})
	half, low := 0.5, 0.0
	uha := labEval(t, lab, experiment.LabSetting{Damping: &half})
	ref, err := evidence.Underdamped(context.Background(), tr, nil, 8, nil, []float64{half})
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(uha.NegBound - ref[0].NegELBO); d > 4*math.Hypot(uha.SE, ref[0].SE) {
		t.Errorf("lab underdamped -bound %.4f ± %.4f, evidence.Underdamped %.4f ± %.4f", uha.NegBound, uha.SE, ref[0].NegELBO, ref[0].SE)
	}
	if other := labEval(t, lab, experiment.LabSetting{Damping: &low}); other.NegBound == uha.NegBound || *other.Damping != 0 {
		t.Errorf("dampings 0.5 and 0 give the same bound %.9f", uha.NegBound)
	}
	if again := labEval(t, lab, experiment.LabSetting{}); again.NegBound != base.NegBound || again.Damping != nil {
		t.Errorf("the Langevin chain after the underdamped one: %.12g, before: %.12g", again.NegBound, base.NegBound)
	}
	for _, bad := range []float64{1, -0.1, math.NaN()} {
		if _, err := lab.Evaluate(experiment.LabSetting{Damping: &bad}); err == nil {
			t.Errorf("damping %g accepted", bad)
		}
	}

	ut := labTrainer(t, "uha")
	ul, err := experiment.NewScheduleLab(ut, points, 1, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	trained := ul.TrainedDamping()
	if trained == nil || !(*trained > 0 && *trained < 1) {
		t.Fatalf("trained damping of a uha model: %v", trained)
	}
	ub := labEval(t, ul, experiment.LabSetting{})
	byHand := labEval(t, ul, experiment.LabSetting{Damping: trained})
	if math.Abs(byHand.NegBound-ub.NegBound) > 1e-9 {
		t.Errorf("the trained damping by hand: %.12g, the trained chain: %.12g", byHand.NegBound, ub.NegBound)
	}
	e, err := eval.Evaluate(ut, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(ub.NegBound - e.NegELBO); d > 4*math.Hypot(ub.SE, *e.NegELBOSE) {
		t.Errorf("lab -bound %.4f ± %.4f, uha Evaluate -ELBO %.4f ± %.4f", ub.NegBound, ub.SE, e.NegELBO, *e.NegELBOSE)
	}
}

// labEval is lab.Evaluate(s), failing the test on an error.
func labEval(t *testing.T, lab *experiment.ScheduleLab, s experiment.LabSetting) *experiment.LabResult {
	t.Helper()
	r, err := lab.Evaluate(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// labTrainer returns a model with the bound method (K = 4, Q = 2, M = 6, full batch) trained 40
// steps on 30 points of a 4-column file: the labs' subject.
func labTrainer(t *testing.T, method string) *train.Trainer {
	t.Helper()
	f := writeCSV(t, 30, 4, 3)
	cfg := model.DefaultConfig(method, 2)
	cfg.M, cfg.K, cfg.Batch = 6, 4, 0
	_, _, tr := fileTrainer(t, f.path, cfg)
	if err := tr.Run(context.Background(), 40, train.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	return tr
}
