package plots

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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

// ECDFs draws the empirical distribution function of each sample, F(x) = the fraction of its finite
// values <= x, as steps on one axis with a legend: distributions that overlap stay readable, where
// overlaid histograms blend (the per-point ESS of IWVI and VAIS, Table 3). Errors: no sample, or a
// sample with no finite value.
func ECDFs(title, xlabel string, samples ...Sample) (*plot.Plot, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("plots: ECDFs: no sample")
	}
	p := newPlot(title, xlabel, "fraction of values <= x")
	for i, s := range samples {
		xy := ecdfPoints(s.Values)
		if xy == nil {
			return nil, fmt.Errorf("plots: ECDFs: sample %q has no finite value", s.Name)
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("plots: ECDFs: %w", err)
		}
		line.StepStyle = plotter.PostStep
		line.Color, line.Width, line.Dashes = colour(i), vg.Points(1.5), dashes(i)
		p.Add(line)
		p.Legend.Add(s.Name, line)
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = denseTicks{n: 5}
	return p, nil
}

// ecdfPoints returns the corners of the ECDF of the finite values in v, drawn as post-steps: (the
// smallest, 0), then each sorted value with the fraction of values <= it; nil for none.
func ecdfPoints(v []float64) plotter.XYs {
	var f []float64
	for _, x := range v {
		if finite(x) {
			f = append(f, x)
		}
	}
	if len(f) == 0 {
		return nil
	}
	sort.Float64s(f)
	xy := plotter.XYs{{X: f[0], Y: 0}}
	for j, x := range f {
		xy = append(xy, plotter.XY{X: x, Y: float64(j+1) / float64(len(f))})
	}
	return xy
}
