package plots

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestGridSizeKeepsPixelsSquare: the size GridSize gives an image grid has the raster's aspect
// ratio in the area left for it (Frey's 28 x 20 images, two rows of three).
func TestGridSizeKeepsPixelsSquare(t *testing.T) {
	img := make([]float64, 28*20)
	rows := []ImageRow{{Label: "a", Images: [][]float64{img, img, img}}, {Label: "b", Images: [][]float64{img, img, img}}}
	opt := GridOptions{Rows: 28, Cols: 20, Lo: 0, Hi: 1}
	w, h, err := GridSize(rows, opt, 6*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	raster, _ := GridImage(rows, opt)
	b := raster.Bounds()
	got, want := float64((h-0.6*vg.Inch)/(w-1.2*vg.Inch)), float64(b.Dy())/float64(b.Dx())
	if w != 6*vg.Inch || math.Abs(got-want) > 1e-9 {
		t.Errorf("size %v x %v: aspect %g, raster's %g", w, h, got, want)
	}
}

// TestIntegerTicks: an axis of counts is labelled 0, 25, 50 (not 0.00, 25.00), with no label at a
// fractional tick; curves with fractional x keep the default ticks.
func TestIntegerTicks(t *testing.T) {
	for _, tk := range (integerTicks{}).Ticks(0, 50) {
		if tk.Label != "" && (strings.Contains(tk.Label, ".") || tk.Value != math.Trunc(tk.Value)) {
			t.Errorf("tick %g labelled %q", tk.Value, tk.Label)
		}
	}
	p, err := Curves(CurveOptions{}, Series{Name: "a", X: []float64{0, 25, 50}, Y: []float64{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.X.Tick.Marker.(integerTicks); !ok {
		t.Errorf("whole-number x: tick marker %T, want integerTicks", p.X.Tick.Marker)
	}
	p, _ = Curves(CurveOptions{}, Series{Name: "a", X: []float64{0, 0.5}, Y: []float64{1, 2}})
	if _, ok := p.X.Tick.Marker.(integerTicks); ok {
		t.Errorf("fractional x: integer ticks")
	}
}

// TestLegendBesideTheAxes: a curve plot's y axis ends at its data (no room added for a legend),
// and its PNG has the legend in a strip to the right of the axes: a falling curve reaches the
// lower right corner of the image without a legend, but with one its coloured pixels stay out of
// the strip (only the legend's thumbnails, at the top, are there); a legend too wide for the strip
// is drawn inside the axes instead, and the figure still renders.
func TestLegendBesideTheAxes(t *testing.T) {
	y := []float64{1, 0.5, 0}
	p, err := Curves(CurveOptions{Title: "t"}, Series{Name: "first series", Y: y}, Series{Name: "second", Y: []float64{0.3, 0.4, 0.6}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max != 1 || p.Y.Min != 0 {
		t.Errorf("y axis [%g, %g], want the data's [0, 1]", p.Y.Min, p.Y.Max)
	}
	if n := coloured(t, p, 85, 100, 40, 100); n != 0 {
		t.Errorf("%d coloured pixels in the lower right of a plot with a legend beside it: want none", n)
	}
	legend := p.Legend
	p.Legend = plot.NewLegend()
	if n := coloured(t, p, 85, 100, 40, 100); n < 20 {
		t.Errorf("%d coloured pixels in the lower right of a plot without a legend: want its falling curve there", n)
	}
	p.Legend = legend
	wide, err := Curves(CurveOptions{Title: "t"}, Series{Name: strings.Repeat("a very long series name ", 6), Y: y})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PNG(wide, 0, 0); err != nil {
		t.Errorf("a plot with a legend wider than its strip: %v", err)
	}
}

// TestScatterHasNoLine: two far-apart points drawn with CurveOptions.Scatter leave the middle of
// the image (where the line between them would pass) without coloured pixels; drawn as a curve,
// the line crosses it.
func TestScatterHasNoLine(t *testing.T) {
	middle := func(scatter bool) int {
		p, err := Curves(CurveOptions{Scatter: scatter}, Series{Name: "s", X: []float64{0, 1}, Y: []float64{0, 1}})
		if err != nil {
			t.Fatal(err)
		}
		p.Legend = plot.NewLegend()
		return coloured(t, p, 40, 60, 40, 60)
	}
	if n := middle(true); n != 0 {
		t.Errorf("scatter: %d coloured pixels in the middle, want none", n)
	}
	if n := middle(false); n < 10 {
		t.Errorf("curve: %d coloured pixels in the middle, want its line", n)
	}
}

// coloured counts the strongly coloured pixels of p's PNG between x0% and x1% of its width and
// y0% and y1% of its height (from the top).
func coloured(t *testing.T, p *plot.Plot, x0, x1, y0, y1 int) int {
	t.Helper()
	buf, err := PNG(p, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	b, n := img.Bounds(), 0
	for x := b.Max.X * x0 / 100; x < b.Max.X*x1/100; x++ {
		for y := b.Max.Y * y0 / 100; y < b.Max.Y*y1/100; y++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); max(r, g, bl)-min(r, g, bl) > 0x4000 {
				n++
			}
		}
	}
	return n
}

// TestDenseTicks: about n labelled ticks at round values (1, 2, 2.5 or 5 times a power of ten)
// within the range, an unlabelled tick between each two, labels with the decimals the step needs.
func TestDenseTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		labels []string
	}{
		{-725, -180, []string{"-700", "-600", "-500", "-400", "-300", "-200"}},
		{0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{12.3, 121, []string{"20", "40", "60", "80", "100", "120"}},
		{0, 0.33, []string{"0.00", "0.05", "0.10", "0.15", "0.20", "0.25", "0.30"}},
	} {
		var got []string
		ticks := denseTicks{n: 7}.Ticks(c.lo, c.hi)
		for _, tk := range ticks {
			if tk.Value < c.lo-1e-9 || tk.Value > c.hi+1e-9 {
				t.Errorf("[%g, %g]: tick %g outside the range", c.lo, c.hi, tk.Value)
			}
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.labels, " ") || len(ticks) < 2*len(got)-1 {
			t.Errorf("[%g, %g]: labels %v (%d ticks), want %v with a tick between each two", c.lo, c.hi, got, len(ticks), c.labels)
		}
	}
}

// TestLatentsEqualAspect: a latent scatter of points spread 10 times wider in x than in y renders
// with one data unit as long on both axes (the y range widened to the x range's scale), and the
// ARD bars leave headroom under the title.
func TestLatentsEqualAspect(t *testing.T) {
	mean := [][]float64{{-10, -1}, {10, 1}, {0, 0}}
	p, err := Latents(mean, nil, nil, LatentOptions{Title: "t", Dims: [2]int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PNG(p, 0, 0); err != nil {
		t.Fatal(err)
	}
	c := draw.New(vgimg.New(DefaultWidth, DefaultHeight))
	da := p.DataCanvas(c)
	xs := (p.X.Max - p.X.Min) / float64(da.Max.X-da.Min.X)
	ys := (p.Y.Max - p.Y.Min) / float64(da.Max.Y-da.Min.Y)
	if math.Abs(xs/ys-1) > 0.02 || p.Y.Max-p.Y.Min < 10 {
		t.Errorf("x %g and y %g data units per point (y range [%g, %g]); want equal", xs, ys, p.Y.Min, p.Y.Max)
	}
	bars, err := InverseLengthscales([]float64{1, 2, 4}, "ard")
	if err != nil {
		t.Fatal(err)
	}
	if bars.Y.Min != 0 || !(bars.Y.Max >= 1.05) {
		t.Errorf("ARD axis [%g, %g], want [0, > 1.05] for a tallest bar of 1", bars.Y.Min, bars.Y.Max)
	}
}
