package main

import (
	"flag"
	"os"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/interrupt"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/progress"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/evidence"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
)

// runEvidence estimates the local evidence of a checkpoint (package evidence) and its bounds' gaps
// to it.
func runEvidence(args []string) error {
	fs := flag.NewFlagSet("evidence", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "", "checkpoint written by train (required)")
	out := fs.String("out", "", "output directory for evidence.json (required)")
	temps := fs.Int("temps", 1000, "AIS temperatures")
	runs := fs.Int("runs", 8, "independent AIS runs per point")
	checkTemps := fs.Int("check-temps", 0, "temperatures of the convergence check, an independent estimate whose shift extrapolates the AIS bias (0 = temps/4, costing a quarter more; -1 = no check)")
	tolerance := fs.Float64("tolerance", 0.05, "warn when the convergence check puts the estimate more than this many nats per point above its limit")
	points := fs.Int("points", 0, "estimate the first this many points only (0 = all): faster; the gaps are then those on these points")
	sample := fs.Int("sample", 0, "estimate a random sample of this many points, drawn with --seed (0 = off): the gaps on them estimate the all-point gaps, their s.e. including the sampling's; cost falls with the sample")
	damaged := fs.Bool("damaged", false, "estimate the points with missing entries only (the damaged images of Tables 2 and 3) instead of --points")
	essK := fs.Int("ess", 0, "pair each estimated point's ESS of this many importance weights (Table 3: the model's K) with its gap to the evidence, for the method's own weights and for samples of q0 (ess_gap in evidence.json, ess_gap.csv, ess_gap.png, ess_hist.png; 0 = off)")
	noFigures := fs.Bool("no-figures", false, "with --ess: do not write the PNG figures")
	draws := fs.Int("draws", 5, "noise draws of each bound evaluated beside the evidence")
	seed := fs.Uint64("seed", 1, "random seed")
	startAt := fs.String("start", "prior", "where the AIS path starts: prior (N(0, I)) or q0 (each point's trained q0: a shorter path, so less bias at the same temperatures; both unbiased)")
	backendName := fs.String("backend", "", backendHelp)
	overwrite := fs.Bool("overwrite", false, "replace an earlier evidence.json in --out")
	trainData := fs.String("train-data", "", trainDataHelp)
	var opt experiment.EvidenceOptions
	fs.Var(option.Floats{List: &opt.EtaScales, Positive: true}, "eta-scales", "VAIS checkpoints: also evaluate the trained chain with every eta_k multiplied by each of these factors, e.g. 0.5,2 (chain_variants in evidence.json)")
	fs.Var((*option.Ints)(&opt.IWVIKs), "iwvi-k", "also evaluate IWVI at the checkpoint's q0 with each of these numbers of samples, e.g. 80 (the K whose seconds per iteration equal the checkpoint's bound's, from bench; iwvi_at_k in evidence.json)")
	fs.Var((*option.Ints)(&opt.Chains), "chains", "VAIS checkpoints: also evaluate this many weighted chains per point with the trained eta_k, e.g. 4,16 (chain_variants)")
	fs.Var((*option.Ints)(&opt.Resample), "resample", "annealed checkpoints: also evaluate the trained chain as this many chains per point that resample across each other when their ESS falls below --resample-ess of them (the smc bound), e.g. 4,16, each beside IWVI at the same likelihood evaluations (resampled in evidence.json)")
	fs.Float64Var(&opt.ResampleESS, "resample-ess", bounds.DefaultESSThreshold, "with --resample: the ESS share below which chains resample, in (0, 1]")
	fs.IntVar(&opt.LearnBackward, "learn-backward", 0, "annealed checkpoints: fit a learned backward kernel (the mcd bound's network) for this many Adam steps at the checkpoint's parameters, all frozen, and evaluate the chain with it (learned_backward in evidence.json; 0 = off)")
	fs.Var((*option.Ints)(&opt.AdjustedSteps), "adjusted-steps", "also evaluate, at the checkpoint's q0, a Metropolis-adjusted annealed chain (MALA, no backward kernel) with each of these numbers of equal steps, e.g. 5,20: what an annealed chain of that many steps gives without the Langevin weights' mismatch (adjusted_chain in evidence.json)")
	fs.Var(option.Floats{List: &opt.Dampings}, "dampings", "annealed checkpoints: also evaluate the underdamped chain (uha) with the trained schedule and step sizes (x each --eta-scales) at these momentum dampings in [0, 1), e.g. 0,0.5,0.9, and IWVI at the chain's evaluations (underdamped in evidence.json)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ckpt == "" || *out == "" {
		return usagef("--checkpoint and --out are required")
	}
	opt.Points, opt.Sample, opt.Damaged, opt.ESSK, opt.Draws, opt.Tolerance = *points, *sample, *damaged, *essK, *draws, *tolerance
	opt.Options = evidence.Options{Temps: *temps, Runs: *runs, Seed: *seed, CheckTemps: *checkTemps, Start: *startAt,
		Progress: progress.AIS(os.Stderr, 10*time.Second)}
	if err := opt.Check(); err != nil {
		return err
	}
	ctx, release := interrupt.ForRun("evidence", *out)
	defer release()
	run := experiment.CheckpointRun{Checkpoint: *ckpt, Out: *out, Overwrite: *overwrite, Backend: *backendName, TrainData: *trainData,
		Provenance: experiment.Provenance(append([]string{"evidence"}, args...))}
	sum, dir, err := experiment.RunEvidence(ctx, run, opt, !*noFigures)
	if err != nil {
		return interrupt.Stopped(ctx, "evidence", *out, err)
	}
	printWarnings(sum.Warnings)
	wrote(dir)
	return printJSON(sum)
}
