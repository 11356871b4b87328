package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
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
	MSEObs     float64 `json:"mse_observed"`        // over the observed entries, in the data file's units
}

func runInfer(args []string) error {
	fs := flag.NewFlagSet("infer", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "", "checkpoint written by train (required)")
	dataPath := fs.String("data", "", "new points: a delimited file (comma, semicolon or tab) with a header line and D values per row; empty, NaN, NA or ? fields are missing and get imputed (required)")
	out := fs.String("out", "", "output directory (required)")
	iters := fs.Int("iters", 500, "Adam iterations for the new latents")
	seed := fs.Uint64("seed", 1, "random seed")
	backendName := fs.String("backend", "", backendHelp)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ckpt == "" || *dataPath == "" || *out == "" {
		return usagef("--checkpoint, --data and --out are required")
	}
	if *iters < 1 || *seed == 0 {
		return usagef("--iters and --seed must be >= 1")
	}
	cfg, tag, err := train.ReadCheckpointInfo(*ckpt)
	if err != nil {
		return err
	}
	if tag == "" {
		return fmt.Errorf("checkpoint %s does not record its training data (written by an older version)", *ckpt)
	}
	src, err := parseSource(tag)
	if err != nil {
		return err
	}
	b, err := openConfigBackend(*backendName, cfg)
	if err != nil {
		return err
	}
	td, err := src.load()
	if err != nil {
		return fmt.Errorf("loading the training data of %s: %w", *ckpt, err)
	}
	tr, err := newTrainer(cfg, td, tag, b)
	if err != nil {
		return err
	}
	m := tr.Model
	if err := tr.Load(*ckpt); err != nil {
		return err
	}
	x, mask, missing, err := readPoints(*dataPath, m.D)
	if err != nil {
		return err
	}
	// A model trained on standardised data takes standardised points; its reconstruction goes back
	// to the file's units.
	res, err := infer.Latents(tr, td.toModelUnits(x), mask, infer.Options{Iters: *iters, Seed: *seed})
	if err != nil {
		return err
	}
	res.Recon = td.toDataUnits(res.Recon)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for file, rows := range map[string][][]float64{"latent_means.csv": res.Mean, "latents.csv": res.Latent,
		"reconstruction.csv": res.Recon} {
		if err := writeMatrix(filepath.Join(*out, file), rows); err != nil {
			return err
		}
	}
	sum := InferSummary{Checkpoint: *ckpt, Data: *dataPath, Points: len(x), Missing: missing, Iterations: *iters,
		NegBound: res.NegELBO, MSEObs: metrics.MSE(x, res.Recon, mask)}
	buf, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("infer.json: %w", err)
	}
	fmt.Println(string(buf))
	return os.WriteFile(filepath.Join(*out, "infer.json"), buf, 0o644)
}

// readPoints reads new points with d feature columns (data.ReadTable: a header line; empty, NaN,
// NA or ? fields are missing, mask 0; a column may be entirely missing, to be predicted). The mask
// is nil when nothing is missing.
func readPoints(path string, d int) (x, mask [][]float64, missing int, err error) {
	ds, err := data.ReadTable(path, data.TableOptions{Columns: d, AllowUnobservedColumns: true})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("--data: %w", err)
	}
	return ds.X, ds.Mask, ds.Missing(), nil
}

func writeMatrix(path string, rows [][]float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	for _, r := range rows {
		rec := make([]string, len(r))
		for j, v := range r {
			rec[j] = strconv.FormatFloat(v, 'g', 10, 64)
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
