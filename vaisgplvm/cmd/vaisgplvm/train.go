package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/progress"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/plots"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Metrics is what train writes to DIR/metrics.json.
type Metrics struct {
	Dataset        string            `json:"dataset"`
	DataFile       string            `json:"data_file,omitempty"` // --data: the file (absolute path)
	MissingEntries int               `json:"missing_entries"`     // entries left out of the likelihood
	Config         model.Config      `json:"config"`
	Backend        string            `json:"backend"`
	Iterations     int               `json:"iterations"`
	SecondsPerIter float64           `json:"seconds_per_iteration"`
	ClippedSteps   int               `json:"clipped_steps,omitempty"` // steps whose gradient --clip-grad clipped
	Eval           *train.Evaluation `json:"metrics"`
	Standardized   bool              `json:"standardized"`
	Chain          *ChainReport      `json:"chain,omitempty"`
	// Hidden scores the reconstruction of the pixels hidden by --hide-pixels (frey, mnist): MSE per
	// hidden pixel in squared pixel units of --pixels, NELL in nats per damaged image.
	Hidden *train.MissingScores `json:"hidden_pixels,omitempty"`
	// Warnings says what looks wrong with a run that ended normally (a bound that got worse, a
	// chain that never accepts); empty for a healthy run. Each is also printed on stderr.
	Warnings []string `json:"warnings,omitempty"`
}

// ChainReport describes a trained VAIS model's annealed chain: the schedule beta_k, the step sizes
// eta_k (as trained or adapted) and each transition's mean Metropolis-Hastings acceptance rate
// measured on up to 200 training points with 4 chains each.
type ChainReport struct {
	Betas  []float64 `json:"betas"`
	Etas   []float64 `json:"etas"`
	Accept []float64 `json:"accept_rates"`
	// PointEtaFactors summarises the per-point factors s_n on eta_k over all N points (--point-eta).
	PointEtaFactors *Quantiles `json:"point_eta_factors,omitempty"`
}

// Quantiles summarises a sample: its minimum, 10%, 50% and 90% quantiles and maximum.
type Quantiles struct {
	Min    float64 `json:"min"`
	P10    float64 `json:"p10"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Max    float64 `json:"max"`
}

// quantiles returns the Quantiles of x (nil when x is empty).
func quantiles(x []float64) *Quantiles {
	if len(x) == 0 {
		return nil
	}
	s := slices.Clone(x)
	slices.Sort(s)
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, s, nil) }
	return &Quantiles{Min: s[0], P10: q(0.1), Median: q(0.5), P90: q(0.9), Max: s[len(s)-1]}
}

// chainReport returns the chain report of a VAIS trainer (nil for MF and IWVI, or K = 0).
func chainReport(tr *train.Trainer, seed uint64) (*ChainReport, error) {
	if !tr.Model.Method.Annealed() || tr.Model.Cfg.K == 0 {
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
	return &ChainReport{Betas: p.Betas, Etas: p.Etas, Accept: w.Accept, PointEtaFactors: quantiles(p.PointEtaFactors)}, nil
}

func runTrain(args []string) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	dataset := fs.String("dataset", "oilflow", "dataset: oilflow, wine (red), frey or mnist (its 1s and 7s) with Table 4's settings, or wine-white (downloaded on first use); frey and mnist train on Table 2's task: mini-batches of 100, K 25, one shared q(u) root, hidden pixels (see --hide-pixels), and for VAIS on frey --stop-grad (ours; --stop-grad=false for the paper's gradient)")
	file := fs.String("data", "", "train on your own data instead of --dataset: a delimited file (comma, semicolon or tab) with a header line and one row per point; empty, NaN, NA or ? fields are missing and left out of the likelihood")
	labels := fs.String("labels", "", "with --data: the header name of a class-label column (not a feature), used for the latent plot's colours and the 1-NN error")
	pixels := fs.String("pixels", "unit", "frey, mnist: pixel scale, unit ([0, 1]) or raw (0-255)")
	hide := fs.Bool("hide-pixels", true, "frey, mnist: hide 75% of the pixels of 5% of the images (Table 2's protocol, drawn with --seed) and score the model's reconstruction of them in metrics.json")
	method := fs.String("method", "vais", "bound: "+strings.Join(model.Methods(), ", "))
	iters := fs.Int("iters", 3000, "training iterations")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("out", "", "output directory (required)")
	resume := fs.String("resume", "", "checkpoint file to resume from")
	every := fs.Int("checkpoint-every", 500, "write the checkpoint every N iterations")
	backendName := fs.String("backend", "", backendHelp)
	quiet := fs.Bool("quiet", false, "no progress bar")
	noFigures := fs.Bool("no-figures", false, "do not write the PNG figures")
	overwrite := fs.Bool("overwrite", false, "replace the outputs of an earlier run in --out (without it such a directory is refused, unless --resume continues its checkpoint)")
	set, err := parseSet(fs, args)
	if err != nil {
		return err
	}
	if *iters < 1 || *every < 1 || *seed < 1 {
		return usagef("--iters, --checkpoint-every and --seed must be >= 1")
	}
	src, err := trainSource(set, mf.standardize, *dataset, *file, *labels, *pixels, *hide, *seed)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	if mf.pointEta && !annealed(*method) {
		return usagef("--point-eta adapts the annealed chain's step sizes; --method %s has none", *method)
	}
	mf.boundDefaults(set, *method)
	if paper.IsImage(src.Dataset) {
		mf.imageDefaults(set, *method, src.Dataset)
		if !set["batch"] {
			mf.batch = 100
		}
	}
	// Every flag is checked before any data is read: Q's default for --data needs the file's D,
	// so 1 stands in for it here.
	check := mf
	if check.q == 0 && src.File != "" {
		check.q = 1
	}
	cfg, err := check.config(*method, src.Dataset, *seed)
	if err != nil {
		return err
	}
	b, err := openConfigBackend(*backendName, cfg)
	if err != nil {
		return err
	}
	// The output directory is checked (and locked) before any work: see package rundir.
	resuming := *resume != "" && sameFile(filepath.Dir(*resume), *out)
	dir, err := openRunDir(*out, trainOutputs, rundir.Options{Run: "train", Overwrite: *overwrite,
		Resume: resuming, ResumeFile: map[bool]string{true: *resume}[resuming],
		Inputs: map[string]string{"--data": *file, "--resume": *resume}})
	if err != nil {
		return err
	}
	defer dir.Close()
	td, err := src.load()
	if err != nil {
		return err
	}
	n, d := td.Dims()
	if src.File != "" {
		mf.ownDataQ(n, d)
	} else if mf.q == 0 {
		mf.q = cfg.Q
	}
	if err := mf.fitToData(set, n, d); err != nil {
		return err
	}
	if cfg, err = mf.config(*method, src.Dataset, *seed); err != nil {
		return err
	}
	warnings := dataWarnings(td.X, mf.standardize)
	printWarnings(warnings)
	tr, err := newTrainer(cfg, td, src.tag(), b)
	if err != nil {
		return err
	}
	if *resume != "" {
		if err := tr.Load(*resume); err != nil {
			return mismatchError(err)
		}
		if *iters < tr.Iter {
			return usagef("--iters %d is below the %d iterations %s has done: give --iters %d or more to continue it (--iters %d only evaluates it)",
				*iters, tr.Iter, *resume, tr.Iter+1, tr.Iter)
		}
	}
	ckpt := dir.Final("checkpoint.gob")
	saved := resuming && sameFile(*resume, ckpt) // a checkpoint of this run exists
	save := func(t *train.Trainer) error {
		if err := t.Save(dir.File("checkpoint.gob")); err != nil {
			return err
		}
		if _, err := dir.Promote("checkpoint.gob"); err != nil {
			return err
		}
		saved = true
		return nil
	}
	var observe func(train.Event)
	if !*quiet {
		observe = progress.Trainings(os.Stderr)
	}
	stop := notifyStop()
	defer stop.release()
	tr.Stop = stop.ch
	runErr := tr.Run(*iters, observe, *every, save)
	if errors.Is(runErr, train.ErrInterrupted) {
		// The last step completed: its parameters resume exactly.
		if err := save(tr); err != nil {
			return fmt.Errorf("%v; writing the checkpoint failed: %w", runErr, err)
		}
		if err := writeCurve(dir, tr.Curve); err != nil {
			return err
		}
		if err := dir.Commit(); err != nil {
			return err
		}
		return interruptedError{fmt.Sprintf("%v: wrote %s and curve.csv; resume with: vaisgplvm train %s",
			runErr, ckpt, resumeArgs(args, ckpt))}
	}
	if runErr == nil {
		stop.setPhase("training is over: finishing the final evaluation and writing the outputs")
		runErr = evaluateAndWrite(dir, tr, td, src, cfg, *seed, !*noFigures, mf.standardize, warnings, save)
	}
	if runErr == nil {
		return dir.Commit()
	}
	// A failed run leaves its curve and its last good checkpoint, nothing half-written.
	if err := writeCurve(dir, tr.Curve); err != nil {
		return fmt.Errorf("%w (and curve.csv: %v)", runErr, err)
	}
	if err := dir.Keep("curve.csv", "checkpoint.gob"); err != nil {
		return fmt.Errorf("%w (and writing its outputs: %v)", runErr, err)
	}
	if err := dir.Commit(); err != nil {
		return fmt.Errorf("%w (and writing its outputs: %v)", runErr, err)
	}
	if saved {
		return fmt.Errorf("%w; the last good checkpoint of this run is %s (iteration %d or earlier)", runErr, ckpt, tr.Iter)
	}
	return fmt.Errorf("%w; no checkpoint was written", runErr)
}

// evaluateAndWrite evaluates the trained model and, when every value is finite, writes its
// checkpoint (save), curve, latents, reconstruction, figures and metrics.json into dir, with the
// data's warnings (printed before training) and the run's own (printed here).
func evaluateAndWrite(dir *rundir.Dir, tr *train.Trainer, td *trainingData, src dataSource, cfg model.Config,
	seed uint64, figures, standardized bool, warnings []string, save func(*train.Trainer) error) error {
	draws := paper.EvaluationOf(src.Dataset, 5, tr) // as reproduce for the built-in datasets
	ev, err := tr.Evaluate(draws, td.Labels)
	if err != nil {
		return err
	}
	var hidden *train.MissingScores
	if td.Truth != nil {
		if hidden, err = tr.ScoreMissing(td.Truth, ev); err != nil {
			return err
		}
	}
	chain, err := chainReport(tr, seed)
	if err != nil {
		return err
	}
	if err := save(tr); err != nil {
		return err
	}
	if err := writeCurve(dir, tr.Curve); err != nil {
		return err
	}
	if err := writeTrainOutputs(dir, tr, td, ev, figures); err != nil {
		return err
	}
	met := Metrics{Dataset: td.Name, DataFile: src.File, MissingEntries: td.Missing(), Config: cfg,
		Backend: tr.Backend.Name(), Iterations: tr.Iter, SecondsPerIter: tr.SecondsPerIter(), ClippedSteps: tr.ClippedSteps(), Eval: ev,
		Standardized: standardized, Chain: chain, Hidden: hidden}
	runWarnings := trainWarnings(tr.Curve, chain)
	printWarnings(runWarnings)
	met.Warnings = append(slices.Clip(warnings), runWarnings...)
	buf, err := json.MarshalIndent(met, "", "  ")
	if err != nil {
		return fmt.Errorf("metrics.json: %w", err)
	}
	fmt.Println(string(buf))
	return dir.WriteFile("metrics.json", buf)
}

// trainOutputs names the files train writes into --out (patterns for the figures).
var trainOutputs = []string{"checkpoint.gob", "curve.csv", "metrics.json", "latents.csv", "reconstruction.csv",
	"curve.png", "latent_*.png", "ard_*.png"}

// sameFile reports whether paths a and b name the same file (by absolute path).
func sameFile(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// resumeArgs returns train's arguments with --resume ckpt in place of any --resume given.
func resumeArgs(args []string, ckpt string) string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--resume" || a == "-resume" {
			i++
			continue
		}
		if strings.HasPrefix(a, "--resume=") || strings.HasPrefix(a, "-resume=") {
			continue
		}
		out = append(out, a)
	}
	return strings.Join(append(out, "--resume", ckpt), " ")
}

// trainSource checks train's data flags (set: those given) and returns the data source they name,
// before anything is read.
func trainSource(set map[string]bool, standardize bool, dataset, file, labels, pixels string, hide bool, seed uint64) (dataSource, error) {
	switch {
	case file != "" && set["dataset"]:
		return dataSource{}, usagef("--data and --dataset exclude each other")
	case labels != "" && file == "":
		return dataSource{}, usagef("--labels names a column of --data")
	case file != "":
		if set["pixels"] || set["hide-pixels"] {
			return dataSource{}, usagef("--pixels and --hide-pixels apply to --dataset frey or mnist, not --data")
		}
		return dataSource{File: file, Labels: labels, Standardize: standardize}, nil
	case !slices.Contains(data.Names(), dataset):
		return dataSource{}, usagef("--dataset %q: want one of %s", dataset, strings.Join(data.Names(), ", "))
	case !paper.IsImage(dataset):
		if set["pixels"] || set["hide-pixels"] {
			return dataSource{}, usagef("--pixels and --hide-pixels apply to --dataset frey or mnist, not %s", dataset)
		}
		return dataSource{Dataset: dataset, Standardize: standardize}, nil
	case pixels != "unit" && pixels != "raw":
		return dataSource{}, usagef("--pixels %q: want unit or raw", pixels)
	}
	src := dataSource{Dataset: dataset, Standardize: standardize, Pixels: pixels}
	if hide {
		src.HiddenSeed = seed // >= 1, checked by runTrain
	}
	return src, nil
}

// writeTrainOutputs writes latents.csv (the reconstruction latents [N, Q], see train.Evaluate),
// reconstruction.csv (the predictive means [N, D] in the data's units: with missing entries, their
// imputed values) and, with figures, curve.png, latent_<data>_<method>.png and ard_<data>_<method>.png.
func writeTrainOutputs(dir *rundir.Dir, tr *train.Trainer, td *trainingData, ev *train.Evaluation, figures bool) error {
	if err := writeMatrix(dir, "latents.csv", latentHeader(len(ev.Latent[0])), ev.Latent); err != nil {
		return err
	}
	if err := writeMatrix(dir, "reconstruction.csv", columnHeader(td.Dataset), td.toDataUnits(ev.Recon)); err != nil {
		return err
	}
	if !figures {
		return nil
	}
	method := tr.Model.Cfg.Method
	if _, err := paper.SaveCurves(dir.File("curve.png"), td.Name, []plots.Series{{Name: method, Y: tr.Curve}}); err != nil {
		return err
	}
	params, err := tr.Params()
	if err != nil {
		return err
	}
	_, err = paper.LatentFigures(dir.Stage, td.Name, method, params, td.Labels, paper.LabelNames(td.Dataset))
	return err
}

// writeCurve writes curve.csv: the -ELBO per point after each iteration.
func writeCurve(dir *rundir.Dir, curve []float64) error {
	var b strings.Builder
	b.WriteString("iteration,neg_elbo_per_point\n")
	for i, v := range curve {
		fmt.Fprintf(&b, "%d,%.10g\n", i+1, v)
	}
	return dir.WriteFile("curve.csv", []byte(b.String()))
}
