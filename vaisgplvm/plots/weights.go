package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// Sample is a named set of values for a histogram (e.g. the ESS of every point under IWVI).
type Sample struct {
	Name   string
	Values []float64
}

// Histograms overlays the histograms of several samples on shared bins (bins equal-width bins
// over the range of all finite values), translucent, with a legend: the per-point ESS of IWVI
// and VAIS (Table 3), or the normalised weights of one point. Errors: no sample, bins < 1, no
// finite value.
func Histograms(title, xlabel string, bins int, samples ...Sample) (*plot.Plot, error) {
	if len(samples) == 0 || bins < 1 {
		return nil, fmt.Errorf("plots: histograms: need a sample and bins >= 1 (got %d samples, %d bins)", len(samples), bins)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range samples {
		for _, v := range s.Values {
			if finite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return nil, fmt.Errorf("plots: histograms: no finite value")
	}
	if hi == lo {
		lo, hi = lo-0.5, hi+0.5
	}
	width := (hi - lo) / float64(bins)
	p := newPlot(title, xlabel, "count")
	for i, s := range samples {
		h := &plotter.Histogram{Width: width, FillColor: withAlpha(colour(i), 0.45),
			LineStyle: draw.LineStyle{Color: colour(i), Width: 1}}
		h.Bins = make([]plotter.HistogramBin, bins)
		for b := range h.Bins {
			h.Bins[b].Min, h.Bins[b].Max = lo+float64(b)*width, lo+float64(b+1)*width
		}
		for _, v := range s.Values {
			if finite(v) {
				b := min(int((v-lo)/width), bins-1)
				h.Bins[b].Weight++
			}
		}
		p.Add(h)
		p.Legend.Add(s.Name, h)
	}
	p.Legend.Top = true
	return p, nil
}
