package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/interrupt"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
)

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
	single := fs.Bool("single-latent", false, "predict at the single reconstruction latent (the weighted mean of the particles) instead of the posterior predictive mixture over them")
	exact := fs.Bool("exact", false, "predict with the exact GP conditional on the training rows at their latents (refitted, its noise validated on training rows damaged as the new rows are; infer.json exact_conditional) instead of the sparse GP; seconds to minutes")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ckpt == "" || *dataPath == "" || *out == "" {
		return usagef("--checkpoint, --data and --out are required")
	}
	if *exact && *single {
		return usagef("--exact predicts with the mixture over the particles, --single-latent at one latent: choose one")
	}
	if *iters < 1 || *seed == 0 {
		return usagef("--iters and --seed must be >= 1")
	}
	if !(*lr >= 0) || math.IsInf(*lr, 0) {
		return usagef("--lr %g: want a positive finite learning rate, or 0 for the trained model's", *lr)
	}
	ctx, release := interrupt.ForRun("infer", *out)
	defer release()
	run := experiment.CheckpointRun{Checkpoint: *ckpt, Out: *out, Overwrite: *overwrite, Backend: *backendName, TrainData: *trainData,
		Provenance: experiment.Provenance(append([]string{"infer"}, args...))}
	sum, dir, err := experiment.RunInfer(ctx, run, experiment.InferOptions{Data: *dataPath,
		Options: infer.Options{Iters: *iters, Seed: *seed, LR: *lr, SingleLatent: *single, Exact: *exact}, Warn: printWarning})
	if err != nil {
		return interrupt.Stopped(ctx, "infer", *out, err)
	}
	wrote(dir)
	return printJSON(sum)
}

const trainDataHelp = "where the training file the checkpoint records is now, when it has moved (its sha256 must match the recorded one)"

// printJSON prints v as indented JSON on stdout.
func printJSON(v any) error {
	buf, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println(string(buf))
	return nil
}
