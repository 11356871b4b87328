package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCurveRise: a curve whose bound climbs by 0.5 per step rises by 0.5 x (steps per window)
// between its last two fifths; a flat noisy curve's rise is within 3 standard errors of 0; short
// curves and a curve whose rise's standard error overflows are refused.
func TestCurveRise(t *testing.T) {
	lin := make([]float64, 200)
	for i := range lin {
		lin[i] = 100 - 0.5*float64(i) // -bound
	}
	r, err := CurveRise(lin)
	if err != nil || math.Abs(r.PerPoint-20) > 1e-12 || r.Steps != 40 {
		t.Errorf("linear curve: rise %+v, %v; want 20 over windows of 40 steps", r, err)
	}
	rng := rand.New(rand.NewPCG(3, 0))
	flat := make([]float64, 2000)
	for i := range flat {
		flat[i] = 5 + rng.NormFloat64()
	}
	if r, err := CurveRise(flat); err != nil || math.Abs(r.PerPoint) > 3*r.SE || math.Abs(r.SE-math.Sqrt(2.0/400)) > 0.02 {
		t.Errorf("flat curve: rise %+v, %v; want 0 within 3 s.e. of about %.3f", r, err, math.Sqrt(2.0/400))
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

// TestSlowFallIsMoving: a bound that still climbs slowly under mini-batch noise, as MNIST's did
// at 3000 iterations (about 3.5 nats per image per 300 steps, a rise of 5-10 over the last fifth,
// under a per-step spread of about 29), is moving: its rise over the last fifth is beyond two
// standard errors, where the rise over the last tenth, 2*sqrt(2) times weaker against its error,
// would not be (checked here too).
func TestSlowFallIsMoving(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0))
	curve := make([]float64, 3000)
	for i := range curve {
		curve[i] = -400 - 3.5/300*float64(i) + 29*rng.NormFloat64()
	}
	r, err := CurveRise(curve)
	if err != nil || r.Flat() || math.Abs(r.PerPoint-7) > 3*r.SE {
		t.Errorf("slowly climbing curve: rise %+v, %v; want about 7, beyond 2 s.e.", r, err)
	}
	w := len(curve) / 10
	mean := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v
		}
		return s / float64(len(x))
	}
	tenth := mean(curve[len(curve)-2*w:len(curve)-w]) - mean(curve[len(curve)-w:])
	if se := 29 * math.Sqrt(2/float64(w)); math.Abs(tenth) > 2*se {
		t.Errorf("the last tenth's rise %.2f is beyond 2 s.e. (%.2f) on this seed: the test no longer shows what fifths add", tenth, 2*se)
	}
}

// TestRiseFlat: Flat is |rise| <= 2 s.e., FallingBack rise < -2 s.e.
func TestRiseFlat(t *testing.T) {
	if !(Rise{PerPoint: -0.19, SE: 0.1}).Flat() || (Rise{PerPoint: 0.21, SE: 0.1}).Flat() {
		t.Error("Flat is not |rise| <= 2 s.e.")
	}
	if (Rise{PerPoint: -0.19, SE: 0.1}).FallingBack() || !(Rise{PerPoint: -0.21, SE: 0.1}).FallingBack() ||
		(Rise{PerPoint: 0.5, SE: 0.1}).FallingBack() {
		t.Error("FallingBack is not rise < -2 s.e.")
	}
}

// TestRiseFallingBack: a curve whose -bound climbs again over its last two fifths, as MNIST's VAIS
// (`--stop-grad`) did between 6000 and 10000 iterations, is moving and falling back.
func TestRiseFallingBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 0))
	curve := make([]float64, 10000)
	for i := range curve {
		curve[i] = -535 + 9*max(0, float64(i-6000))/4000 + 29*rng.NormFloat64()
	}
	r, err := CurveRise(curve)
	if err != nil || r.Flat() || !r.FallingBack() || math.Abs(r.PerPoint+4.5) > 3*r.SE {
		t.Errorf("curve falling back: rise %+v, %v; want about -4.5, below -2 s.e.", r, err)
	}
}
