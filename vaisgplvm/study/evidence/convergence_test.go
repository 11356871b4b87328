package evidence

import (
	"context"
	"math"
	"strings"
	"testing"
)

// TestConvergenceCheck: on a trained Q = 2 toy of 100 points, against a reference of 2000
// temperatures x 8 runs (s.e. about 0.005 nats per point), an estimate at 32 temperatures x 2 runs
// sits 0.5-0.9 nats per point above it on seeds 1-3; its check at 8 temperatures finds a shift of
// more than 3 standard errors, NotConverged warns, and the 1/T extrapolation removes more than
// half of the bias on every seed. The reference's own check (500 temperatures) moves it by less
// than 0.05 and does not warn. CheckTemps -1 skips the check and CheckTemps >= Temps is an error.
func TestConvergenceCheck(t *testing.T) {
	tr := trained(t, 2, 100)
	ref, err := Estimate(context.Background(), tr, Options{Temps: 2000, Runs: 8, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if c := ref.Check; c == nil || c.Temps != 500 || math.Abs(c.RemainingBias) > 0.05 || NotConverged(ref, 0.05) != "" {
		t.Fatalf("reference at 2000 temperatures: check %+v, warning %q; want 500 temperatures, a remaining bias below 0.05 and no warning",
			c, NotConverged(ref, 0.05))
	}
	for seed := uint64(1); seed <= 3; seed++ {
		res, err := Estimate(context.Background(), tr, Options{Temps: 32, Runs: 2, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		c := res.Check
		bias, left := res.NegLogEvidencePerPoint-ref.NegLogEvidencePerPoint, c.Extrapolated-ref.NegLogEvidencePerPoint
		t.Logf("seed %d: bias at 32 temperatures %.3f, shift from 8 %.3f ± %.3f, after extrapolation %.3f", seed, bias, c.Shift, c.ShiftSE, left)
		if bias < 0.3 {
			t.Fatalf("seed %d: 32 temperatures x 2 runs are only %.3f above the reference: the test cannot show the check", seed, bias)
		}
		if c.Temps != 8 || !(c.Shift < -3*c.ShiftSE) || !strings.Contains(NotConverged(res, 0.05), "--temps 128") {
			t.Errorf("seed %d: check %+v, warning %q; want 8 temperatures, a shift below -3 s.e. and a warning", seed, c, NotConverged(res, 0.05))
		}
		if !(math.Abs(left) < bias/2) {
			t.Errorf("seed %d: extrapolated %.3f from the reference, estimate %.3f: want less than half", seed, left, bias)
		}
	}
	none, err := Estimate(context.Background(), tr, Options{Temps: 4, Runs: 2, Points: []int{0}, CheckTemps: -1})
	if err != nil || none.Check != nil {
		t.Errorf("CheckTemps -1: check %+v, error %v; want none", none.Check, err)
	}
	if _, err := Estimate(context.Background(), tr, Options{Temps: 4, Runs: 2, Points: []int{0}, CheckTemps: 4}); err == nil {
		t.Error("CheckTemps = Temps: no error")
	}
}
