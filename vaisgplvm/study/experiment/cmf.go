package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/cmf"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/plots"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// CMFOutputs names the files WriteCMF writes for the given families.
func CMFOutputs(families []string) []string {
	names := []string{"cmf.json", "cmf.md", "curves.csv", "curves.png", "iw.png"}
	for _, f := range families {
		names = append(names, f+"_latents.png", f+"_samples.png", f+"_reconstructions.png")
	}
	return names
}

// WriteCMF writes a GP-LVM-CMF comparison (cmf.Experiment) into dir, which it commits: cmf.json,
// cmf.md (its table), curves.csv (each family's -bound per training step) and, with figures, the
// figures (cmf.ExperimentResult.Figures).
func WriteCMF(dir *rundir.Dir, res *cmf.ExperimentResult, figures bool) error {
	if dir == nil || res == nil {
		return fmt.Errorf("WriteCMF: nil directory or result")
	}
	buf, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("cmf JSON: %w", err)
	}
	if err := dir.WriteFile("cmf.json", buf); err != nil {
		return err
	}
	if err := dir.WriteFile("cmf.md", []byte(res.Markdown())); err != nil {
		return err
	}
	if err := dir.WriteFile("curves.csv", []byte(cmfCurves(res))); err != nil {
		return err
	}
	if figures {
		if err := writeCMFFigures(dir, res); err != nil {
			return err
		}
	}
	return dir.Commit()
}

// cmfCurves returns curves.csv: the iteration and each family's -bound (empty past its curve).
func cmfCurves(res *cmf.ExperimentResult) string {
	var header []string
	var cols [][]float64
	for _, f := range res.Families {
		header, cols = append(header, f.Family+"_neg_bound"), append(cols, f.Curve)
	}
	var csv strings.Builder
	csv.WriteString("iteration," + strings.Join(header, ",") + "\n")
	for i := range res.Options.Iters {
		csv.WriteString(strconv.Itoa(i + 1))
		for _, c := range cols {
			v := ""
			if i < len(c) {
				v = strconv.FormatFloat(c[i], 'g', 8, 64)
			}
			csv.WriteString("," + v)
		}
		csv.WriteString("\n")
	}
	return csv.String()
}

// writeCMFFigures writes the comparison's figures as PNG files.
func writeCMFFigures(dir *rundir.Dir, res *cmf.ExperimentResult) error {
	figs, err := res.Figures()
	if err != nil {
		return err
	}
	for _, f := range figs {
		png, err := plots.PNG(f.Plot, f.Width, f.Height)
		if err != nil {
			return err
		}
		if err := dir.WriteFile(f.Name+".png", png); err != nil {
			return err
		}
	}
	return nil
}

// CMFRun is `vaisgplvm cmf`'s run (RunCMF): the experiment's options, where its outputs go and
// the backend.
type CMFRun struct {
	Options   cmf.ExperimentOptions // Backend is opened by RunCMF from BackendSpec
	Out       string                // the run's directory; "" for out/cmf-DATASET
	Overwrite bool                  // replace an earlier cmf run's outputs in Out
	// BackendSpec is backend.Start's spec; Options.Config.DType its type.
	BackendSpec string
	Figures     bool
	Provenance  map[string]any // recorded in cmf.json (Provenance(args) gives a command's)
	Log         io.Writer      // the backend's choice (nil: os.Stderr)
}

// RunCMF holds r.Out (rundir), opens the backend, runs the experiment (cmf.Experiment) and writes
// its outputs (WriteCMF). It returns the result and the directory, closed (nil when it could not
// be opened). A ctx that ends stops the experiment: nothing is written.
func RunCMF(ctx context.Context, r CMFRun) (*cmf.ExperimentResult, *rundir.Dir, error) {
	if r.Out == "" {
		r.Out = filepath.Join("out", "cmf-"+r.Options.Dataset)
	}
	if r.Log == nil {
		r.Log = os.Stderr
	}
	dir, err := rundir.Open(r.Out, CMFOutputs(r.Options.Families), rundir.Options{Run: "cmf", Overwrite: r.Overwrite})
	if err != nil {
		return nil, nil, err
	}
	defer dir.Close()
	if r.Options.Backend, err = backend.Start(r.BackendSpec, r.Options.Config.DType, 1, 1, r.Log); err != nil {
		return nil, dir, err
	}
	res, err := cmf.Experiment(ctx, r.Options)
	if ctx.Err() != nil {
		return nil, dir, fmt.Errorf("cmf interrupted: nothing written to %s", r.Out)
	}
	if err != nil {
		return nil, dir, err
	}
	res.Provenance = r.Provenance
	return res, dir, WriteCMF(dir, res, r.Figures)
}
