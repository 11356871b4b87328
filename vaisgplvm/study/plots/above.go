package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// aboveBest is a y scale for curves that fall by decades early and then settle (training -ELBO):
// close to linear within Width of the lowest value Best, logarithmic in the distance above it beyond that,
// so that both the first iterations and the differences between curves at the end are legible.
// It normalises t(y) = log1p((y - Best) / Width), which is close to linear near Best.
type aboveBest struct{ Best, Width float64 }

func (s aboveBest) t(y float64) float64 { return math.Log1p(max(0, y-s.Best) / s.Width) }

// Normalize implements plot.Normalizer.
func (s aboveBest) Normalize(lo, hi, y float64) float64 {
	a, b := s.t(lo), s.t(hi)
	if b == a {
		return 0
	}
	return (s.t(y) - a) / (b - a)
}

// Ticks implements plot.Ticker: six labelled ticks evenly spaced on the scale, each at a value
// rounded to the leading digit of its distance above Best (so -380, -300, 600, 10000, not
// -381.7), with the lowest value itself labelled.
func (s aboveBest) Ticks(lo, hi float64) []plot.Tick {
	const n = 6
	a, b := s.t(lo), s.t(hi)
	var ts []plot.Tick
	for i := range n + 1 {
		y := s.Best + s.Width*math.Expm1(a+(b-a)*float64(i)/n)
		if d := y - s.Best; i > 0 && d > 0 {
			step := math.Pow(10, math.Floor(math.Log10(d)))
			y = math.Round(y/step) * step
		}
		if y < lo || y > hi || (len(ts) > 0 && y <= ts[len(ts)-1].Value) {
			continue
		}
		prec := max(0, -int(math.Floor(math.Log10(math.Abs(y-s.Best)+s.Width))))
		ts = append(ts, plot.Tick{Value: y, Label: strconv.FormatFloat(y+0, 'f', prec, 64)})
	}
	return ts
}

// settleScale returns the aboveBest scale for the plotted curves xys when their values span more
// than ten times their spread over the last half of the points (the early iterations would
// flatten the rest on a linear axis), with a linear band a tenth of that spread wide, and false when
// a linear axis shows them well.
func settleScale(xys []plotter.XYs) (aboveBest, bool) {
	lo, hi, tailLo, tailHi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, xy := range xys {
		for i, pt := range xy {
			lo, hi = min(lo, pt.Y), max(hi, pt.Y)
			if i >= len(xy)/2 {
				tailLo, tailHi = min(tailLo, pt.Y), max(tailHi, pt.Y)
			}
		}
	}
	spread := tailHi - tailLo
	if !(spread > 0) || !finite(hi-lo) || hi-lo <= 10*spread {
		return aboveBest{}, false
	}
	return aboveBest{Best: lo, Width: spread / 10}, true
}
