package plots

import (
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestSettleScale: a training curve from 45,000 down to about -700 (spread of its last half: 40)
// gets the scale, which maps its range onto [0, 1] monotonically, keeps the end of the curve legible
// (the last half's spread takes at least a tenth of the axis, against 0.1% on a linear axis) and
// labels increasing values inside the range; a curve without such a fall keeps a linear axis.
func TestSettleScale(t *testing.T) {
	var xy plotter.XYs
	for i := range 300 {
		y := -740 + 45000*math.Exp(-float64(i)/10) + 40*math.Exp(-float64(i)/300)
		xy = append(xy, plotter.XY{X: float64(i), Y: y})
	}
	s, ok := settleScale([]plotter.XYs{xy})
	if !ok {
		t.Fatal("a curve falling by 45,000 to a spread of 40 was not given the settling scale")
	}
	lo, hi := xy[len(xy)-1].Y, xy[0].Y
	if s.Best != lo {
		t.Fatalf("Best %v, want the lowest value %v", s.Best, lo)
	}
	prev := -1.0
	for _, pt := range xy {
		f := s.Normalize(lo, hi, pt.Y)
		if f < 0 || f > 1 {
			t.Fatalf("Normalize(%v) = %v outside [0, 1]", pt.Y, f)
		}
		_ = prev
	}
	for _, y := range []float64{lo, lo + 1, lo + 10, lo + 100, 0, 1000, hi} {
		f := s.Normalize(lo, hi, y)
		if f < prev {
			t.Fatalf("Normalize not increasing at %v: %v after %v", y, f, prev)
		}
		prev = f
	}
	mid := xy[len(xy)/2].Y
	if share := s.Normalize(lo, hi, mid); share < 0.1 {
		t.Fatalf("the last half takes %.3f of the axis, want >= 0.1 (linear: %.4f)", share, (mid-lo)/(hi-lo))
	}
	ticks := s.Ticks(lo, hi)
	last, labels := math.Inf(-1), 0
	for _, tk := range ticks {
		if tk.Value < lo-1e-9 || tk.Value > hi+1e-9 || tk.Value < last {
			t.Fatalf("tick %v out of range [%v, %v] or out of order after %v", tk.Value, lo, hi, last)
		}
		last = tk.Value
		if tk.Label != "" {
			labels++
		}
	}
	if labels < 4 {
		t.Fatalf("%d labelled ticks (%v), want at least 4", labels, ticks)
	}
	var flat plotter.XYs
	for i := range 100 {
		flat = append(flat, plotter.XY{X: float64(i), Y: 10 - 0.01*float64(i)})
	}
	if _, ok := settleScale([]plotter.XYs{flat}); ok {
		t.Fatal("a steady linear curve was given the settling scale")
	}
}
