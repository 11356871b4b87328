// Package plots draws the figures of a GPLVM study with gonum.org/v1/plot: -ELBO curves (paper
// Fig. 4), 2-D latent scatters with posterior uncertainty (Figs. 2, 5 right), ARD inverse
// lengthscales, image grids of ground truth / masked input / reconstruction (Figs. 3, 5),
// histograms of importance-weight diagnostics (Table 3), annealing schedules beta_k and step
// sizes eta_k, and the path of one point through the annealed Langevin chain.
//
// Every function returns a *plot.Plot (or an error naming bad input: empty or ragged data,
// mismatched lengths, no finite values); Save writes it as PNG, SVG or PDF by file extension and
// PNG returns the encoded bytes (for notebooks). The package reads plain float64 slices, so it
// works with any model, not only this module's.
package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
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
	w, h = size(w, h)
	if err := p.Save(w, h, path); err != nil {
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	return nil
}

// PNG returns p encoded as PNG at w x h (zero: the defaults), for inline display.
func PNG(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	w, h = size(w, h)
	wt, err := p.WriterTo(w, h, "png")
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: encoding PNG: %w", err)
	}
	return buf.Bytes(), nil
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

// colour returns the i-th colour of a dark, colour-blind-friendlier palette (plotutil's).
func colour(i int) color.Color { return plotutil.DarkColors[i%len(plotutil.DarkColors)] }

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

// roomForLegend raises the top of a linear y axis so that a top-right legend of n entries sits
// above the data instead of over it: the legend takes about 7.5% of the plot's height per entry, so
// the data are kept below the top fraction f = 0.075 n of the axis (at most 0.6).
func roomForLegend(p *plot.Plot, n int) {
	if _, isLog := p.Y.Scale.(plot.LogScale); isLog || n == 0 || !(p.Y.Max > p.Y.Min) {
		return
	}
	f := math.Min(0.075*float64(n), 0.6)
	p.Y.Max += (p.Y.Max - p.Y.Min) * f / (1 - f)
}
