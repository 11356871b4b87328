package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func plotterGrid() plot.Plotter { return plotter.NewGrid() }

// Series is one named line: Y [n] against X [n], or against 1..n when X is nil.
type Series struct {
	Name string
	X, Y []float64
}

// CurveOptions label and shape a line figure.
type CurveOptions struct {
	Title, XLabel, YLabel string
	// Smooth > 1 plots the moving average over that many consecutive points (mini-batch -ELBO
	// estimates are noisy); the first Smooth-1 points are dropped.
	Smooth int
	// SkipFirst drops the first SkipFirst points of every series (the first iterations of a
	// -ELBO curve dwarf the rest).
	SkipFirst int
	// Markers draws a glyph at every point (for short series such as beta_k).
	Markers bool
	// LogY uses a logarithmic y axis; every plotted value must then be > 0.
	LogY bool
	// LogX uses a logarithmic x axis (costs, sample sizes); every x must then be > 0.
	LogX bool
	// Scatter draws every point as a glyph and no line (paired values, such as each point's ESS
	// against its gap to the evidence).
	Scatter bool
	// SettleY draws the y axis linear near the lowest value and logarithmic in the distance above
	// it, when the values span more than ten times their spread over the last half of the
	// points (a training curve's first iterations); a linear axis otherwise. Not with LogY.
	SettleY bool
	// RefY draws a thin black horizontal line at each of its values: 0 under differences, 1 under
	// ratios, a known log Z under estimates of it.
	RefY []float64
}

// Curves draws several series on one axis with a legend: the -ELBO curves of runs or methods
// (paper Fig. 4), an annealing schedule beta_k against k, step sizes eta_k. Non-finite points are
// skipped. Errors: no series, X and Y of different lengths, a series with no finite point left,
// or a non-positive value with LogY (a non-positive x with LogX).
func Curves(opt CurveOptions, series ...Series) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("plots: curves: no series")
	}
	p := newPlot(opt.Title, opt.XLabel, opt.YLabel)
	if opt.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if opt.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	xys := make([]plotter.XYs, len(series))
	for i, s := range series {
		if s.X != nil && len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("plots: curves: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		xys[i] = curvePoints(s, opt.Smooth, opt.SkipFirst)
		if len(xys[i]) == 0 {
			return nil, fmt.Errorf("plots: curves: series %q has no finite point to draw", s.Name)
		}
	}
	settle, settled := aboveBest{}, false
	if opt.SettleY && !opt.LogY {
		if settle, settled = settleScale(xys); settled {
			p.Y.Scale, p.Y.Tick.Marker = settle, settle
			p.Y.Label.Text += " (log above the lowest)"
		}
	}
	for i, s := range series {
		xy := xys[i]
		for _, pt := range xy {
			if opt.LogY && pt.Y <= 0 {
				return nil, fmt.Errorf("plots: curves: series %q has value %g at x = %g; a log axis needs > 0", s.Name, pt.Y, pt.X)
			}
			if opt.LogX && pt.X <= 0 {
				return nil, fmt.Errorf("plots: curves: series %q has x = %g; a log x axis needs > 0", s.Name, pt.X)
			}
		}
		if opt.Scatter {
			sc, _ := plotter.NewScatter(xy)
			sc.Color, sc.Shape = colour(i), glyph(i)
			p.Add(sc)
			p.Legend.Add(s.Name, sc)
			continue
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("plots: curves: %w", err)
		}
		line.Color, line.Width = colour(i), vg.Points(1.2)
		line.Dashes = dashes(i)
		p.Add(line)
		if opt.Markers {
			sc, _ := plotter.NewScatter(xy)
			sc.Color, sc.Shape = colour(i), draw.CircleGlyph{}
			p.Add(sc)
			p.Legend.Add(s.Name, line, sc)
		} else {
			p.Legend.Add(s.Name, line)
		}
	}
	for _, y := range opt.RefY {
		p.Add(refLine(y))
	}
	if wholeX(series) && !opt.LogX {
		p.X.Tick.Marker = integerTicks{}
	}
	if !opt.LogY && !settled {
		p.Y.Tick.Marker = denseTicks{n: 7}
	}
	p.Legend.Top = true
	return p, nil
}

// wholeX reports whether every series' x values are whole numbers (counts: iterations, K);
// a series without X is drawn at 1, 2, ....
func wholeX(series []Series) bool {
	for _, s := range series {
		for _, x := range s.X {
			if x != math.Trunc(x) {
				return false
			}
		}
	}
	return true
}

// integerTicks is plot.DefaultTicks for an axis of counts: labels only at whole numbers, written
// without decimals (25, not 25.00).
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		switch {
		case ts[i].Label == "":
		case ts[i].Value != math.Trunc(ts[i].Value):
			ts[i].Label = ""
		default:
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// dashes distinguishes series without relying on colour alone.
func dashes(i int) []vg.Length {
	switch i % 4 {
	case 1:
		return []vg.Length{vg.Points(6), vg.Points(3)}
	case 2:
		return []vg.Length{vg.Points(2), vg.Points(2)}
	case 3:
		return []vg.Length{vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}
	}
	return nil
}

// curvePoints drops the first skip points, then applies the moving average (over the finite values
// only).
func curvePoints(s Series, smooth, skip int) plotter.XYs {
	var xy plotter.XYs
	var window []float64
	for i, y := range s.Y {
		if i < skip {
			continue
		}
		x := float64(i + 1)
		if s.X != nil {
			x = s.X[i]
		}
		if !finite(x) || !finite(y) {
			continue
		}
		if smooth > 1 {
			window = append(window, y)
			if len(window) > smooth {
				window = window[1:]
			}
			if len(window) < smooth {
				continue
			}
			y = 0
			for _, v := range window {
				y += v / float64(smooth)
			}
		}
		xy = append(xy, plotter.XY{X: x, Y: y})
	}
	return xy
}

// refLine is a thin black horizontal line at y.
func refLine(y float64) *plotter.Function {
	ref := plotter.NewFunction(func(float64) float64 { return y })
	ref.Color, ref.Width = color.Black, vg.Points(0.8)
	return ref
}
