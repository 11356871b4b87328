package paper

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/plots"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// artefacts are what the figures need from the first seed of one (dataset, method) training.
type artefacts struct {
	curve   []float64
	params  *train.Params
	recon   [][]float64 // predictive means [N, D] at the reconstruction latents (last snapshot)
	mask    [][]float64 // observation mask [N, D] or nil
	damaged []int       // images with hidden pixels (tables 2, 3)
	ess     []float64   // per damaged image ESS at the last snapshot (table 3)
	// essDefs are the per damaged image ESS under the other definitions at the last snapshot
	// (table 3; eval.ESSBreakdown).
	essDefs *eval.ESSBreakdown
}

// newArtefacts keeps what the figures need from a trained job (mask: the observation mask or nil,
// damaged: the images with hidden pixels).
func newArtefacts(tr *train.Trainer, j *job, mask [][]float64, damaged []int) (*artefacts, error) {
	params, err := tr.Params()
	if err != nil {
		return nil, err
	}
	a := &artefacts{curve: tr.Curve, params: params, recon: j.evals[len(j.evals)-1].Recon, mask: mask, damaged: damaged}
	if j.weights != nil {
		a.ess = j.weights[len(j.weights)-1].PerPointESS
		a.essDefs = j.breakdowns[len(j.breakdowns)-1]
	}
	return a, nil
}

// WriteFigures writes the PNG figures of a table run made with Snapshots.Figures under dir (created
// when missing) and returns their paths: -ELBO curves per dataset (the paper's Fig. 4), latent
// scatters and ARD bars per dataset and method (Fig. 2, Fig. 5 right), image grids of truth /
// masked / reconstructions (Figs. 3, 5) and ESS histograms (Table 3). Without Snapshots.Figures it
// writes nothing.
func (r *Result) WriteFigures(dir string) ([]string, error) {
	table, list, sets := r.Table, r.jobs, r.sets
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	byData := map[string][]*job{}
	var order []string
	for i := range list {
		j := &list[i]
		if j.art == nil {
			continue
		}
		if _, ok := byData[j.dataset]; !ok {
			order = append(order, j.dataset)
		}
		byData[j.dataset] = append(byData[j.dataset], j)
	}
	for _, name := range order {
		js := byData[name]
		ds := sets[name]
		// Fig. 4: -ELBO curves.
		var series []plots.Series
		for _, j := range js {
			series = append(series, plots.Series{Name: j.method, Y: j.art.curve})
		}
		path, err := plots.SaveCurves(filepath.Join(dir, fmt.Sprintf("curves_%s.png", name)), name, series)
		if err != nil {
			return files, err
		}
		files = append(files, path)
		for _, j := range js {
			// Fig. 2 / Fig. 5 right: latents in the two most relevant dimensions, and ARD bars.
			paths, err := plots.LatentFigures(dir, name, j.method, j.art.params.LatentMean, j.art.params.LatentSD, j.art.params.Lengthscales, ds.Labels, ds.LabelNames)
			files = append(files, paths...)
			if err != nil {
				return files, err
			}
		}
		if table >= 2 && ds.ImageRows > 0 {
			// Figs. 3, 5: damaged images, their masks and each method's reconstruction.
			show := js[0].art.damaged
			if len(show) > 8 {
				show = show[:8]
			}
			truth, hidden := data.Rows(ds.X, show), data.Rows(js[0].art.mask, show)
			for i := range hidden {
				hidden[i] = invert(hidden[i])
			}
			rows := []plots.ImageRow{{Label: "truth", Images: truth}, {Label: "observed", Images: truth, Hidden: hidden}}
			for _, j := range js {
				rows = append(rows, plots.ImageRow{Label: j.method, Images: data.Rows(j.art.recon, show)})
			}
			p, err := plots.ImageGrid(rows, plots.GridOptions{Title: name + ": damaged images (red: hidden) and reconstructions",
				Rows: ds.ImageRows, Cols: ds.ImageCols, Lo: 0, Hi: pixelMax(ds)})
			if err != nil {
				return files, err
			}
			path := filepath.Join(dir, fmt.Sprintf("images_%s.png", name))
			h := vg.Length(len(rows)) * vg.Length(float64(ds.ImageRows)/float64(ds.ImageCols)) * 0.9 * vg.Inch
			if err := plots.Save(p, path, 8*vg.Inch, h+0.5*vg.Inch); err != nil {
				return files, err
			}
			files = append(files, path)
		}
		if table == 3 {
			paths, err := essHistograms(dir, name, js)
			files = append(files, paths...)
			if err != nil {
				return files, err
			}
		}
	}
	return files, nil
}

func invert(mask []float64) []float64 {
	for i, v := range mask {
		mask[i] = 1 - v
	}
	return mask
}

// pixelMax is the white level of an image data set: 1 on the unit scale, 255 raw.
func pixelMax(ds *data.Dataset) float64 {
	m := 0.0
	for _, r := range ds.X {
		for _, v := range r {
			m = max(m, v)
		}
	}
	if m <= 1 {
		return 1
	}
	return 255
}

// essHistograms writes Table 3's distributions (ECDFs) of the per damaged image ESS: ess_NAME.png (each
// method's own weights, the table's ESS column) and one ess_NAME_DEFINITION.png per other
// definition of eval.ESSBreakdown (q0_samples, per_pixel, chain_increments), every method in each.
func essHistograms(dir, name string, js []*job) ([]string, error) {
	var own []plots.Sample
	defs := map[string][]plots.Sample{}
	k := 0
	for _, j := range js {
		own = append(own, plots.Sample{Name: j.method, Values: j.art.ess})
		k = max(k, j.weights[len(j.weights)-1].K)
		if e := j.art.essDefs; e != nil {
			defs["q0 samples"] = append(defs["q0 samples"], plots.Sample{Name: j.method, Values: e.Q0Samples})
			defs["per pixel"] = append(defs["per pixel"], plots.Sample{Name: j.method, Values: e.PerPixel})
			if e.Increments != nil {
				defs["chain increments"] = append(defs["chain increments"], plots.Sample{Name: j.method, Values: e.Increments})
			}
		}
	}
	var files []string
	p, err := plots.ECDFs(fmt.Sprintf("%s: ESS of %d normalised weights per damaged image", name, k), "ESS", own...)
	if err != nil {
		return files, err
	}
	path := filepath.Join(dir, fmt.Sprintf("ess_%s.png", name))
	if err := plots.Save(p, path, 0, 0); err != nil {
		return files, err
	}
	files = append(files, path)
	for _, def := range []string{"q0 samples", "per pixel", "chain increments"} {
		if defs[def] == nil {
			continue
		}
		p, err := plots.ECDFs(fmt.Sprintf("%s: per-image ESS, %s", name, def), "ESS", defs[def]...)
		if err != nil {
			return files, err
		}
		path := filepath.Join(dir, fmt.Sprintf("ess_%s_%s.png", name, strings.ReplaceAll(def, " ", "_")))
		if err := plots.Save(p, path, 0, 0); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}
