package experiment

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/baselines"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// InferSummary is what Infer writes to DIR/infer.json.
type InferSummary struct {
	Checkpoint string  `json:"checkpoint"`
	Data       string  `json:"data"`
	Points     int     `json:"points"`
	Missing    int     `json:"missing_entries"`
	Iterations int     `json:"iterations"`
	NegBound   float64 `json:"neg_bound_per_point"` // in the model's units (standardised if it was trained so)
	NegBoundSE float64 `json:"neg_bound_mc_se"`     // its Monte Carlo standard error (3 noise draws)
	MSEObs     float64 `json:"mse_observed"`        // over the observed entries, in the data file's units
	// MSEObsModel is the same MSE in the model's (standardised) units, as train's metrics.json
	// predictive "mse" (its "mse" with Options.SingleLatent); only for a model trained on
	// standardised data.
	MSEObsModel  *float64 `json:"mse_observed_model_units,omitempty"`
	Standardized bool     `json:"standardized"`
	// Baselines are the files with the missing entries imputed by simple baselines, to compare
	// with infer_reconstruction.csv (none when nothing is missing).
	Baselines []string `json:"baseline_files,omitempty"`
	// Options are the fit's settings (iterations, seed, learning rate); Provenance is
	// InferOptions.Provenance.
	Options infer.Options `json:"options"`
	// Exact is the exact GP conditional that made infer_reconstruction.csv (infer.Options.Exact).
	Exact      *eval.Exact    `json:"exact_conditional,omitempty"`
	Provenance map[string]any `json:"provenance,omitempty"`
}

// InferOutputs names the files Infer writes: names of its own, so that inferring into a training
// directory leaves the training outputs alone.
var InferOutputs = []string{"infer.json", "infer_latent_means.csv", "infer_latents.csv", "infer_reconstruction.csv",
	"infer_mean_imputation.csv", "infer_knn_imputation.csv", "infer_ppca_imputation.csv"}

// InferOptions are Infer's inputs besides the trained model.
type InferOptions struct {
	infer.Options
	Checkpoint string // the checkpoint tr was loaded from (recorded in infer.json)
	// Data is a delimited file of new points, its columns matched to the training data's by
	// header name (data.ReadPoints); empty or NaN fields are missing and get imputed.
	Data string
	Warn func(string) // when not nil, gets each warning (a baseline that could not impute)
	// Provenance, when not nil, is recorded in infer.json (Provenance(args) gives a command's).
	Provenance map[string]any
}

// Infer fits the latents of the new points in opt.Data under the trained model tr (trained on
// td, LoadCheckpoint) and writes into dir, which it commits: infer_latent_means.csv (q0 means
// [N*, Q]), infer_latents.csv (reconstruction latents [N*, Q]), infer_reconstruction.csv ([N*, D],
// the file's units, missing entries imputed), with missing entries the baselines' imputations
// (column means, k nearest training rows) and infer.json. ctx stops the latents' fit.
func Infer(ctx context.Context, dir *rundir.Dir, tr *train.Trainer, td *Data, opt InferOptions) (*InferSummary, error) {
	if err := needAll(dir, tr, td); err != nil {
		return nil, err
	}
	m := tr.Model
	pts, err := data.ReadPoints(opt.Data, NamedColumns(td.Dataset), td.LabelColumn, m.D)
	if err != nil {
		return nil, option.Failf([]string{"Data"}, "Data: %w", err)
	}
	x, mask, columns := pts.X, pts.Mask, ColumnHeader(td.Dataset)
	// A model trained on standardised data takes standardised points; its reconstruction goes back
	// to the file's units.
	res, err := infer.Latents(ctx, tr, td.ToModelUnits(x), mask, opt.Options)
	if err != nil {
		return nil, err
	}
	res.Recon = td.ToDataUnits(res.Recon)
	for _, f := range []struct {
		name   string
		header []string
		rows   [][]float64
	}{{"infer_latent_means.csv", LatentHeader(m.Cfg.Q), res.Mean}, {"infer_latents.csv", LatentHeader(m.Cfg.Q), res.Latent},
		{"infer_reconstruction.csv", columns, res.Recon}} {
		if err := WriteMatrix(dir, f.name, f.header, f.rows); err != nil {
			return nil, err
		}
	}
	mse, err := metrics.MSE(x, res.Recon, mask)
	if err != nil {
		return nil, err
	}
	sum := &InferSummary{Checkpoint: opt.Checkpoint, Data: opt.Data, Points: len(x), Missing: pts.Missing(),
		Options: opt.Options, Provenance: opt.Provenance, Exact: res.Exact,
		Iterations: opt.Iters, NegBound: res.NegELBO, NegBoundSE: res.NegELBOSE, MSEObs: mse, Standardized: td.Std != nil}
	if td.Std != nil {
		m, err := metrics.MSE(td.ToModelUnits(x), td.ToModelUnits(res.Recon), mask)
		if err != nil {
			return nil, err
		}
		if finite(m) {
			sum.MSEObsModel = &m
		}
	}
	if sum.Baselines, err = writeImputationBaselines(dir, td, x, mask, columns, m.Cfg.Q, opt.Warn); err != nil {
		return nil, err
	}
	buf, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("infer.json: %w", err)
	}
	if err := dir.WriteFile("infer.json", buf); err != nil {
		return nil, err
	}
	return sum, dir.Commit()
}

// writeImputationBaselines writes, when the new points x [N*, D] have missing entries (mask 0),
// the baselines' imputations of them beside the model's (package baselines, in the model's units
// against its training rows, written in the file's): infer_mean_imputation.csv (column means) and
// infer_knn_imputation.csv (mean of the protocol.KNN nearest training rows over the observed entries)
// and infer_ppca_imputation.csv (PPCA with the model's Q fitted on the training data by EM, the
// posterior means given each row's observed entries).
// It returns the files written; a baseline that cannot impute (a row with no observed entry) is
// skipped with a warning.
func writeImputationBaselines(dir *rundir.Dir, td *Data, x, mask [][]float64, columns []string, q int, warn func(string)) ([]string, error) {
	if mask == nil {
		return nil, nil
	}
	mx := td.ToModelUnits(x)
	var files []string
	for _, b := range []struct {
		name   string
		impute func() ([][]float64, error)
	}{
		{"infer_mean_imputation.csv", func() ([][]float64, error) { return baselines.MeanImpute(mx, mask, td.X, td.Mask) }},
		{"infer_knn_imputation.csv", func() ([][]float64, error) {
			return baselines.KNNImpute(mx, mask, td.X, td.Mask, protocol.KNN, false)
		}},
		{"infer_ppca_imputation.csv", func() ([][]float64, error) { // PPCA with the model's Q, fitted on the training data
			p, err := baselines.FitPPCA(td.X, td.Mask, q, baselines.PPCAOptions{})
			if err != nil {
				return nil, err
			}
			imp, _, err := p.Impute(mx, mask, nil)
			return imp, err
		}},
	} {
		rows, err := b.impute()
		if err != nil {
			if warn != nil {
				warn(fmt.Sprintf("%s not written: %v", b.name, err))
			}
			continue
		}
		if err := WriteMatrix(dir, b.name, columns, td.ToDataUnits(rows)); err != nil {
			return files, err
		}
		files = append(files, b.name)
	}
	return files, nil
}
