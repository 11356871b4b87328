package plots

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// ImageRow is one row of an image grid: a label ("truth", "masked", "reconstruction") and images
// [n, rows*cols] stored row-major (pixel (r, c) at r*cols + c). Hidden, when not nil, is [n,
// rows*cols] with 1 where a pixel is missing; those pixels are drawn in MissingColour.
type ImageRow struct {
	Label  string
	Images [][]float64
	Hidden [][]float64
}

// GridOptions describe the images of a grid.
type GridOptions struct {
	Title      string
	Rows, Cols int // pixel rows and columns of one image (Frey: 28 x 20, MNIST: 28 x 28)
	// Lo and Hi are the pixel values drawn black and white; when equal, the range of all finite
	// pixels of the grid.
	Lo, Hi float64
	// Scale is the number of screen pixels per image pixel in GridImage (default 4).
	Scale int
}

// MissingColour marks hidden pixels in image grids.
var MissingColour = color.RGBA{R: 220, G: 40, B: 40, A: 255}

// ImageGrid draws the rows of images as a grid, one ImageRow per grid row, labelled on the left,
// images upright (pixel row 0 at the top), as in the paper's Figs. 3 and 5. Errors as GridImage.
func ImageGrid(rows []ImageRow, opt GridOptions) (*plot.Plot, error) {
	img, err := GridImage(rows, opt)
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	p := plot.New()
	p.Title.Text = opt.Title
	p.Add(plotter.NewImage(img, 0, 0, float64(b.Dx()), float64(b.Dy())))
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, float64(b.Dx()), 0, float64(b.Dy())
	p.X.Tick.Marker = plot.ConstantTicks(nil)
	p.X.LineStyle.Width, p.Y.LineStyle.Width = 0, 0
	var ticks []plot.Tick
	cell := float64(b.Dy()) / float64(len(rows))
	for i, r := range rows {
		ticks = append(ticks, plot.Tick{Value: float64(b.Dy()) - (float64(i)+0.5)*cell, Label: r.Label})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Padding = 0
	p.Y.Label.Text = " " // a left margin for the row labels
	return p, nil
}

// GridImage returns the raster behind ImageGrid: each image scaled by opt.Scale (nearest
// neighbour) with a 1-image-pixel white gap between images. Grey levels map [Lo, Hi] to [0, 255];
// non-finite pixels are drawn like hidden ones. Errors: no rows, rows of different lengths,
// an image without Rows*Cols pixels, a Hidden of the wrong shape.
func GridImage(rows []ImageRow, opt GridOptions) (*image.RGBA, error) {
	if len(rows) == 0 || len(rows[0].Images) == 0 {
		return nil, fmt.Errorf("plots: image grid: no images")
	}
	if opt.Rows <= 0 || opt.Cols <= 0 {
		return nil, fmt.Errorf("plots: image grid: image size %dx%d", opt.Rows, opt.Cols)
	}
	n, px := len(rows[0].Images), opt.Rows*opt.Cols
	lo, hi := opt.Lo, opt.Hi
	if lo == hi {
		lo, hi = math.Inf(1), math.Inf(-1)
	}
	for _, r := range rows {
		if len(r.Images) != n {
			return nil, fmt.Errorf("plots: image grid: row %q has %d images, row %q has %d", r.Label, len(r.Images), rows[0].Label, n)
		}
		if r.Hidden != nil && len(r.Hidden) != n {
			return nil, fmt.Errorf("plots: image grid: row %q has %d masks for %d images", r.Label, len(r.Hidden), n)
		}
		for i, im := range r.Images {
			if len(im) != px || (r.Hidden != nil && len(r.Hidden[i]) != px) {
				return nil, fmt.Errorf("plots: image grid: row %q image %d has %d pixels, want %dx%d = %d", r.Label, i, len(im), opt.Rows, opt.Cols, px)
			}
			if opt.Lo == opt.Hi {
				for _, v := range im {
					if finite(v) {
						lo, hi = math.Min(lo, v), math.Max(hi, v)
					}
				}
			}
		}
	}
	if !(hi > lo) {
		hi = lo + 1
	}
	s := opt.Scale
	if s <= 0 {
		s = 4
	}
	cw, ch := (opt.Cols+1)*s, (opt.Rows+1)*s // cell with gap
	img := image.NewRGBA(image.Rect(0, 0, n*cw-s, len(rows)*ch-s))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for gr, r := range rows {
		for gi, im := range r.Images {
			for y := 0; y < opt.Rows; y++ {
				for x := 0; x < opt.Cols; x++ {
					v := im[y*opt.Cols+x]
					var c color.Color = MissingColour
					if finite(v) && (r.Hidden == nil || r.Hidden[gi][y*opt.Cols+x] == 0) {
						g := uint8(math.Round(255 * math.Min(1, math.Max(0, (v-lo)/(hi-lo)))))
						c = color.RGBA{R: g, G: g, B: g, A: 255}
					}
					for dy := 0; dy < s; dy++ {
						for dx := 0; dx < s; dx++ {
							img.Set(gi*cw+x*s+dx, gr*ch+y*s+dy, c)
						}
					}
				}
			}
		}
	}
	return img, nil
}

// GridSize returns the size at which to draw an ImageGrid plot of rows at width w (0: 8 inches)
// so that its pixels stay square: the raster's aspect ratio plus room for the title and the
// row labels. Drawn at another size, the images come out stretched. Errors: as GridImage.
func GridSize(rows []ImageRow, opt GridOptions, w vg.Length) (width, height vg.Length, err error) {
	img, err := GridImage(rows, opt)
	if err != nil {
		return 0, 0, err
	}
	if w == 0 {
		w = 8 * vg.Inch
	}
	b := img.Bounds()
	labels := 1.2 * vg.Inch // the row labels' margin, left of the raster
	return w, (w-labels)*vg.Length(b.Dy())/vg.Length(b.Dx()) + 0.6*vg.Inch, nil
}
