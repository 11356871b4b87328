package plots

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
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
