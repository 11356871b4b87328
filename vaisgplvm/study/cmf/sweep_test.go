package cmf

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// TestLRSweep runs the learning-rate sweep on toy data (mean-field and a warm-started cmf, three
// rates, one far too large): each family scores every rate, the diverging rate is reported and
// never chosen, the chosen rate is the one of the highest validation bound and is the rate the
// family then trains at; mean-field's validation score equals a run built by hand (the training
// points less the validation share, trained, the validation locals fitted, the bound) to 1e-9.
// A sweep in which every rate diverges is an error naming the family.
func TestLRSweep(t *testing.T) {
	ds := &data.Dataset{Name: "toy", X: toy(50, 5, false)}
	o := ExperimentOptions{Data: ds, Families: []string{"cmf", "meanfield"}, WarmStart: true,
		Config: Config{LatentDim: 2, M: 8, Hidden: 10, AuxHidden: 10, Batch: 20},
		Iters:  40, SweepIters: 30, Validation: 0.25, Test: 10, FitIters: 20, Draws: 3, Ks: []int{1}, Reps: 2, AISPoints: 0,
		LRs: []float64{1e-3, 3e-2, 1e12}, Backend: testutil.Backend()}
	res, err := Experiment(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sweep) != 6 {
		t.Fatalf("%d sweep scores, want 2 families x 3 rates", len(res.Sweep))
	}
	for _, f := range res.Families {
		best, chosen := math.Inf(-1), 0.0
		for _, s := range res.Sweep {
			if s.Family != f.Family {
				continue
			}
			if s.LR == 1e12 {
				if s.Diverged == "" || s.Chosen {
					t.Errorf("%s at lr 1e12: diverged %q, chosen %v (want diverged, not chosen)", f.Family, s.Diverged, s.Chosen)
				}
				continue
			}
			if s.Diverged != "" || math.IsNaN(s.Validation.PerPoint) || s.Validation.SE <= 0 {
				t.Errorf("%s at lr %g: diverged %q, validation %+v", f.Family, s.LR, s.Diverged, s.Validation)
			}
			if s.Validation.PerPoint > best {
				best = s.Validation.PerPoint
			}
			if s.Chosen {
				chosen = s.LR
			}
		}
		for _, s := range res.Sweep {
			if s.Family == f.Family && s.Chosen && s.Validation.PerPoint != best {
				t.Errorf("%s: chose lr %g (validation %.4f), the best is %.4f", f.Family, s.LR, s.Validation.PerPoint, best)
			}
		}
		if f.LR != chosen || f.Model.Cfg.LR != chosen {
			t.Errorf("%s trained at lr %g (model %g), the sweep chose %g", f.Family, f.LR, f.Model.Cfg.LR, chosen)
		}
	}
	// mean-field's score at 3e-2, by hand.
	oo := o.withDefaults(len(ds.X))
	_, trainIdx := split(len(ds.X), o.Test, 1, 0x7e57)
	yTrain := data.Rows(ds.X, trainIdx)
	valIdx, fitIdx := split(len(yTrain), 10, 1, 0x5a11d)
	c := oo.Config
	c.Family, c.LR = "meanfield", 3e-2
	m := newModel(t, c, data.Rows(yTrain, fitIdx))
	if err := m.Train(context.Background(), 30, nil); err != nil {
		t.Fatal(err)
	}
	held, err := m.Fit(context.Background(), data.Rows(yTrain, valIdx), 20)
	if err != nil {
		t.Fatal(err)
	}
	want, err := held.Bound(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Sweep {
		if s.Family == "meanfield" && s.LR == 3e-2 && math.Abs(s.Validation.PerPoint-want.PerPoint) > 1e-9 {
			t.Errorf("mean-field at lr 3e-2: sweep validation %.9f, by hand %.9f", s.Validation.PerPoint, want.PerPoint)
		}
	}
	if md := res.Markdown(); !strings.Contains(md, "Learning-rate sweep") || !strings.Contains(md, "diverged") {
		t.Errorf("markdown has no sweep table with the diverged rate:\n%s", md)
	}

	o.LRs = []float64{1e12, 1e13}
	o.Families, o.WarmStart = []string{"meanfield"}, false
	_, err = Experiment(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "family meanfield diverged at every rate") {
		t.Errorf("a sweep diverging at every rate: err %v", err)
	}
	var ce *option.Error
	if errors.As(err, &ce) {
		t.Errorf("a diverging sweep is no configuration error: %v", err)
	}
}

// TestLRSweepExtends: rates far too small for 30 steps (1e-5 and 2e-5) make the higher end win, so
// the sweep adds 4e-5, 8e-5 and 1.6e-4 (its own ratio, MaxSweepExtensions times), keeps the scores
// in increasing rate, chooses the best, and warns when the choice is still an end of the grid.
func TestLRSweepExtends(t *testing.T) {
	ds := &data.Dataset{Name: "toy", X: toy(50, 5, false)}
	o := ExperimentOptions{Data: ds, Families: []string{"meanfield"}, Config: Config{LatentDim: 2, Hidden: 10, AuxHidden: 10, Batch: 20},
		Iters: 30, Test: 10, FitIters: 20, Draws: 3, Ks: []int{1}, Reps: 2, AISPoints: 0, LRs: []float64{2e-5, 1e-5}, Backend: testutil.Backend()}
	res, err := Experiment(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1e-5, 2e-5, 4e-5, 8e-5, 1.6e-4}
	if len(res.Sweep) != len(want) {
		t.Fatalf("%d sweep scores %+v, want rates %v", len(res.Sweep), res.Sweep, want)
	}
	best := 0
	for i, s := range res.Sweep {
		if math.Abs(s.LR/want[i]-1) > 1e-12 {
			t.Errorf("rate %d: %g, want %g", i, s.LR, want[i])
		}
		if s.Validation.PerPoint > res.Sweep[best].Validation.PerPoint {
			best = i
		}
	}
	if !res.Sweep[best].Chosen || res.Families[0].LR != res.Sweep[best].LR {
		t.Errorf("chose lr %g, the best validation bound is at %g", res.Families[0].LR, res.Sweep[best].LR)
	}
	edge := best == 0 || best == len(want)-1
	warned := strings.Contains(strings.Join(res.Warnings(), "\n"), "an end of the rates it tried")
	if edge != warned {
		t.Errorf("chosen rate at an end: %v; warned: %v (%q)", edge, warned, res.Warnings())
	}
}

// TestCanWarmStart: the warm start needs cmf and meanfield among the families (nil: all) and the
// GP inputs of the latent dimension.
func TestCanWarmStart(t *testing.T) {
	for _, c := range []struct {
		fams      []string
		input, dz int
		want      bool
	}{{nil, 0, 5, true}, {[]string{"cmf", "meanfield"}, 5, 5, true}, {[]string{"cmf", "amortised"}, 0, 5, false},
		{[]string{"meanfield"}, 0, 5, false}, {nil, 2, 5, false}} {
		o := ExperimentOptions{Families: c.fams, Config: Config{InputDim: c.input, LatentDim: c.dz}}
		if got := CanWarmStart(o); got != c.want {
			t.Errorf("families %v, input dim %d, latent dim %d: CanWarmStart %v, want %v", c.fams, c.input, c.dz, got, c.want)
		}
	}
}
