package plots

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot/vg"
)

// SaveCurves writes the -ELBO curves of series (one per method) of a dataset to path.
func SaveCurves(path, dataset string, series []Series) (string, error) {
	if len(series) == 0 {
		return "", fmt.Errorf("plots: SaveCurves %s: no series", path)
	}
	n := len(series[0].Y)
	p, err := Curves(CurveOptions{Title: fmt.Sprintf("%s: -ELBO per point (mini-batch estimate, moving average of %d)", dataset, max(1, n/50)),
		XLabel: "iteration", YLabel: "-ELBO / N (nats)", Smooth: max(1, n/50), SkipFirst: n / 10, SettleY: true}, series...)
	if err != nil {
		return "", err
	}
	return path, Save(p, path, 0, 0)
}

// LatentFigures writes latent_<dataset>_<method>.png (q0 means mean [N, Q] ± 1 sd [N, Q] in the two
// dimensions with the smallest of the ARD lengthscales [Q], coloured by labels [N] named by names
// when there are any) and ard_<dataset>_<method>.png (inverse lengthscales) under dir, and returns
// the paths written.
func LatentFigures(dir, dataset, method string, mean, sd [][]float64, lengthscales []float64, labels []int, names []string) ([]string, error) {
	dims, err := SmallestLengthscales(lengthscales)
	if err != nil {
		return nil, err
	}
	p, err := Latents(mean, sd, labels,
		LatentOptions{Title: fmt.Sprintf("%s, %s: q0 means ± 1 sd, two smallest lengthscales", dataset, method),
			Dims: dims, ClassNames: names})
	if err != nil {
		return nil, err
	}
	latent := filepath.Join(dir, fmt.Sprintf("latent_%s_%s.png", dataset, method))
	if err := Save(p, latent, 0, 0); err != nil {
		return nil, err
	}
	p, err = InverseLengthscales(lengthscales, fmt.Sprintf("%s, %s: ARD relevance", dataset, method))
	if err != nil {
		return []string{latent}, err
	}
	ard := filepath.Join(dir, fmt.Sprintf("ard_%s_%s.png", dataset, method))
	if err := Save(p, ard, 4*vg.Inch, 3*vg.Inch); err != nil {
		return []string{latent}, err
	}
	return []string{latent, ard}, nil
}
