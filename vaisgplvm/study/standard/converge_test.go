package standard_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/standard"
)

// TestConvergeReachesAStationaryPoint: L-BFGS on the MAP objective converges by its rule, at a
// point where Adam with a tiny step finds at most a hundredth of the descent it finds at the start
// (the objective has many local optima: which one L-BFGS or Adam reaches is not tested); the
// model's iterations, curve and seconds follow.
func TestConvergeReachesAStationaryPoint(t *testing.T) {
	x := randomData(rand.New(rand.NewPCG(5, 6)), 20, 4)
	// Adam at step size 1e-4 moves every parameter by about 1e-4 per step, so that its descent
	// over a few steps measures the gradient's 1-norm where it starts.
	descent := func(m *standard.Model) float64 {
		first := len(m.Curve)
		if err := m.Run(50, nil); err != nil {
			t.Fatal(err)
		}
		return m.Curve[first] - slices.Min(m.Curve[first:])
	}
	fresh := func(lr float64) *standard.Model {
		m, err := standard.New(standard.Config{Q: 2, LR: lr}, x, testutil.Backend())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	atStart := descent(fresh(1e-4))
	m := fresh(1e-4)
	res, err := m.Converge(context.Background(), converge.Options{MaxSeconds: 120})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged || res.StoppedBy != "converged" {
		t.Fatalf("not converged: %+v", res)
	}
	if m.Iter != res.Iterations || len(m.Curve) != m.Iter || m.Seconds <= 0 {
		t.Errorf("Iter %d, curve %d, seconds %g after %d L-BFGS iterations", m.Iter, len(m.Curve), m.Seconds, res.Iterations)
	}
	if !(res.NegELBO < res.Start-0.1) || res.NegELBO > slices.Min(m.Curve)+1e-12 {
		t.Errorf("objective %g from %g, curve's lowest %g", res.NegELBO, res.Start, slices.Min(m.Curve))
	}
	if atEnd := descent(m); !(atEnd < atStart/100) {
		t.Errorf("50 Adam steps of 1e-4 lower the objective by %.3g per point from the converged point, by %.3g from the start: not near a stationary point", atEnd, atStart)
	}
	t.Logf("L-BFGS: %d iterations, %.6g -> %.6g per point in %.2f s; descent at the start %.3g", res.Iterations, res.Start, res.NegELBO, res.Seconds, atStart)
}
