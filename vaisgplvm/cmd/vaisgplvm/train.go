package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/interrupt"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/progress"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

func runTrain(args []string) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	fs.Lookup("batch").Usage += "; train's default: 100 when the data has more than 100 points, as reproduce's tables (0 here: full batch)"
	dataset := fs.String("dataset", "oilflow", "dataset: "+data.Describe()+", with Table 4's settings; the image sets train on Table 2's task: mini-batches of 100, K 25, one shared q(u) root, hidden pixels (see --hide-pixels), and for VAIS on frey --stop-grad (ours; --stop-grad=false for the paper's gradient)")
	file := fs.String("data", "", "train on your own data instead of --dataset: a delimited file (comma, semicolon or tab) with a header line and one row per point; empty, NaN, NA or ? fields are missing and left out of the likelihood")
	labels := fs.String("labels", "", "with --data: the header name of a class-label column (not a feature), used for the latent plot's colours and the 1-NN error")
	pixels := fs.String("pixels", "unit", "frey, mnist: pixel scale, unit ([0, 1]) or raw (0-255)")
	hide := fs.Bool("hide-pixels", true, "frey, mnist: hide 75% of the pixels of 5% of the images (Table 2's protocol, drawn with --seed) and score the model's reconstruction of them in metrics.json")
	method := fs.String("method", "vais", "bound: "+strings.Join(model.Methods(), ", "))
	iters := fs.Int("iters", 3000, "Adam training iterations; with --data and no --iters (nor --batch or --checkpoint-every), a fully observed file is fitted to convergence instead (--converge, capped at 30 minutes)")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("out", "", "output directory (required)")
	resume := fs.String("resume", "", "checkpoint to resume from: a file, or a run directory (its unfinished run's checkpoint.partial.gob when there is one, else its checkpoint.gob); --iters is the total, counting the checkpoint's iterations")
	every := fs.Int("checkpoint-every", 500, "write the checkpoint every N iterations")
	backendName := fs.String("backend", "", backendHelp)
	quiet := fs.Bool("quiet", false, "no progress bar")
	noFigures := fs.Bool("no-figures", false, "do not write the PNG figures")
	single := fs.Bool("single-latent", false, "reconstruction.csv from the prediction at the single reconstruction latent (the weighted mean of the particles, as the paper reconstructs) instead of the posterior predictive mixture over the particles (metrics.json has the scores of both)")
	exact := fs.Bool("exact", false, "frey, mnist: also score the hidden pixels under the exact GP conditional on the complete images, at the trained hyperparameters and refitted with a validated noise (metrics.json hidden_pixels_exact, hidden_pixels_exact_refit; tens of seconds to minutes)")
	validatePPCA := fs.Bool("validate-ppca", false, "frey, mnist: add PPCA with its number of components chosen on validation rows to the hidden pixels' baselines (metrics.json hidden_pixels_baselines.validated_ppca; two to three minutes on Frey or MNIST on 2 cores)")
	var cf convergeFlags
	cf.register(fs, "fit to the optimum instead of for --iters Adam steps: L-BFGS on the collapsed mean-field bound, full batch, until it rises by at most --converge-tol nats per point over --converge-window iterations; other methods then continue with Adam on their own bound from a tenth of --lr (at most 1e-4) with eta_k held fixed, halving its step at each plateau of 200-iteration means, converged at the plateau after 4 halvings (metrics.json: convergence). With --batch B (frey, mnist: 100 unless given), missing entries or a kernel other than se: Adam alone from the start, at --lr, until that rule holds on means over whole epochs", 0)
	convFrom := fs.String("converge-from", "", "with --converge and a method other than mf: start from this checkpoint of a converged fit on the same data (train --converge --method mf) instead of fitting the mean-field start again")
	overwrite := fs.Bool("overwrite", false, "replace the outputs of an earlier run in --out (without it such a directory is refused, unless --resume continues its checkpoint)")
	set, err := parseSet(fs, args)
	if err != nil {
		return err
	}
	if *iters < 1 || *every < 1 || *seed < 1 {
		return usagef("--iters, --checkpoint-every and --seed must be >= 1")
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	explicit := func(field string) bool { return set[flagName(field)] }
	flagSource := func() (experiment.Source, error) {
		return experiment.NewSource(experiment.SourceOptions{Dataset: *dataset, File: *file, Labels: *labels, Pixels: *pixels,
			HidePixels: *hide, Standardize: mf.standardize, Seed: *seed}, explicit)
	}
	run := experiment.TrainRun{Out: *out, Overwrite: *overwrite, Backend: *backendName, TrainOptions: experiment.TrainOptions{
		Iters: *iters, CheckpointEvery: *every, Figures: !*noFigures, SingleLatent: *single, Exact: *exact, ValidatePPCA: *validatePPCA, ConvergeFrom: *convFrom}}
	if err := cf.check(set); err != nil {
		return err
	}
	if cf.on {
		if set["iters"] || set["checkpoint-every"] {
			return usagef("--converge runs until the bound has converged: leave out --iters and --checkpoint-every (--max-seconds caps it)")
		}
		if !set["batch"] { // full batch (L-BFGS, then Adam); the image sets keep mini-batches (Adam alone)
			mf.v.Batch, set["batch"] = 0, true
			if *file == "" && data.IsImage(*dataset) {
				mf.v.Batch = protocol.DefaultBatch
			}
		}
		run.Converge, run.ConvergeAdam.Rule.Halvings = cf.options(cf.maxSeconds, *quiet), cf.halvings
	}
	if *convFrom != "" && *method == "mf" {
		return usagef("--converge-from starts another bound from a converged fit; --method mf fits that start itself")
	}
	if *resume != "" {
		if *resume, err = experiment.ResumeFile(*resume); err != nil {
			return err
		}
		r := experiment.ResumeRequest{Source: flagSource, Configure: func(c *model.Config) error { return mf.apply(c, set) },
			SourceGiven: slices.ContainsFunc([]string{"data", "dataset", "labels", "pixels", "hide-pixels", "standardize"}, func(f string) bool { return set[f] })}
		if set["method"] {
			r.Method = *method
		}
		if set["seed"] {
			r.Seed = *seed
		}
		if run.Source, run.Config, err = experiment.ResumeSettings(*resume, r); err != nil {
			return err
		}
		run.Resume = *resume
		return trainRun(args, run, set, &mf, *quiet)
	}
	if run.Source, err = flagSource(); err != nil {
		return err
	}
	if err := mf.checkGiven(set, *method); err != nil {
		return err
	}
	if mf.pointEta && !annealed(*method) {
		return usagef("--point-eta adapts the annealed chain's step sizes; --method %s has none", *method)
	}
	// Every flag is checked before any data is read (protocol.Training without the data's size).
	if run.Config, _, err = protocol.Training(*method, run.Source.Dataset, *seed, 0, 0, mf.configure(set), mf.explicit(set)); err != nil {
		return err
	}
	if *file != "" && run.Converge == nil && !set["iters"] && !set["checkpoint-every"] && !set["batch"] {
		// Your own file is fitted to convergence unless --iters asks for Adam steps (issue 73),
		// when the data allow it: RunTrain decides once it has read them.
		run.Converge, run.ConvergeIfAllowed = cf.options(experiment.DefaultMaxSeconds, *quiet), true
	}
	return trainRun(args, run, set, &mf, *quiet)
}

// trainRun maps the remaining flags to r and runs it (experiment.RunTrain): a new run of r.Config
// fitted to the data's sizes by the flags given (set), or, with r.Resume, the checkpoint's run.
func trainRun(args []string, r experiment.TrainRun, set map[string]bool, mf *modelFlags, quiet bool) error {
	r.Fit = func(cfg model.Config, n, d int, converging bool) (model.Config, error) {
		if converging && !set["batch"] {
			mf.v.Batch, set["batch"] = 0, true // full batch
		}
		cfg, notes, err := protocol.Training(cfg.Method, r.Source.Dataset, cfg.Seed, n, d, mf.configure(set), mf.explicit(set))
		for _, a := range notes {
			fmt.Fprintln(os.Stderr, "vaisgplvm: "+a.Say(flagFor))
		}
		if err == nil && converging && cfg.AdaptEta && !set["adapt-eta"] {
			cfg.AdaptEta = false // adapting eta is not an ascent on the bound (docs/options.md, --converge)
			fmt.Fprintln(os.Stderr, "vaisgplvm: --converge holds eta_k fixed while the bound converges (--adapt-eta to adapt it anyway)")
		}
		return cfg, err
	}
	o := &r.TrainOptions
	o.Seed, o.Provenance, o.Warn = r.Config.Seed, experiment.Provenance(append([]string{"train"}, args...)), printWarning
	if !quiet {
		o.Observe = progress.Trainings(os.Stderr)
	}
	stop := interrupt.Notify()
	defer stop.Release()
	o.Finishing = func() { stop.SetPhase("training is over: finishing the final evaluation and writing the outputs") }
	met, dir, err := experiment.RunTrain(stop.Context(), r)
	if errors.Is(err, train.ErrInterrupted) {
		ckpt := dir.Final(experiment.PartialCheckpoint)
		return interrupt.Error{Msg: fmt.Sprintf("%v; resume with: vaisgplvm train %s", err, experiment.ResumeArgs(args, ckpt))}
	}
	if err != nil {
		return err
	}
	wrote(dir)
	return printJSON(met)
}
