package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SmallestLengthscales returns the indices of the two smallest ARD lengthscales (the two most
// relevant latent dimensions, the paper's choice for its 2-D latent plots), smallest first.
// Errors: fewer than two lengthscales or a non-finite one.
func SmallestLengthscales(ls []float64) ([2]int, error) {
	if len(ls) < 2 {
		return [2]int{}, fmt.Errorf("plots: need at least 2 lengthscales, got %d", len(ls))
	}
	idx := make([]int, len(ls))
	for i, l := range ls {
		if !finite(l) {
			return [2]int{}, fmt.Errorf("plots: lengthscale %d is %g", i, l)
		}
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ls[idx[a]] < ls[idx[b]] })
	return [2]int{idx[0], idx[1]}, nil
}

// LatentOptions label a latent scatter.
type LatentOptions struct {
	Title string
	// Dims are the two latent dimensions drawn (x, y); see SmallestLengthscales.
	Dims [2]int
	// ClassNames name the labels (label i -> ClassNames[i]); "class i" when missing.
	ClassNames []string
	// MaxEllipses caps the number of uncertainty ellipses drawn (0: all points).
	MaxEllipses int
}

// Latents draws the latent means mean [N, Q] in the dimensions opt.Dims, coloured by label
// (labels [N], or nil for one colour) with a legend, and, when sd [N, Q] is given, an axis-aligned
// ellipse of one posterior standard deviation around each mean (q0's marginal sd). Errors: empty
// or ragged input, labels or sd of the wrong length, a dimension out of range.
func Latents(mean, sd [][]float64, labels []int, opt LatentOptions) (*plot.Plot, error) {
	n := len(mean)
	if n == 0 {
		return nil, fmt.Errorf("plots: latents: no points")
	}
	q := len(mean[0])
	i, j := opt.Dims[0], opt.Dims[1]
	if i < 0 || j < 0 || i >= q || j >= q || i == j {
		return nil, fmt.Errorf("plots: latents: dims %v invalid for Q = %d", opt.Dims, q)
	}
	if labels != nil && len(labels) != n {
		return nil, fmt.Errorf("plots: latents: %d labels for %d points", len(labels), n)
	}
	if sd != nil && len(sd) != n {
		return nil, fmt.Errorf("plots: latents: sd has %d rows for %d points", len(sd), n)
	}
	groups := map[int]plotter.XYs{}
	var ells []ellipse
	for r, row := range mean {
		if len(row) != q || (sd != nil && len(sd[r]) != q) {
			return nil, fmt.Errorf("plots: latents: row %d has %d values, want Q = %d", r, len(row), q)
		}
		c := 0
		if labels != nil {
			c = labels[r]
		}
		groups[c] = append(groups[c], plotter.XY{X: row[i], Y: row[j]})
		if sd != nil && (opt.MaxEllipses == 0 || len(ells) < opt.MaxEllipses) {
			ells = append(ells, ellipse{x: row[i], y: row[j], rx: sd[r][i], ry: sd[r][j], class: c})
		}
	}
	p := newPlot(opt.Title, "latent dimension "+strconv.Itoa(i+1), "latent dimension "+strconv.Itoa(j+1))
	if len(ells) > 0 {
		p.Add(&ellipses{list: ells})
	}
	classes := make([]int, 0, len(groups))
	for c := range groups {
		classes = append(classes, c)
	}
	sort.Ints(classes)
	for k, c := range classes {
		sc, err := plotter.NewScatter(groups[c])
		if err != nil {
			return nil, fmt.Errorf("plots: latents: %w", err)
		}
		sc.Color, sc.Shape, sc.Radius = colour(k), glyph(k), vg.Points(2)
		p.Add(sc)
		if labels != nil {
			name := "class " + strconv.Itoa(c)
			if c >= 0 && c < len(opt.ClassNames) {
				name = opt.ClassNames[c]
			}
			p.Legend.Add(name, sc)
		}
	}
	for k := range ells {
		ells[k].colour = withAlpha(colour(sort.SearchInts(classes, ells[k].class)), 0.07)
	}
	p.Legend.Top = true
	p.X.Scale = equalAspect{} // one latent unit is as long on both axes: distances read true
	return p, nil
}

func glyph(i int) draw.GlyphDrawer {
	switch i % 4 {
	case 1:
		return draw.TriangleGlyph{}
	case 2:
		return draw.SquareGlyph{}
	case 3:
		return draw.CrossGlyph{}
	}
	return draw.CircleGlyph{}
}

type ellipse struct {
	x, y, rx, ry float64
	class        int
	colour       color.Color
}

// ellipses is a plot.Plotter drawing axis-aligned ellipses in data coordinates.
type ellipses struct{ list []ellipse }

func (e *ellipses) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	const segments = 24
	for _, el := range e.list {
		if !finite(el.rx) || !finite(el.ry) {
			continue
		}
		var path vg.Path
		for s := 0; s <= segments; s++ {
			t := 2 * math.Pi * float64(s) / segments
			pt := vg.Point{X: trX(el.x + el.rx*math.Cos(t)), Y: trY(el.y + el.ry*math.Sin(t))}
			if s == 0 {
				path.Move(pt)
			} else {
				path.Line(pt)
			}
		}
		path.Close()
		c.SetColor(el.colour)
		c.Fill(path)
	}
}

// DataRange implements plot.DataRanger so that the ellipses fit in the axes.
func (e *ellipses) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, el := range e.list {
		if !finite(el.rx) || !finite(el.ry) {
			continue
		}
		xmin, xmax = math.Min(xmin, el.x-el.rx), math.Max(xmax, el.x+el.rx)
		ymin, ymax = math.Min(ymin, el.y-el.ry), math.Max(ymax, el.y+el.ry)
	}
	return xmin, xmax, ymin, ymax
}

// InverseLengthscales draws the ARD relevances 1/l_q of the latent dimensions as bars (a tall
// bar is a dimension the model uses). Errors: no lengthscales or a non-positive one.
func InverseLengthscales(ls []float64, title string) (*plot.Plot, error) {
	if len(ls) == 0 {
		return nil, fmt.Errorf("plots: inverse lengthscales: none given")
	}
	vals := make(plotter.Values, len(ls))
	names := make([]string, len(ls))
	for i, l := range ls {
		if !(l > 0) || math.IsInf(l, 0) {
			return nil, fmt.Errorf("plots: inverse lengthscales: lengthscale %d is %g, want > 0", i, l)
		}
		vals[i], names[i] = 1/l, strconv.Itoa(i+1)
	}
	p := newPlot(title, "latent dimension", "inverse lengthscale 1/l")
	bars, err := plotter.NewBarChart(vals, vg.Points(12))
	if err != nil {
		return nil, fmt.Errorf("plots: inverse lengthscales: %w", err)
	}
	bars.Color, bars.LineStyle.Width = colour(0), 0
	p.Add(bars)
	p.NominalX(names...)
	p.Y.Min, p.Y.Max = 0, 1.1*floats.Max(vals) // headroom: the tallest bar never meets the title
	p.Y.Tick.Marker = denseTicks{n: 5}
	return p, nil
}
