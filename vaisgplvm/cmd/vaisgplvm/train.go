package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Metrics is what train writes to DIR/metrics.json.
type Metrics struct {
	Dataset        string            `json:"dataset"`
	Config         model.Config      `json:"config"`
	Backend        string            `json:"backend"`
	Iterations     int               `json:"iterations"`
	SecondsPerIter float64           `json:"seconds_per_iteration"`
	Eval           *train.Evaluation `json:"metrics"`
	Standardized   bool              `json:"standardized"`
	Chain          *ChainReport      `json:"chain,omitempty"`
}

// ChainReport describes a trained VAIS model's annealed chain: the schedule beta_k, the step sizes
// eta_k (as trained or adapted) and each transition's mean Metropolis-Hastings acceptance rate
// measured on up to 200 training points with 4 chains each.
type ChainReport struct {
	Betas  []float64 `json:"betas"`
	Etas   []float64 `json:"etas"`
	Accept []float64 `json:"accept_rates"`
}

// chainReport returns the chain report of a VAIS trainer (nil for MF and IWVI, or K = 0).
func chainReport(tr *train.Trainer, seed uint64) (*ChainReport, error) {
	if tr.Model.Cfg.Method != "vais" || tr.Model.Cfg.K == 0 {
		return nil, nil
	}
	p, err := tr.Params()
	if err != nil {
		return nil, err
	}
	idx := make([]int, min(tr.Model.N, 200))
	for i := range idx {
		idx[i] = i
	}
	w, err := tr.Weights(idx, 4, seed)
	if err != nil {
		return nil, err
	}
	return &ChainReport{Betas: p.Betas, Etas: p.Etas, Accept: w.Accept}, nil
}

func runTrain(args []string) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	dataset := fs.String("dataset", "oilflow", "dataset: oilflow or wine")
	method := fs.String("method", "vais", "bound: mf, iwvi or vais")
	iters := fs.Int("iters", 3000, "training iterations")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("out", "", "output directory (required)")
	resume := fs.String("resume", "", "checkpoint file to resume from")
	every := fs.Int("checkpoint-every", 500, "write the checkpoint every N iterations")
	backendName := fs.String("backend", "", backendHelp)
	quiet := fs.Bool("quiet", false, "no progress bar")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	if *iters < 1 || *every < 1 {
		return usagef("--iters and --checkpoint-every must be >= 1")
	}
	cfg, err := mf.config(*method, *dataset, *seed)
	if err != nil {
		return err
	}
	tr, ds, err := newTrainer(cfg, *dataset, mf.standardize, *backendName)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if *resume != "" {
		if err := tr.Load(*resume); err != nil {
			return err
		}
	}
	ckpt := filepath.Join(*out, "checkpoint.gob")
	progress := os.Stderr
	if *quiet {
		progress = nil
	}
	runErr := tr.Run(*iters, progress, *every, func(t *train.Trainer) error { return t.Save(ckpt) })
	if err := writeCurve(filepath.Join(*out, "curve.csv"), tr.Curve); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("%w; the last good checkpoint is %s", runErr, ckpt)
	}
	if err := tr.Save(ckpt); err != nil {
		return err
	}
	ev, err := tr.Evaluate(5, ds.Labels)
	if err != nil {
		return err
	}
	chain, err := chainReport(tr, *seed)
	if err != nil {
		return err
	}
	met := Metrics{Dataset: *dataset, Config: cfg, Backend: tr.Backend.Name(), Iterations: tr.Iter,
		SecondsPerIter: tr.SecondsPerIter(), Eval: ev, Standardized: mf.standardize, Chain: chain}
	buf, _ := json.MarshalIndent(met, "", "  ")
	fmt.Println(string(buf))
	return os.WriteFile(filepath.Join(*out, "metrics.json"), buf, 0o644)
}

func writeCurve(path string, curve []float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, "iteration,neg_elbo_per_point")
	for i, v := range curve {
		fmt.Fprintf(f, "%d,%.10g\n", i+1, v)
	}
	return f.Close()
}
