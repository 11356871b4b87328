package plots

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// BarSeries is one named set of bars, one value per group.
type BarSeries struct {
	Name   string
	Values []float64
}

// GroupedBars draws, for each group (e.g. a dataset), one bar per series side by side (e.g. ours
// and the paper's), with a legend and a line at zero. Errors: no groups or series, a series whose
// length differs from the groups', or a non-finite value.
func GroupedBars(title, ylabel string, groups []string, series ...BarSeries) (*plot.Plot, error) {
	if len(groups) == 0 || len(series) == 0 {
		return nil, fmt.Errorf("plots: grouped bars: want at least one group and one series")
	}
	p := newPlot(title, "", ylabel)
	width := vg.Points(40 / float64(len(series)))
	for i, s := range series {
		if len(s.Values) != len(groups) {
			return nil, fmt.Errorf("plots: grouped bars: series %q has %d values for %d groups", s.Name, len(s.Values), len(groups))
		}
		for j, v := range s.Values {
			if !finite(v) {
				return nil, fmt.Errorf("plots: grouped bars: series %q, group %s: value %g", s.Name, groups[j], v)
			}
		}
		bars, err := plotter.NewBarChart(plotter.Values(s.Values), width)
		if err != nil {
			return nil, fmt.Errorf("plots: grouped bars: %w", err)
		}
		bars.Color, bars.LineStyle.Width = colour(i), 0
		bars.Offset = width * vg.Length(float64(i)-float64(len(series)-1)/2)
		p.Add(bars)
		p.Legend.Add(s.Name, bars)
	}
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Color = colour(7)
	p.Add(zero)
	p.Legend.Top = true
	p.NominalX(groups...)
	return p, nil
}
