package experiment_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestScheduleLabView: the sliders of a VAIS lab are beta_1..beta_{K-1}, the eta factor, the
// underdamped switch and its damping; their starting values map to the trained schedule (to the
// sliders' 0.01 resolution), factor 1 and VAIS's chain; View's row for a setting is Evaluate's
// result for the same setting (same noise), with the switch on it runs the underdamped chain at
// the slider's damping; a wrong number of values and a decreasing schedule are refused.
func TestScheduleLabView(t *testing.T) {
	tr := labTrainer(t, "vais")
	const k = 4 // labTrainer's K
	lab, err := experiment.NewScheduleLab(tr, []int{0, 3, 6, 9, 12, 15}, 3, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctl := lab.Controls()
	if len(ctl) != k+2 {
		t.Fatalf("%d controls for K = %d on VAIS, want K + 2: %+v", len(ctl), k, ctl)
	}
	start := make([]float64, len(ctl))
	for i, c := range ctl {
		start[i] = c.Value
	}
	s, err := lab.SettingOf(start)
	if err != nil {
		t.Fatal(err)
	}
	betas, _ := lab.Trained()
	for k, b := range betas {
		if math.Abs(s.Betas[k]-b) > 0.005+1e-12 {
			t.Errorf("starting beta_%d %g, trained %g", k+1, s.Betas[k], b)
		}
	}
	if s.EtaScale != 1 || s.Damping != nil {
		t.Errorf("starting setting %+v: want factor 1 and VAIS's chain", s)
	}
	moved := append([]float64{}, start...)
	moved[0], moved[k-1], moved[k], moved[k+1] = 0.05, 1, 1, 0.6 // beta_1, eta x 2, underdamped at 0.6
	tab, panels, err := lab.View(moved)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := lab.SettingOf(moved)
	if set.EtaScale != 2 || set.Damping == nil || *set.Damping != 0.6 || set.Betas[0] != 0.05 {
		t.Errorf("moved sliders give %+v", set)
	}
	r := labEval(t, lab, set)
	want := r.NegBound
	if got := tab.Rows[1][4]; !strings.HasPrefix(got, fmt.Sprintf("%.3f ± ", want)) || tab.Rows[1][3] != "0.60" || len(panels) != 3 {
		t.Errorf("View's row %q (damping %q, %d panels), Evaluate's -ELBO %.3f", got, tab.Rows[1][3], len(panels), want)
	}
	if _, _, err := lab.View(start[:2]); err == nil {
		t.Error("two slider values accepted")
	}
	bad := append([]float64{}, start...)
	bad[0], bad[1] = 0.9, 0.1
	if _, _, err := lab.View(bad); err == nil {
		t.Error("a decreasing schedule accepted")
	}
}

// BenchmarkScheduleLabView is one move of notebook 02's sliders: a new beta_1 (whose graph is
// compiled anew) or a new damping of the underdamped chain (the same graph, a new variable value)
// evaluated on the lab's 100 oil-flow points with 4 chains each (Q = 10, M = 50, K = 5, as the
// notebook), and the table and panels built.
func BenchmarkScheduleLabView(b *testing.B) {
	ds, err := data.Oilflow()
	if err != nil {
		b.Fatal(err)
	}
	cfg := model.DefaultConfig("vais", 10)
	cfg.Batch, cfg.K = 100, 5
	m, err := model.New(cfg, ds.X, nil)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		b.Fatal(err)
	}
	points := make([]int, 100)
	for i := range points {
		points[i] = i * 10
	}
	lab, err := experiment.NewScheduleLab(tr, points, 4, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctl := lab.Controls()
	for _, sub := range []struct {
		name  string
		slide int // the slider moved: beta_1, or the damping with the underdamped switch on
	}{{"beta_1", 0}, {"underdamped_damping", len(ctl) - 1}} {
		b.Run(sub.name, func(b *testing.B) {
			v := make([]float64, len(ctl))
			for i, c := range ctl {
				v[i] = c.Value
			}
			if sub.slide != 0 {
				v[len(v)-2] = 1 // the underdamped chain
			}
			for i := 0; b.Loop(); i++ {
				v[sub.slide] = 0.01 + float64(i%50)/100 // a new value each move
				if _, _, err := lab.View(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
