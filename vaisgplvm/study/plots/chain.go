package plots

import (
	"fmt"
	"image/color"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ChainPaths draws annealed Langevin chains H_0..H_K (paths[c] is [K+1, Q]) in the latent
// dimensions dims, over an optional background of latent means [N, Q] in grey: a circle marks
// H_0 (a draw from q0) and a triangle H_K (the transported point). Errors: no path, ragged
// paths, a dimension out of range.
func ChainPaths(title string, paths [][][]float64, background [][]float64, dims [2]int) (*plot.Plot, error) {
	if len(paths) == 0 || len(paths[0]) == 0 {
		return nil, fmt.Errorf("plots: chain paths: no path")
	}
	q := len(paths[0][0])
	i, j := dims[0], dims[1]
	if i < 0 || j < 0 || i >= q || j >= q || i == j {
		return nil, fmt.Errorf("plots: chain paths: dims %v invalid for Q = %d", dims, q)
	}
	p := newPlot(title, "latent dimension "+strconv.Itoa(i+1), "latent dimension "+strconv.Itoa(j+1))
	if len(background) > 0 {
		var xy plotter.XYs
		for r, row := range background {
			if len(row) != q {
				return nil, fmt.Errorf("plots: chain paths: background row %d has %d values, want %d", r, len(row), q)
			}
			xy = append(xy, plotter.XY{X: row[i], Y: row[j]})
		}
		bg, _ := plotter.NewScatter(xy)
		bg.Color, bg.Radius = color.Gray{Y: 170}, vg.Points(1.5)
		p.Add(bg)
		p.Legend.Add("latent means", bg)
	}
	for c, path := range paths {
		var xy plotter.XYs
		for k, h := range path {
			if len(h) != q {
				return nil, fmt.Errorf("plots: chain paths: path %d state %d has %d values, want %d", c, k, len(h), q)
			}
			xy = append(xy, plotter.XY{X: h[i], Y: h[j]})
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("plots: chain paths: %w", err)
		}
		line.Color, line.Width = colour(c), vg.Points(1)
		start, _ := plotter.NewScatter(xy[:1])
		start.Color, start.Shape, start.Radius = colour(c), draw.RingGlyph{}, vg.Points(4)
		end, _ := plotter.NewScatter(xy[len(xy)-1:])
		end.Color, end.Shape, end.Radius = colour(c), draw.TriangleGlyph{}, vg.Points(4)
		p.Add(line, start, end)
		if c == 0 {
			p.Legend.Add("H_0 (draw from q0)", start)
			p.Legend.Add("H_K (end of chain)", end)
		}
	}
	p.Legend.Top = true
	return p, nil
}
