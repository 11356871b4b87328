package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// InferSummary is what infer prints and writes to DIR/infer.json.
type InferSummary struct {
	Checkpoint string  `json:"checkpoint"`
	Data       string  `json:"data"`
	Points     int     `json:"points"`
	Missing    int     `json:"missing_entries"`
	Iterations int     `json:"iterations"`
	NegBound   float64 `json:"neg_bound_per_point"`
	MSEObs     float64 `json:"mse_observed"`
}

func runInfer(args []string) error {
	fs := flag.NewFlagSet("infer", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "", "checkpoint written by train (required)")
	dataPath := fs.String("data", "", "CSV of new points: a header line, then D values per row; an empty field or NaN is missing (required)")
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
	name, std := parseDataTag(tag)
	if name == "" {
		return fmt.Errorf("checkpoint %s does not record its training data (written by an older version)", *ckpt)
	}
	tr, _, err := newTrainer(cfg, name, std, *backendName)
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
	res, err := infer.Latents(tr, x, mask, infer.Options{Iters: *iters, Seed: *seed})
	if err != nil {
		return err
	}
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
		NegBound: res.NegELBO, MSEObs: observedMSE(x, res.Recon, mask)}
	buf, _ := json.MarshalIndent(sum, "", "  ")
	fmt.Println(string(buf))
	return os.WriteFile(filepath.Join(*out, "infer.json"), buf, 0o644)
}

// readPoints reads a CSV with a header and d columns; empty fields and NaN are missing (mask 0).
// The mask is nil when nothing is missing.
func readPoints(path string, d int) (x, mask [][]float64, missing int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("--data: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = d
	if _, err := r.Read(); err != nil {
		return nil, nil, 0, fmt.Errorf("%s: reading the header: %w", path, err)
	}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w (the model has D = %d columns)", path, err, d)
		}
		row, mrow := make([]float64, d), make([]float64, d)
		for j, s := range rec {
			s = strings.TrimSpace(s)
			if s == "" || strings.EqualFold(s, "nan") {
				row[j], missing = math.NaN(), missing+1
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(v, 0) {
				return nil, nil, 0, fmt.Errorf("%s line %d column %d: %q is not a finite number", path, line, j+1, s)
			}
			row[j], mrow[j] = v, 1
		}
		x, mask = append(x, row), append(mask, mrow)
	}
	if len(x) == 0 {
		return nil, nil, 0, fmt.Errorf("%s has no data rows", path)
	}
	if missing == 0 {
		mask = nil
	}
	return x, mask, missing, nil
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

func observedMSE(x, pred, mask [][]float64) float64 {
	s, c := 0.0, 0.0
	for i := range x {
		for j := range x[i] {
			if mask != nil && mask[i][j] == 0 {
				continue
			}
			s += (x[i][j] - pred[i][j]) * (x[i][j] - pred[i][j])
			c++
		}
	}
	return s / c
}
