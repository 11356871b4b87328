package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCurveRise: a curve whose bound climbs by 0.5 per step rises by 0.5 x (steps per window)
// between its last two tenths; a flat noisy curve's rise is within 3 standard errors of 0; short
// curves and a curve whose rise's standard error overflows are refused.
func TestCurveRise(t *testing.T) {
	lin := make([]float64, 200)
	for i := range lin {
		lin[i] = 100 - 0.5*float64(i) // -bound
	}
	r, err := CurveRise(lin)
	if err != nil || math.Abs(r.PerPoint-10) > 1e-12 || r.Steps != 20 {
		t.Errorf("linear curve: rise %+v, %v; want 10 over windows of 20 steps", r, err)
	}
	rng := rand.New(rand.NewPCG(3, 0))
	flat := make([]float64, 2000)
	for i := range flat {
		flat[i] = 5 + rng.NormFloat64()
	}
	if r, err := CurveRise(flat); err != nil || math.Abs(r.PerPoint) > 3*r.SE || math.Abs(r.SE-math.Sqrt(2.0/200)) > 0.03 {
		t.Errorf("flat curve: rise %+v, %v; want 0 within 3 s.e. of about %.3f", r, err, math.Sqrt(2.0/200))
	}
	if _, err := CurveRise(lin[:19]); err == nil {
		t.Error("a 19-step curve accepted")
	}
	blown := slices.Clone(lin[:20]) // finite steps whose spread overflows the standard error
	blown[18], blown[19] = -1e308, 1e308
	if r, err := CurveRise(blown); err == nil {
		t.Errorf("a curve whose rise's s.e. overflows: %+v, want an error (JSON has no infinities)", r)
	}
}

// TestRiseFlat: Flat is |rise| <= 2 s.e.
func TestRiseFlat(t *testing.T) {
	if !(Rise{PerPoint: -0.19, SE: 0.1}).Flat() || (Rise{PerPoint: 0.21, SE: 0.1}).Flat() {
		t.Error("Flat is not |rise| <= 2 s.e.")
	}
}
