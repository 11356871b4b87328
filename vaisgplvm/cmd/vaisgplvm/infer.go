package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/baselines"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// InferSummary is what infer prints and writes to DIR/infer.json.
type InferSummary struct {
	Checkpoint string  `json:"checkpoint"`
	Data       string  `json:"data"`
	Points     int     `json:"points"`
	Missing    int     `json:"missing_entries"`
	Iterations int     `json:"iterations"`
	NegBound   float64 `json:"neg_bound_per_point"` // in the model's units (standardised if it was trained so)
	NegBoundSE float64 `json:"neg_bound_mc_se"`     // its Monte Carlo standard error (3 noise draws)
	MSEObs     float64 `json:"mse_observed"`        // over the observed entries, in the data file's units
	// Baselines are the files with the missing entries imputed by simple baselines, to compare
	// with infer_reconstruction.csv (none when nothing is missing).
	Baselines []string `json:"baseline_files,omitempty"`
}

func runInfer(args []string) error {
	fs := flag.NewFlagSet("infer", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "", "checkpoint written by train (required)")
	dataPath := fs.String("data", "", "new points: a delimited file (comma, semicolon or tab) with a header line and D values per row; empty, NaN, NA or ? fields are missing and get imputed (required)")
	out := fs.String("out", "", "output directory (required)")
	iters := fs.Int("iters", 500, "Adam iterations for the new latents")
	lr := fs.Float64("lr", 0, "Adam learning rate for the new latents (0 = the trained model's)")
	seed := fs.Uint64("seed", 1, "random seed")
	backendName := fs.String("backend", "", backendHelp)
	overwrite := fs.Bool("overwrite", false, "replace the outputs of an earlier infer in --out (infer's files are infer.json and infer_*.csv, so a training directory is fine)")
	trainData := fs.String("train-data", "", trainDataHelp)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ckpt == "" || *dataPath == "" || *out == "" {
		return usagef("--checkpoint, --data and --out are required")
	}
	if *iters < 1 || *seed == 0 {
		return usagef("--iters and --seed must be >= 1")
	}
	if !(*lr >= 0) || math.IsInf(*lr, 0) {
		return usagef("--lr %g: want a positive finite learning rate, or 0 for the trained model's", *lr)
	}
	dir, err := openRunDir(*out, inferOutputs, rundir.Options{Run: "infer", Overwrite: *overwrite,
		Inputs: map[string]string{"--checkpoint": *ckpt, "--data": *dataPath, "--train-data": *trainData}})
	if err != nil {
		return err
	}
	defer dir.Close()
	tr, td, err := loadCheckpoint(*ckpt, *backendName, *trainData)
	if err != nil {
		return err
	}
	m := tr.Model
	pts, err := data.ReadPoints(*dataPath, namedColumns(td.Dataset), td.LabelColumn, m.D)
	if err != nil {
		return fmt.Errorf("--data: %w", err)
	}
	x, mask, missing, columns := pts.X, pts.Mask, pts.Missing(), columnHeader(td.Dataset)
	defer exitOnSignal("infer", *out)()
	// A model trained on standardised data takes standardised points; its reconstruction goes back
	// to the file's units.
	res, err := infer.Latents(tr, td.toModelUnits(x), mask, infer.Options{Iters: *iters, Seed: *seed, LR: *lr})
	if err != nil {
		return err
	}
	res.Recon = td.toDataUnits(res.Recon)
	for _, f := range []struct {
		name   string
		header []string
		rows   [][]float64
	}{{"infer_latent_means.csv", latentHeader(m.Cfg.Q), res.Mean}, {"infer_latents.csv", latentHeader(m.Cfg.Q), res.Latent},
		{"infer_reconstruction.csv", columns, res.Recon}} {
		if err := writeMatrix(dir, f.name, f.header, f.rows); err != nil {
			return err
		}
	}
	mse, err := metrics.MSE(x, res.Recon, mask)
	if err != nil {
		return err
	}
	sum := InferSummary{Checkpoint: *ckpt, Data: *dataPath, Points: len(x), Missing: missing, Iterations: *iters,
		NegBound: res.NegELBO, NegBoundSE: res.NegELBOSE, MSEObs: mse}
	if sum.Baselines, err = writeImputationBaselines(dir, td, x, mask, columns); err != nil {
		return err
	}
	buf, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("infer.json: %w", err)
	}
	fmt.Println(string(buf))
	if err := dir.WriteFile("infer.json", buf); err != nil {
		return err
	}
	return dir.Commit()
}

// inferOutputs names the files infer writes into --out: its own names, so that infer into a
// training directory leaves the training outputs alone.
var inferOutputs = []string{"infer.json", "infer_latent_means.csv", "infer_latents.csv", "infer_reconstruction.csv",
	"infer_mean_imputation.csv", "infer_knn_imputation.csv"}

// writeImputationBaselines writes, when the new points x [N*, D] have missing entries (mask 0),
// the baselines' imputations of them beside the model's (package baselines, in the model's units
// against its training rows, written in the file's): infer_mean_imputation.csv (column means) and
// infer_knn_imputation.csv (mean of the paper.KNN nearest training rows over the observed entries).
// It returns the files written; a baseline that cannot impute (a row with no observed entry) is
// skipped with a note on stderr.
func writeImputationBaselines(dir *rundir.Dir, td *trainingData, x, mask [][]float64, columns []string) ([]string, error) {
	if mask == nil {
		return nil, nil
	}
	mx := td.toModelUnits(x)
	var files []string
	for _, b := range []struct {
		name   string
		impute func() ([][]float64, error)
	}{
		{"infer_mean_imputation.csv", func() ([][]float64, error) { return baselines.MeanImpute(mx, mask, td.X, td.Mask) }},
		{"infer_knn_imputation.csv", func() ([][]float64, error) {
			return baselines.KNNImpute(mx, mask, td.X, td.Mask, paper.KNN, false)
		}},
	} {
		rows, err := b.impute()
		if err != nil {
			fmt.Fprintf(os.Stderr, "vaisgplvm: %s not written: %v\n", b.name, err)
			continue
		}
		if err := writeMatrix(dir, b.name, columns, td.toDataUnits(rows)); err != nil {
			return files, err
		}
		files = append(files, b.name)
	}
	return files, nil
}

// namedColumns returns the training data's feature names, nil when it has none (the images).
func namedColumns(ds *data.Dataset) []string {
	if _, d := ds.Dims(); len(ds.Columns) == d {
		return ds.Columns
	}
	return nil
}

const trainDataHelp = "where the training file the checkpoint records is now, when it has moved (its sha256 must match the recorded one)"

// loadCheckpoint rebuilds the trainer of a checkpoint written by train, on the backend named by
// spec, with the training data it records (rebuilt and checked against its sha256; trainData, when
// not empty, is where that file is now), and loads its parameters.
func loadCheckpoint(ckpt, spec, trainData string) (*train.Trainer, *trainingData, error) {
	cfg, tag, err := train.ReadCheckpointInfo(ckpt)
	if err != nil {
		return nil, nil, err
	}
	if tag == "" {
		return nil, nil, fmt.Errorf("checkpoint %s does not record its training data (written by an older version)", ckpt)
	}
	src, err := parseSource(tag)
	if err != nil {
		return nil, nil, err
	}
	if trainData != "" {
		if src.File == "" {
			return nil, nil, usagef("--train-data: %s was trained on the built-in dataset %s, not on a file", ckpt, src.Dataset)
		}
		src.File = trainData // load checks that its sha256 is the recorded one
	}
	b, err := openConfigBackend(spec, cfg)
	if err != nil {
		return nil, nil, err
	}
	td, err := src.load()
	if errors.Is(err, fs.ErrNotExist) && trainData == "" {
		return nil, nil, fmt.Errorf("the training file %s recorded in %s is not there; if it has moved, give its new place with --train-data", src.File, ckpt)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("loading the training data of %s: %w", ckpt, err)
	}
	tr, err := newTrainer(cfg, td, tag, b)
	if err != nil {
		return nil, nil, err
	}
	if err := tr.Load(ckpt); err != nil {
		return nil, nil, mismatchError(err)
	}
	return tr, td, nil
}
