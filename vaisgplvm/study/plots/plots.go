// Package plots draws the figures of a GPLVM study with gonum.org/v1/plot: -ELBO curves (paper
// Fig. 4), 2-D latent scatters with posterior uncertainty (Figs. 2, 5 right), ARD inverse
// lengthscales, image grids of ground truth / masked input / reconstruction (Figs. 3, 5),
// histograms of importance-weight diagnostics (Table 3), annealing schedules beta_k and step
// sizes eta_k, and the path of one point through the annealed Langevin chain.
//
// Every function returns a *plot.Plot (or an error naming bad input: empty or ragged data,
// mismatched lengths, no finite values); Save writes it as PNG, SVG or PDF by file extension and
// PNG returns the encoded bytes (for notebooks). Both draw a plot's legend beside its axes, so that
// the axes fit the data and no legend covers it. The package reads plain float64 slices, so it
// works with any model, not only this module's.
package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Default figure size used by Save and PNG when the width or height is 0.
const (
	DefaultWidth  = 6 * vg.Inch
	DefaultHeight = 4 * vg.Inch
)

// Save writes p to path; the extension picks the format (.png, .svg, .pdf). A zero w or h uses
// DefaultWidth or DefaultHeight.
func Save(p *plot.Plot, path string, w, h vg.Length) error {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	switch ext {
	case "png", "svg", "pdf":
	default:
		return fmt.Errorf("plots: %s: unknown figure format %q (want .png, .svg or .pdf)", path, ext)
	}
	wt, err := render(p, w, h, ext)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err == nil {
		_, err = wt.WriteTo(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	return nil
}

// PNG returns p encoded as PNG at w x h (zero: the defaults), for inline display.
func PNG(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	wt, err := render(p, w, h, "png")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: encoding PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// render draws p at w x h (zero: the defaults) in format (png, svg, pdf). A legend is drawn to the
// right of the axes, never over the data: the axes keep the rest of the width. A legend that would
// take more than 40% of the width goes below the axes instead, the figure made taller by its
// height, so that the axes keep w x h.
func render(p *plot.Plot, w, h vg.Length, format string) (vg.CanvasWriterTo, error) {
	w, h = size(w, h)
	probe, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	leg := p.Legend
	r := leg.Rectangle(draw.New(probe))
	if r.Max.X <= r.Min.X { // no legend
		p.Title.Text = wrap(p.Title.TextStyle, p.Title.Text, w-vg.Points(12))
		fitAspect(p, draw.New(probe))
		p.Draw(draw.New(probe))
		return probe, nil
	}
	lw := r.Max.X - r.Min.X + vg.Points(24) // the side legend's 6 pt offset, and room for the text's measure
	below := lw > 0.4*w
	if below {
		p.Title.Text = wrap(p.Title.TextStyle, p.Title.Text, w-vg.Points(12))
	} else {
		p.Title.Text = wrap(p.Title.TextStyle, p.Title.Text, w-lw-vg.Points(12))
	}
	lh := r.Max.Y - r.Min.Y + vg.Points(12)
	c := probe
	if below {
		if c, err = draw.NewFormattedCanvas(w, h+lh, format); err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
	}
	dc := draw.New(c)
	p.Legend = plot.NewLegend() // none inside the axes while they are drawn
	p.Legend.TextStyle = leg.TextStyle
	axes := draw.Crop(dc, 0, -lw, 0, 0)
	if below {
		axes = draw.Crop(dc, 0, 0, lh, 0)
	}
	fitAspect(p, axes)
	p.Draw(axes)
	p.Legend = leg
	side := leg
	side.Left, side.Top, side.XOffs = true, true, vg.Points(6)
	if below {
		side.YOffs = -vg.Points(6)
		side.Draw(draw.Crop(dc, 0, 0, 0, -h))
		return c, nil
	}
	side.YOffs = -p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y - p.Title.Padding
	side.Draw(draw.Crop(dc, w-lw, 0, 0, 0))
	return c, nil
}

// wrap breaks text at spaces into lines no wider than w in style sty (a title wider than its
// figure would be cut at both edges).
func wrap(sty text.Style, s string, w vg.Length) string {
	if s == "" || sty.Rectangle(s).Size().X <= w {
		return s
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		try := strings.TrimSpace(line + " " + word)
		if line != "" && sty.Rectangle(try).Size().X > w {
			lines = append(lines, line)
			try = word
		}
		line = try
	}
	return strings.Join(append(lines, line), "\n")
}

func size(w, h vg.Length) (vg.Length, vg.Length) {
	if w == 0 {
		w = DefaultWidth
	}
	if h == 0 {
		h = DefaultHeight
	}
	return w, h
}

// palette holds ten distinct colours (the "tab10" set of matplotlib and Tableau), so that up to ten
// series never share one; with dashes (four patterns) twenty lines stay distinct.
var palette = []color.Color{
	color.NRGBA{0x1f, 0x77, 0xb4, 0xff}, color.NRGBA{0xff, 0x7f, 0x0e, 0xff}, color.NRGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.NRGBA{0xd6, 0x27, 0x28, 0xff}, color.NRGBA{0x94, 0x67, 0xbd, 0xff}, color.NRGBA{0x8c, 0x56, 0x4b, 0xff},
	color.NRGBA{0xe3, 0x77, 0xc2, 0xff}, color.NRGBA{0x7f, 0x7f, 0x7f, 0xff}, color.NRGBA{0xbc, 0xbd, 0x22, 0xff},
	color.NRGBA{0x17, 0xbe, 0xcf, 0xff},
}

// colour returns the i-th colour of palette.
func colour(i int) color.Color { return palette[i%len(palette)] }

// withAlpha returns c with opacity a in [0, 1].
func withAlpha(c color.Color, a float64) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: uint8(255 * a)}
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xlabel, ylabel
	p.Add(plotterGrid())
	return p
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// equalAspect is the x scale of a plot whose axes render at the same length per data unit on both
// (Latents): it normalises as plot.LinearScale, and render widens the shorter axis's range to fit.
type equalAspect struct{ plot.LinearScale }

// fitAspect widens the x or y range of a plot with an equalAspect x scale, about its centre, so
// that one data unit has the same length on both axes of c's data area.
func fitAspect(p *plot.Plot, c draw.Canvas) {
	if _, ok := p.X.Scale.(equalAspect); !ok {
		return
	}
	for range 2 { // the tick labels' width depends on the ranges: settle in two passes
		da := p.DataCanvas(c)
		w, h := float64(da.Max.X-da.Min.X), float64(da.Max.Y-da.Min.Y)
		xs, ys := (p.X.Max-p.X.Min)/w, (p.Y.Max-p.Y.Min)/h
		if !(w > 0 && h > 0 && xs > 0 && ys > 0) {
			return
		}
		if xs > ys {
			mid, half := (p.Y.Min+p.Y.Max)/2, xs*h/2
			p.Y.Min, p.Y.Max = mid-half, mid+half
		} else {
			mid, half := (p.X.Min+p.X.Max)/2, ys*w/2
			p.X.Min, p.X.Max = mid-half, mid+half
		}
	}
}

// denseTicks labels about n round values of an axis (plot.DefaultTicks labels 3 or 4), with an
// unlabelled tick between each two, written with the decimals the step needs.
type denseTicks struct{ n int }

func (d denseTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := niceStep((hi - lo) / float64(d.n))
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if r := step * math.Pow(10, float64(prec)); math.Abs(r-math.Round(r)) > 1e-6 {
		prec++ // 2.5 x 10^k
	}
	var ts []plot.Tick
	for k := math.Ceil(lo / (step / 2)); k*step/2 <= hi+1e-9*step; k++ {
		v := k * step / 2
		t := plot.Tick{Value: v}
		if math.Mod(k, 2) == 0 {
			t.Label = strconv.FormatFloat(v+0, 'f', prec, 64) // +0: no "-0"
		}
		ts = append(ts, t)
	}
	return ts
}

// niceStep returns the smallest of 1, 2, 2.5 and 5 times a power of ten at least x > 0.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}
