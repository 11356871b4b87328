package cmf

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/plots"
)

// Figure is a named plot of an experiment ("curves", "iw", "<family>_samples", ...), with the size
// to draw it at (0: the default size; image grids have theirs, so that pixels stay square).
type Figure struct {
	Name          string
	Plot          *plot.Plot
	Width, Height vg.Length
}

// Figures draws the experiment: the training curves (-bound per point, smoothed over 20 steps or
// a tenth of the run),
// the held-out importance-weighted bounds against K, and per family the 2-D latent space of the
// training points (the first two dimensions, coloured by label), 10 samples from the decoder
// (z ~ N(0, I), decoder means) and 10 held-out images beside their reconstructions (for image data
// sets). Errors: a failed decoder evaluation or plot.
func (r *ExperimentResult) Figures() ([]Figure, error) {
	if len(r.Families) == 0 {
		return nil, fmt.Errorf("cmf: no family to draw")
	}
	var figs []Figure
	var curves, iw []plots.Series
	for _, f := range r.Families {
		curves = append(curves, plots.Series{Name: f.Family, Y: f.Curve})
		s := plots.Series{Name: f.Family}
		for _, e := range f.IW {
			s.X, s.Y = append(s.X, math.Log10(float64(e.K))), append(s.Y, e.PerPoint)
		}
		iw = append(iw, s)
	}
	n := len(r.Families[0].Curve)
	p, err := plots.Curves(plots.CurveOptions{Title: r.Dataset + ": training -bound per point", XLabel: "iteration",
		YLabel: "-bound (nats per point)", Smooth: max(1, min(20, n/10)), SkipFirst: min(20, n/10)}, curves...)
	if err != nil {
		return nil, err
	}
	figs = append(figs, Figure{Name: "curves", Plot: p})
	if len(iw) > 0 && len(iw[0].X) > 0 {
		if p, err = plots.Curves(plots.CurveOptions{Title: r.Dataset + ": held-out importance-weighted bound", XLabel: "log10 K",
			YLabel: "bound (nats per point)", Markers: true}, iw...); err != nil {
			return nil, err
		}
		figs = append(figs, Figure{Name: "iw", Plot: p})
	}
	for _, f := range r.Families {
		more, err := r.familyFigures(f)
		if err != nil {
			return nil, fmt.Errorf("cmf: %s figures: %w", f.Family, err)
		}
		figs = append(figs, more...)
	}
	return figs, nil
}

func (r *ExperimentResult) familyFigures(f FamilyResult) ([]Figure, error) {
	var figs []Figure
	m := f.Model
	if m.Cfg.LatentDim >= 2 {
		z, err := m.Latents()
		if err != nil {
			return nil, err
		}
		var labels []int
		if r.Labels != nil {
			labels = make([]int, 0, len(z))
			test := map[int]bool{}
			for _, i := range r.TestIndex {
				test[i] = true
			}
			for i, l := range r.Labels {
				if !test[i] {
					labels = append(labels, l)
				}
			}
		}
		p, err := plots.Latents(z, nil, labels, plots.LatentOptions{Title: r.Dataset + ", " + f.Family + ": latent z of the training points", Dims: [2]int{0, 1}})
		if err != nil {
			return nil, err
		}
		figs = append(figs, Figure{Name: f.Family + "_latents", Plot: p})
	}
	if r.ImageRows == 0 {
		return figs, nil
	}
	rng := rand.New(rand.NewPCG(m.Cfg.Seed, 0x5a))
	prior := make([][]float64, 10)
	for i := range prior {
		prior[i] = make([]float64, m.Cfg.LatentDim)
		for j := range prior[i] {
			prior[i][j] = rng.NormFloat64()
		}
	}
	samples, err := m.Decode(prior)
	if err != nil {
		return nil, err
	}
	grid := plots.GridOptions{Rows: r.ImageRows, Cols: r.ImageCols, Lo: 0, Hi: 1}
	// Prior draws land where the training latents may not be (the aggregate posterior need not
	// fill N(0, I)); the decoder's output there is an extrapolation, often black or noise.
	grid.Title = r.Dataset + ", " + f.Family + ": decoder means at z ~ N(0, I) (black or noisy: z where no training latent lies)"
	fig, err := gridFigure(f.Family+"_samples", []plots.ImageRow{{Label: "samples", Images: samples}}, grid)
	if err != nil {
		return nil, err
	}
	figs = append(figs, fig)
	z, err := f.Held.Latents()
	if err != nil {
		return nil, err
	}
	recon, err := m.Decode(z[:min(10, len(z))])
	if err != nil {
		return nil, err
	}
	grid.Title = r.Dataset + ", " + f.Family + ": held-out images and reconstructions"
	fig, err = gridFigure(f.Family+"_reconstructions", []plots.ImageRow{{Label: "held-out", Images: f.Held.Y[:len(recon)]},
		{Label: "reconstruction", Images: recon}}, grid)
	if err != nil {
		return nil, err
	}
	return append(figs, fig), nil
}

// gridFigure is the image grid of rows as a Figure at the size that keeps its pixels square.
func gridFigure(name string, rows []plots.ImageRow, grid plots.GridOptions) (Figure, error) {
	p, err := plots.ImageGrid(rows, grid)
	if err != nil {
		return Figure{}, err
	}
	w, h, err := plots.GridSize(rows, grid, 0)
	if err != nil {
		return Figure{}, err
	}
	return Figure{Name: name, Plot: p, Width: w, Height: h}, nil
}
