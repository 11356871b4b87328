package protocol

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

func tinyData() *data.Dataset {
	x := make([][]float64, 30)
	for i := range x {
		x[i] = []float64{float64(i), float64(i * i % 7), math.Sin(float64(i))}
	}
	return &data.Dataset{Name: "tiny", X: x}
}

// TestHoldOut: 10% of the rows (at least 2) held out, each with ceil(D/2) observed entries, NaN at
// the others; the training rows are the rest, in order; the same seed gives the same split.
func TestHoldOut(t *testing.T) {
	ds := tinyData()
	labels := make([]int, len(ds.X))
	for i := range labels {
		labels[i] = i
	}
	s, err := HoldOut(ds.X, labels, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Test) != 3 || len(s.Train) != 27 || len(s.TrainLabels) != 27 {
		t.Fatalf("%d held out, %d training rows, %d labels; want 3, 27, 27", len(s.Test), len(s.Train), len(s.TrainLabels))
	}
	for i, m := range s.Mask {
		obs := 0
		for j, v := range m {
			if v == 1 {
				obs++
				if s.Hidden[i][j] != s.Test[i][j] {
					t.Errorf("held-out row %d entry %d: observed %g, truth %g", i, j, s.Hidden[i][j], s.Test[i][j])
				}
			} else if !math.IsNaN(s.Hidden[i][j]) {
				t.Errorf("held-out row %d entry %d: hidden but %g", i, j, s.Hidden[i][j])
			}
		}
		if obs != 2 {
			t.Errorf("held-out row %d: %d observed entries, want ceil(3/2) = 2", i, obs)
		}
	}
	for i := 1; i < len(s.TrainLabels); i++ {
		if s.TrainLabels[i] <= s.TrainLabels[i-1] {
			t.Fatalf("training rows out of order: %v", s.TrainLabels)
		}
	}
	again, err := HoldOut(ds.X, labels, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Test {
		if again.Test[i][0] != s.Test[i][0] {
			t.Fatal("the same seed gave a different split")
		}
	}
}

// TestProtocolConfig: Table 4's settings (Q per dataset, K = 25 and a shared q(u) root for images).
func TestProtocolConfig(t *testing.T) {
	for _, c := range []struct {
		dataset string
		q, k    int
		shared  bool
	}{{"oilflow", 10, 5, false}, {"wine", 9, 5, false}, {"frey", 20, 25, true}, {"mnist", 5, 25, true}} {
		cfg := Config("vais", c.dataset, 2)
		if cfg.Q != c.q || cfg.K != c.k || cfg.SharedQSqrt != c.shared || cfg.M != 50 || cfg.LR != 0.02 || cfg.Seed != 2 || cfg.Batch != DefaultBatch {
			t.Errorf("%s: %+v", c.dataset, cfg)
		}
	}
	if OwnDataQ(100, 4) != 4 || OwnDataQ(100, 40) != 10 || OwnDataQ(3, 40) != 3 {
		t.Errorf("OwnDataQ(100, 4) = %d, OwnDataQ(100, 40) = %d, OwnDataQ(3, 40) = %d; want 4, 10 and 3",
			OwnDataQ(100, 4), OwnDataQ(100, 40), OwnDataQ(3, 40))
	}
}

// TestRegisteredDatasetProtocol: the paper's protocol reads a dataset's registration: Q, its
// presets in Config (K, shared root, VAIS's stop-gradient chain) and its evaluation (draws,
// reconstruction chains); Frey's are Table 4's and our stop-gradient chain for VAIS only.
func TestRegisteredDatasetProtocol(t *testing.T) {
	SetStopGradVAIS("faces-test", true)
	t.Cleanup(func() { SetStopGradVAIS("faces-test", false) })
	err := data.Register(data.Builtin{Name: "faces-test", Image: true, Q: 3, K: 7, SharedQSqrt: true,
		EvalDraws: 2, ReconChains: 3}, func(data.PixelScale) (*data.Dataset, error) { return tinyData(), nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { data.Unregister("faces-test") })
	if Q("faces-test") != 3 || !IsImage("faces-test") {
		t.Errorf("Q %d, image %v: want 3, true", Q("faces-test"), IsImage("faces-test"))
	}
	for _, method := range []string{"vais", "iwvi"} {
		c := Config(method, "faces-test", 1)
		if c.Q != 3 || c.K != 7 || !c.SharedQSqrt || c.StopGrad != (method == "vais") || c.Batch != DefaultBatch {
			t.Errorf("%s: %+v", method, c)
		}
	}
	if c := Config("vais", "frey", 1); c.Q != 20 || c.K != 25 || !c.SharedQSqrt || !c.StopGrad {
		t.Errorf("frey vais: %+v", c)
	}
	if c := Config("vais", "mnist", 1); c.K != 25 || c.StopGrad {
		t.Errorf("mnist vais: %+v (want K 25, the paper's gradient)", c)
	}
	if c := Config("vais", "oilflow", 1); c.K != 5 || c.SharedQSqrt || c.StopGrad {
		t.Errorf("oilflow vais: %+v", c)
	}
	if ds, err := LoadImages("faces-test", "unit"); err != nil || len(ds.X) != 30 {
		t.Errorf("LoadImages: %v", err)
	}
	if _, err := LoadTabular("faces-test", false); err == nil {
		t.Error("LoadTabular of an image dataset: want an error")
	}
	tr := &train.Trainer{}
	if d := EvaluationOf("faces-test", 5, tr); d != 2 || tr.ReconChains != 3 {
		t.Errorf("EvaluationOf(faces-test) = %d draws, %d chains: want 2, 3", d, tr.ReconChains)
	}
	if d := EvaluationOf("oilflow", 5, tr); d != 5 || tr.ReconChains != 0 {
		t.Errorf("EvaluationOf(oilflow) = %d draws, %d chains: want 5, 0 (the defaults)", d, tr.ReconChains)
	}
}

// TestFit: a size the caller set that does not fit the data is an *option.Error naming it and the
// largest value that fits; one it did not set is lowered with a note; sizes that fit are kept.
func TestFit(t *testing.T) {
	c := Config("vais", "oilflow", 1) // M 50, Q 10, Batch 100
	notes, err := Fit(&c, 40, 12, nil)
	if err != nil || c.M != 40 || c.Q != 10 || c.Batch != 40 || len(notes) != 2 || notes[0].Field != "M" || notes[1].Field != "Batch" {
		t.Errorf("Fit to 40 x 12: M %d, Q %d, Batch %d, notes %v (%v); want 40, 10, 40 and notes on M and Batch", c.M, c.Q, c.Batch, notes, err)
	}
	c = Config("vais", "oilflow", 1)
	var oe *option.Error
	_, err = Fit(&c, 40, 6, func(f string) bool { return f == "Q" })
	if !errors.As(err, &oe) || oe.Field() != "Q" || !strings.Contains(err.Error(), "use Q 6 or less") {
		t.Errorf("an explicit Q 10 on 6 columns: %v, want an *option.Error about Q naming 6", err)
	}
	c = Config("vais", "oilflow", 1)
	if notes, err := Fit(&c, 1000, 12, nil); err != nil || len(notes) != 0 || c.M != 50 || c.Batch != 100 {
		t.Errorf("Fit to oilflow's size changed %+v (%v)", notes, err)
	}
	if _, err := Fit(&c, 0, 3, nil); err == nil {
		t.Error("Fit to no data: want an error")
	}
}
