package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// BarSeries is one named set of bars, one value per group.
type BarSeries struct {
	Name   string
	Values []float64
}

// BarScale says how GroupedBarsScaled draws values.
type BarScale int

const (
	// Linear draws bars from 0 on a linear axis.
	Linear BarScale = iota
	// Ratio draws ratios (> 0) as bars from 1 on a log axis, so that 2x and 1/2x are equally tall.
	Ratio
	// SymLog draws signed values that span decades as bars from 0 on sign(v) log10(1 + |v|).
	SymLog
)

// GroupedBars draws, for each group (e.g. a dataset), one bar per series side by side (e.g. ours
// and the paper's), with a legend and a line at zero: GroupedBarsScaled with Linear.
func GroupedBars(title, ylabel string, groups []string, series ...BarSeries) (*plot.Plot, error) {
	return GroupedBarsScaled(Linear, title, ylabel, groups, series...)
}

// GroupedBarsScaled draws, for each group, one bar per series side by side on the given scale,
// with a legend, a reference line (0, or 1 for ratios) and tick labels in the values' own units.
// Errors: no groups or series, a series whose length differs from the groups', a non-finite value,
// or a ratio <= 0.
func GroupedBarsScaled(scale BarScale, title, ylabel string, groups []string, series ...BarSeries) (*plot.Plot, error) {
	if len(groups) == 0 || len(series) == 0 {
		return nil, fmt.Errorf("plots: grouped bars: want at least one group and one series")
	}
	p := newPlot(title, "", ylabel)
	lo, hi := 0.0, 0.0
	width := vg.Points(40 / float64(len(series)))
	for i, s := range series {
		if len(s.Values) != len(groups) {
			return nil, fmt.Errorf("plots: grouped bars: series %q has %d values for %d groups", s.Name, len(s.Values), len(groups))
		}
		vals := make(plotter.Values, len(s.Values))
		for j, v := range s.Values {
			if !finite(v) || (scale == Ratio && v <= 0) {
				return nil, fmt.Errorf("plots: grouped bars: series %q, group %s: value %g", s.Name, groups[j], v)
			}
			vals[j] = scale.forward(v)
			lo, hi = math.Min(lo, vals[j]), math.Max(hi, vals[j])
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("plots: grouped bars: %w", err)
		}
		bars.Color, bars.LineStyle.Width = colour(i), 0
		bars.Offset = width * vg.Length(float64(i)-float64(len(series)-1)/2)
		p.Add(bars)
		p.Legend.Add(s.Name, bars)
	}
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Color, zero.Width = color.Black, vg.Points(1)
	p.Add(zero)
	p.Legend.Top = true
	p.NominalX(groups...)
	pad := 0.05 * (hi - lo)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	if scale != Linear {
		p.Y.Tick.Marker = scale
	}
	return p, nil
}

// forward maps a value to its bar height.
func (s BarScale) forward(v float64) float64 {
	switch s {
	case Ratio:
		return math.Log2(v)
	case SymLog:
		return math.Copysign(math.Log10(1+math.Abs(v)), v)
	}
	return v
}

// Ticks implements plot.Ticker for Ratio and SymLog: ticks at powers of two (ratios) or at 0 and
// ± powers of ten (signed values), labelled with the values, not the bar heights.
func (s BarScale) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	switch s {
	case Ratio:
		for e := -6; e <= 6; e++ {
			for _, m := range []float64{1, 1.5, 2, 3, 5, 7} {
				v := m * math.Pow(10, float64(e))
				t := s.forward(v)
				if t < lo || t > hi {
					continue
				}
				if len(ts) > 0 && t-ts[len(ts)-1].Value < (hi-lo)/12 {
					continue // too close to the last label
				}
				ts = append(ts, plot.Tick{Value: t, Label: strconv.FormatFloat(v, 'g', 3, 64)})
			}
		}
	case SymLog:
		ts = append(ts, plot.Tick{Value: 0, Label: "0"})
		for e := 0; e < 12; e++ {
			v := math.Pow(10, float64(e))
			for _, sv := range []float64{v, -v} {
				if t := s.forward(sv); t >= lo && t <= hi {
					ts = append(ts, plot.Tick{Value: t, Label: strconv.FormatFloat(sv, 'g', -1, 64)})
				}
			}
		}
	}
	return ts
}
