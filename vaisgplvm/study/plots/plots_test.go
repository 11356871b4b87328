package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func TestSmallestLengthscales(t *testing.T) {
	d, err := SmallestLengthscales([]float64{3, 0.5, 7, 0.2, 1})
	if err != nil || d != [2]int{3, 1} {
		t.Fatalf("got %v, %v; want [3 1]", d, err)
	}
	for _, bad := range [][]float64{{1}, {1, math.NaN()}} {
		if _, err := SmallestLengthscales(bad); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}

// TestCurvePoints: the moving average equals a direct average of the last w finite values; skipped
// and non-finite points are dropped; negative x values are kept.
func TestCurvePoints(t *testing.T) {
	y := []float64{1, 2, math.NaN(), 4, 8, 16}
	xy := curvePoints(Series{Y: y}, 2, 0)
	want := [][2]float64{{2, 1.5}, {4, 3}, {5, 6}, {6, 12}}
	if len(xy) != len(want) {
		t.Fatalf("got %d points %v, want %v", len(xy), xy, want)
	}
	for i, w := range want {
		if xy[i].X != w[0] || xy[i].Y != w[1] {
			t.Errorf("point %d = (%g, %g), want %v", i, xy[i].X, xy[i].Y, w)
		}
	}
	if xy := curvePoints(Series{X: []float64{-10, 20, 30}, Y: []float64{1, 2, 3}}, 0, 1); len(xy) != 2 || xy[0].X != 20 {
		t.Errorf("skip 1: got %v", xy)
	}
	if xy := curvePoints(Series{X: []float64{-10, -5}, Y: []float64{1, 2}}, 0, 0); len(xy) != 2 || xy[0].X != -10 {
		t.Errorf("negative x: got %v", xy)
	}
}

func TestCurvesErrors(t *testing.T) {
	cases := map[string][]Series{
		"no series":     nil,
		"ragged":        {{Name: "a", X: []float64{1}, Y: []float64{1, 2}}},
		"nothing drawn": {{Name: "a", Y: []float64{math.NaN()}}},
	}
	for name, s := range cases {
		if _, err := Curves(CurveOptions{}, s...); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := Curves(CurveOptions{LogY: true}, Series{Name: "a", Y: []float64{1, -1}}); err == nil {
		t.Error("log axis with a negative value: want an error")
	}
	if _, err := Curves(CurveOptions{LogX: true}, Series{Name: "a", X: []float64{0, 1}, Y: []float64{1, 2}}); err == nil {
		t.Error("log x axis with x = 0: want an error")
	}
	if _, err := Curves(CurveOptions{LogX: true, LogY: true}, Series{Name: "a", X: []float64{3, 30, 300}, Y: []float64{1, 0.1, 0.01}}); err != nil {
		t.Error(err)
	}
	if _, err := Curves(CurveOptions{Markers: true}, Series{Name: "a", Y: []float64{1, 2}}, Series{Name: "b", Y: []float64{2, 1}}); err != nil {
		t.Error(err)
	}
}

// TestGridImageIsUpright: pixel (row 0, last column) of a 3x2 image lands at the top right of its
// cell, hidden pixels are MissingColour, gaps are white, and the raster has the documented size.
func TestGridImageIsUpright(t *testing.T) {
	im := []float64{0, 1, 0, 0, 0, 0} // 3 rows x 2 columns, bright top-right pixel
	hidden := []float64{0, 0, 0, 0, 0, 1}
	rows := []ImageRow{{Label: "truth", Images: [][]float64{im, im}}, {Label: "masked", Images: [][]float64{im, im}, Hidden: [][]float64{hidden, hidden}}}
	g, err := GridImage(rows, GridOptions{Rows: 3, Cols: 2, Scale: 2})
	if err != nil {
		t.Fatal(err)
	}
	if b := g.Bounds(); b.Dx() != 2*3*2-2 || b.Dy() != 2*4*2-2 {
		t.Fatalf("raster %v, want 10 x 14", b)
	}
	white, black := color.RGBA{255, 255, 255, 255}, color.RGBA{0, 0, 0, 255}
	checks := []struct {
		x, y int
		want color.RGBA
	}{
		{2, 0, white}, {3, 1, white}, {0, 0, black}, {0, 5, black}, // first cell: top right bright
		{4, 0, white}, {5, 0, white}, // gap column
		{6 + 2, 0, white},         // second image, same pixel
		{2, 8 + 4, MissingColour}, // second grid row: hidden bottom-right pixel
		{0, 8 + 4, black},
	}
	for _, c := range checks {
		if got := g.RGBAAt(c.x, c.y); got != c.want {
			t.Errorf("pixel (%d, %d) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
	for name, bad := range map[string][]ImageRow{
		"no images":   {{Label: "a"}},
		"wrong size":  {{Label: "a", Images: [][]float64{{1, 2}}}},
		"row lengths": {{Label: "a", Images: [][]float64{im}}, {Label: "b", Images: [][]float64{im, im}}},
		"mask shape":  {{Label: "a", Images: [][]float64{im}, Hidden: [][]float64{{1}}}},
	} {
		if _, err := GridImage(bad, GridOptions{Rows: 3, Cols: 2}); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

func TestHistogramsCountEveryFiniteValue(t *testing.T) {
	p, err := Histograms("ESS", "ESS", 4, Sample{Name: "a", Values: []float64{1, 1, 2, 5, math.NaN()}}, Sample{Name: "b", Values: []float64{5, 5}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Histograms("x", "x", 3); err == nil {
		t.Error("no sample: want an error")
	}
	if _, err := Histograms("x", "x", 3, Sample{Values: []float64{math.Inf(1)}}); err == nil {
		t.Error("no finite value: want an error")
	}
	if _, err := PNG(p, 0, 0); err != nil {
		t.Fatal(err)
	}
}

func TestLatentsAndSave(t *testing.T) {
	mean := [][]float64{{0, 0, 1}, {1, 1, 0}, {2, 0, 3}}
	sd := [][]float64{{0.1, 0.1, 0.1}, {0.5, 0.2, 0.1}, {0.1, 0.1, 9}}
	p, err := Latents(mean, sd, []int{0, 1, 1}, LatentOptions{Dims: [2]int{0, 1}, ClassNames: []string{"A", "B"}})
	if err != nil {
		t.Fatal(err)
	}
	e := &ellipses{list: []ellipse{{x: 1, y: 1, rx: 0.5, ry: 0.2}}}
	if x0, x1, y0, y1 := e.DataRange(); x0 != 0.5 || x1 != 1.5 || y0 != 0.8 || y1 != 1.2 {
		t.Errorf("ellipse range %g %g %g %g", x0, x1, y0, y1)
	}
	path := filepath.Join(t.TempDir(), "latents.png")
	if err := Save(p, path, 0, 0); err != nil {
		t.Fatal(err)
	}
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(buf))
	if err != nil || cfg.Width != 6*96 || cfg.Height != 4*96 {
		t.Errorf("PNG %dx%d (%v), want 576x384", cfg.Width, cfg.Height, err)
	}
	if err := Save(p, filepath.Join(t.TempDir(), "x.bmp"), 0, 0); err == nil {
		t.Error("unknown extension: want an error")
	}
	for name, f := range map[string]func() error{
		"dims":   func() error { _, err := Latents(mean, nil, nil, LatentOptions{Dims: [2]int{0, 3}}); return err },
		"labels": func() error { _, err := Latents(mean, nil, []int{1}, LatentOptions{Dims: [2]int{0, 1}}); return err },
		"sd":     func() error { _, err := Latents(mean, sd[:1], nil, LatentOptions{Dims: [2]int{0, 1}}); return err },
		"ard":    func() error { _, err := InverseLengthscales([]float64{1, 0}, ""); return err },
		"path":   func() error { _, err := ChainPaths("", nil, nil, [2]int{0, 1}); return err },
	} {
		if f() == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

// TestGroupedBars draws two series over three groups and refuses mismatched or non-finite input.
func TestGroupedBars(t *testing.T) {
	p, err := GroupedBars("t", "y", []string{"a", "b", "c"}, BarSeries{"ours", []float64{1, -2, 3}}, BarSeries{"paper", []float64{0.5, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	buf, err := PNG(p, 0, 0)
	if err != nil || len(buf) < 1000 {
		t.Fatalf("PNG: %d bytes, %v", len(buf), err)
	}
	if _, err := GroupedBars("t", "y", []string{"a"}, BarSeries{"ours", []float64{1, 2}}); err == nil {
		t.Error("two values for one group: want an error")
	}
	if _, err := GroupedBars("t", "y", []string{"a"}, BarSeries{"ours", []float64{math.NaN()}}); err == nil {
		t.Error("NaN: want an error")
	}
}

// TestLegendAndTitleLayout: a legend too wide for the side goes below the axes and makes the PNG
// taller than the default (the axes keep their size); a narrow one sits beside them at the default
// size; a title wider than the figure is wrapped into lines that fit; ten series get ten colours.
func TestLegendAndTitleLayout(t *testing.T) {
	height := func(name string, n int) int {
		var ss []Series
		for j := range n {
			ss = append(ss, Series{Name: fmt.Sprintf("%s %d", name, j), Y: []float64{1, 2, float64(j)}})
		}
		p, err := Curves(CurveOptions{Title: "t"}, ss...)
		if err != nil {
			t.Fatal(err)
		}
		b, err := PNG(p, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Height
	}
	narrow, wide := height("a", 3), height("a series with a name far too long to sit beside the axes", 9)
	if wide <= narrow {
		t.Fatalf("PNG heights: narrow legend %d px, wide legend %d px; want the wide one taller (legend below)", narrow, wide)
	}
	sty := plot.New().Title.TextStyle
	w := 3 * vg.Inch
	s := wrap(sty, "a title that is much longer than three inches of text at the default title font size", w)
	lines := strings.Split(s, "\n")
	if len(lines) < 2 {
		t.Fatalf("wrap gave one line: %q", s)
	}
	for _, l := range lines {
		if sty.Rectangle(l).Size().X > w {
			t.Fatalf("line %q is wider than %v", l, w)
		}
	}
	seen := map[color.Color]bool{}
	for i := range 10 {
		seen[colour(i)] = true
	}
	if len(seen) != 10 {
		t.Fatalf("%d distinct colours among the first 10", len(seen))
	}
}

// TestECDFs: a sample's steps rise from 0 to 1 over its sorted values (the fraction <= x after
// each value), non-finite values left out; a sample without a finite value is an error.
func TestECDFs(t *testing.T) {
	got := ecdfPoints([]float64{3, 1, math.NaN(), 2})
	want := plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 1.0 / 3}, {X: 2, Y: 2.0 / 3}, {X: 3, Y: 1}}
	if len(got) != len(want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("steps %v, want %v", got, want)
		}
	}
	if _, err := ECDFs("t", "x", Sample{Name: "a", Values: []float64{1, 2}}, Sample{Name: "b", Values: []float64{5}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ECDFs("t", "x", Sample{Name: "c", Values: []float64{math.Inf(1)}}); err == nil {
		t.Fatal("a sample without a finite value gave no error")
	}
}

// TestBarScales: ratios are drawn as log2 heights from 1 (2x and 1/2x equally tall) and a ratio
// <= 0 is refused; signed values on a symmetric log axis keep their sign; the ticks are labelled
// with the values (1 for ratios, -1000 for the signed values), not the heights.
func TestBarScales(t *testing.T) {
	if Ratio.forward(2) != -Ratio.forward(0.5) || Ratio.forward(1) != 0 {
		t.Fatalf("ratio heights: 2 -> %v, 0.5 -> %v, 1 -> %v", Ratio.forward(2), Ratio.forward(0.5), Ratio.forward(1))
	}
	if h := SymLog.forward(-999); math.Abs(h+3) > 1e-12 {
		t.Fatalf("symlog height of -999: %v, want -3", h)
	}
	if _, err := GroupedBarsScaled(Ratio, "t", "y", []string{"a"}, BarSeries{"s", []float64{0}}); err == nil {
		t.Fatal("a ratio of 0 was drawn")
	}
	labels := func(s BarScale, lo, hi float64) string {
		var l []string
		for _, tk := range s.Ticks(lo, hi) {
			l = append(l, tk.Label)
		}
		return strings.Join(l, " ")
	}
	if got := labels(Ratio, -1.2, 1.5); !strings.Contains(got, " 1 ") || !strings.Contains(got, "0.5") || !strings.Contains(got, "2") {
		t.Fatalf("ratio tick labels %q, want 0.5, 1 and 2 among them", got)
	}
	if got := labels(SymLog, -4.5, 0.5); !strings.Contains(got, "-1000") || !strings.HasPrefix(got, "0 ") {
		t.Fatalf("symlog tick labels %q, want 0 and -1000 among them", got)
	}
}

// TestRefY: a reference line is the constant at its value, in black; a figure with one renders,
// and a log axis still refuses a non-positive value of a series.
func TestRefY(t *testing.T) {
	if l := refLine(0.5); l.F(-3) != 0.5 || l.F(7) != 0.5 || l.Color != color.Black {
		t.Fatalf("refLine(0.5): F(-3) %v, F(7) %v, colour %v", l.F(-3), l.F(7), l.Color)
	}
	p, err := Curves(CurveOptions{Title: "d", RefY: []float64{0}}, Series{Name: "a", Y: []float64{-1, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PNG(p, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Curves(CurveOptions{LogY: true, RefY: []float64{1}}, Series{Name: "a", Y: []float64{-1, 1}}); err == nil {
		t.Fatal("LogY with a negative value: no error")
	}
}
