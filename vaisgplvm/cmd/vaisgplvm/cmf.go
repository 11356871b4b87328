package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/interrupt"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/progress"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/cmf"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
)

// runCMF trains GP-LVM-CMF and its baselines on frey or mnist and compares them on held-out
// points (package cmf, Experiment).
func runCMF(args []string) error {
	fs := flag.NewFlagSet("cmf", flag.ContinueOnError)
	var o cmf.ExperimentOptions
	c := &o.Config
	fs.StringVar(&o.Dataset, "dataset", "frey", "frey (Gaussian decoder, pixels in [0, 1]) or mnist (the 10k test images binarised at 127, Bernoulli decoder)")
	families := fs.String("families", strings.Join(cmf.Families, ","), "comma-separated families: cmf (GP-LVM-CMF), meanfield (q(z_i) per point), amortised (VAE encoder)")
	fs.IntVar(&c.LatentDim, "latent-dim", 5, "dimensions of z")
	fs.IntVar(&c.InputDim, "input-dim", 0, "cmf: dimensions of the GP inputs X (0: --latent-dim)")
	fs.IntVar(&c.M, "m", 50, "cmf: inducing inputs")
	fs.IntVar(&c.Hidden, "hidden", 0, "decoder hidden width (0: 200 for frey, 500 for mnist)")
	fs.IntVar(&c.AuxHidden, "aux-hidden", 100, "hidden width of r(X | z) (cmf) and of the encoder (amortised)")
	fs.StringVar(&c.TermB, "term-b", "closed", "cmf: term B in closed form (psi statistics) or mc")
	fs.StringVar(&c.Bound, "bound", "collapsed", "cmf: collapsed (u and f integrated out given X: the GP's spread is credited in q(z | X)'s entropy) or auxiliary (the derivation's bound, u and f sampled)")
	fs.BoolVar(&c.PointVar, "point-var", false, "cmf: a diagonal variance s_i^2 of q(z | .) per point (the family then contains per-point mean-field) instead of one shared s^2")
	fs.IntVar(&c.Samples, "samples", 1, "noise draws per step")
	fs.IntVar(&c.Batch, "batch", 100, "points per step")
	fs.Float64Var(&c.LR, "lr", 1e-3, "Adam learning rate (without --lr-sweep)")
	fs.Var(option.Floats{List: &o.LRs, Positive: true}, "lr-sweep", "comma-separated Adam learning rates, e.g. 3e-4,1e-3,3e-3: each family trains at each on the training points less --validation, and keeps the rate of the highest validation bound, extending the grid past a winning end by its own ratio up to 3 times (one rule for every family; --lr is then not used)")
	fs.IntVar(&o.SweepIters, "sweep-iters", 0, "training steps of each --lr-sweep run (0: --iters)")
	fs.Float64Var(&o.Validation, "validation", 0.1, "share of the training points --lr-sweep holds out for validation, in (0, 0.5]")
	fs.StringVar(&c.DType, "dtype", "float64", "float64 (cmf has no float32 yet)")
	seed := fs.Uint64("seed", 1, "random seed (initialisation, held-out split, mini-batches, noise)")
	fs.IntVar(&o.Iters, "iters", 2000, "training steps per family")
	fs.BoolVar(&o.WarmStart, "warm-start", true, "start cmf from the trained mean-field family (its decoder, means and variances): cmf then trains --iters steps after mean-field's; on by default whenever --families has cmf and meanfield and --input-dim equals --latent-dim (cmf.CanWarmStart), the setting docs/results.md measures ahead of mean-field; --warm-start=false trains cmf from scratch")
	fs.BoolVar(&o.FreezeDecoder, "freeze-decoder", false, "with --warm-start: keep cmf's decoder at mean-field's and fit only its q (the family as a posterior approximation at the same decoder)")
	fs.IntVar(&o.Test, "test", 0, "held-out points (0: 200 for frey, 1000 for mnist)")
	fs.IntVar(&o.FitIters, "fit-iters", 500, "steps fitting the held-out points' local parameters (globals frozen)")
	fs.IntVar(&o.Draws, "draws", 10, "noise draws of each bound (>= 2)")
	o.Ks, o.MarginalKs = []int{1, 10, 100, 1000}, []int{10, 100}
	fs.Var((*option.Ints)(&o.Ks), "ks", "importance samples of the held-out importance-weighted bounds")
	fs.Var((*option.Ints)(&o.MarginalKs), "marginal-ks", "cmf (collapsed bound): samples of r(X | z) of the held-out marginal bounds L_K (L_0 is the bound; the rise with K is what r(X | z) costs)")
	fs.IntVar(&o.Reps, "reps", 2, "repetitions of each importance-weighted bound (>= 2)")
	fs.IntVar(&o.AIS.Temps, "ais-temps", 500, "AIS temperatures of the decoder log-likelihood")
	fs.IntVar(&o.AIS.Runs, "ais-runs", 4, "independent AIS runs per point (>= 2)")
	fs.IntVar(&o.AISPoints, "ais-points", 0, "held-out points whose log-likelihood AIS estimates, the first ones (0: 100, or all held-out points when fewer)")
	out := fs.String("out", "", "output directory (default out/cmf-DATASET)")
	backendName := fs.String("backend", "", backendHelp)
	overwrite := fs.Bool("overwrite", false, "replace the outputs of an earlier cmf run in --out")
	quiet := fs.Bool("quiet", false, "no progress bar")
	noFigures := fs.Bool("no-figures", false, "do not write the PNG figures")
	set, err := parseSet(fs, args)
	if err != nil {
		return err
	}
	if *seed < 1 {
		return usagef("--seed must be >= 1")
	}
	c.Seed, o.AIS.Seed = *seed, *seed
	o.Families = strings.Split(*families, ",")
	if !set["warm-start"] {
		o.WarmStart = cmf.CanWarmStart(o)
	}
	if err := o.CheckGiven(func(field string) bool { return set[flagName(field)] }); err != nil {
		return err
	}
	if err := o.Check(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !*quiet {
		o.Progress = progress.Families(os.Stderr, o.Iters, cmp.Or(o.SweepIters, o.Iters))
	}
	res, dir, err := experiment.RunCMF(ctx, experiment.CMFRun{Options: o, Out: *out, Overwrite: *overwrite, BackendSpec: *backendName,
		Figures: !*noFigures, Provenance: experiment.Provenance(append([]string{"cmf"}, args...))})
	if err != nil && ctx.Err() != nil {
		return interrupt.Error{Msg: err.Error()}
	}
	if err != nil {
		return err
	}
	fmt.Print(res.Markdown())
	printWarnings(res.Warnings())
	wrote(dir)
	return nil
}
