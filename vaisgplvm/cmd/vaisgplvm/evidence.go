package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/evidence"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/memory"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// EvidenceSummary is what evidence prints and writes to DIR/evidence.json: the evidence reference
// at the checkpoint's parameters and the bounds that split the checkpoint's gap to it.
type EvidenceSummary struct {
	Checkpoint string `json:"checkpoint"`
	Method     string `json:"method"` // the checkpoint's bound
	Iterations int    `json:"iterations"`
	Points     int    `json:"points"` // points estimated (the first ones; all by default)
	*evidence.Result
	Bounds []evidence.BoundValue `json:"bounds"` // q0 alone, IWVI, the trained chain (VAIS)
	// ChainVariants are the trained chain at --eta-scales and --chains (evidence.ChainVariants).
	ChainVariants []evidence.BoundValue `json:"chain_variants,omitempty"`
	// Underdamped are the underdamped chain at --dampings (and --eta-scales) and IWVI at the
	// chain's evaluations (evidence.Underdamped).
	Underdamped []evidence.BoundValue `json:"underdamped,omitempty"`
	// Warnings name the bounds above the evidence estimate (evidence.Unconverged) and an estimate
	// its convergence check puts more than --tolerance above its limit (evidence.NotConverged).
	Warnings []string `json:"warnings,omitempty"`
	Seconds  float64  `json:"seconds"`
}

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
	points := fs.Int("points", 0, "estimate the first this many points only (0 = all): faster, but the gaps to the bounds (which cover all points) are then not given")
	draws := fs.Int("draws", 5, "noise draws of each bound evaluated beside the evidence")
	seed := fs.Uint64("seed", 1, "random seed")
	startAt := fs.String("start", "prior", "where the AIS path starts: prior (N(0, I)) or q0 (each point's trained q0: a shorter path, so less bias at the same temperatures; both unbiased)")
	backendName := fs.String("backend", "", backendHelp)
	overwrite := fs.Bool("overwrite", false, "replace an earlier evidence.json in --out")
	trainData := fs.String("train-data", "", trainDataHelp)
	etaScales := fs.String("eta-scales", "", "VAIS checkpoints: also evaluate the trained chain with every eta_k multiplied by each of these factors, e.g. 0.5,2 (chain_variants in evidence.json)")
	chains := fs.String("chains", "", "VAIS checkpoints: also evaluate this many weighted chains per point with the trained eta_k, e.g. 4,16 (chain_variants)")
	dampings := fs.String("dampings", "", "annealed checkpoints: also evaluate the underdamped chain (uha) with the trained schedule and step sizes (x each --eta-scales) at these momentum dampings in [0, 1), e.g. 0,0.5,0.9, and IWVI at the chain's evaluations (underdamped in evidence.json)")
	if err := parse(fs, args); err != nil {
		return err
	}
	scales, counts, err := variantFlags(*etaScales, *chains)
	if err != nil {
		return err
	}
	var damps []float64
	if *dampings != "" {
		if damps, err = parseFloats("dampings", *dampings); err != nil {
			return err
		}
		for _, d := range damps {
			if !(d >= 0 && d < 1) {
				return usagef("--dampings %g: want dampings in [0, 1)", d)
			}
		}
	}
	if *ckpt == "" || *out == "" {
		return usagef("--checkpoint and --out are required")
	}
	if *temps < 1 || *runs < 2 || *points < 0 || *draws < 2 || *draws > train.MaxDraws || *seed == 0 {
		return usagef("--temps and --seed must be >= 1, --runs and --draws >= 2 (for a standard error), --draws <= %d, --points >= 0", train.MaxDraws)
	}
	if *startAt != "prior" && *startAt != "q0" {
		return usagef("--start %q: want prior or q0", *startAt)
	}
	if *checkTemps < -1 || *checkTemps >= *temps || (*checkTemps == 0 && *temps < 2) || !(*tolerance > 0) {
		return usagef("--check-temps must be -1 (no check), 0 (temps/4) or between 1 and --temps - 1, with --temps >= 2 for the check; --tolerance must be > 0")
	}
	if (scales != nil || counts != nil || damps != nil) && !annealedCheckpoint(*ckpt) {
		return usagef("--eta-scales, --chains and --dampings vary an annealed chain; %s has none", *ckpt)
	}
	dir, err := openRunDir(*out, []string{"evidence.json"}, rundir.Options{Run: "evidence", Overwrite: *overwrite,
		Inputs: map[string]string{"--checkpoint": *ckpt, "--train-data": *trainData}})
	if err != nil {
		return err
	}
	defer dir.Close()
	tr, _, err := loadCheckpoint(*ckpt, *backendName, *trainData)
	if err != nil {
		return err
	}
	for _, c := range counts { // refused now, not after the AIS runs
		cfg := tr.Model.Cfg
		cfg.Samples, cfg.Batch = c, 0
		var me *memory.Error
		if err := cfg.CheckMemory(tr.Model.N, tr.Model.D); errors.As(err, &me) {
			return usagef("--chains %d: evaluating that many chains on all %d points needs about %.3g GiB, more than this machine's %.3g GiB; lower --chains",
				c, tr.Model.N, me.Need/(1<<30), me.Have/(1<<30))
		}
	}
	defer exitOnSignal("evidence", *out)()
	o := evidence.Options{Temps: *temps, Runs: *runs, Seed: *seed, CheckTemps: *checkTemps, Start: *startAt}
	n := tr.Model.N
	if *points > 0 {
		n = min(*points, n)
		for i := 0; i < n; i++ {
			o.Points = append(o.Points, i)
		}
	}
	start := time.Now()
	res, err := evidence.Estimate(tr, o)
	if err != nil {
		return err
	}
	bs, err := evidence.Decompose(tr, res, *draws)
	if err != nil {
		return err
	}
	var vs []evidence.BoundValue
	if scales != nil || counts != nil {
		if vs, err = evidence.ChainVariants(tr, res, *draws, scales, counts); err != nil {
			return err
		}
	}
	var us []evidence.BoundValue
	if damps != nil {
		if us, err = evidence.Underdamped(tr, res, *draws, scales, damps); err != nil {
			return err
		}
	}
	warnings := evidence.Unconverged(append(append(bs, vs...), us...))
	if w := evidence.NotConverged(res, *tolerance); w != "" {
		warnings = append(warnings, w)
	}
	sum := EvidenceSummary{Checkpoint: *ckpt, Method: tr.Model.Cfg.Method, Iterations: tr.Iter, Points: n, Result: res,
		Bounds: bs, ChainVariants: vs, Underdamped: us, Warnings: warnings, Seconds: time.Since(start).Seconds()}
	fmt.Fprintf(os.Stderr, "-log evidence per point %.4f ± %.4f (%d points, %d temperatures x %d runs, acceptance %.2f)\n",
		res.NegLogEvidencePerPoint, res.SE, n, *temps, *runs, res.AcceptRate)
	if c := res.Check; c != nil {
		fmt.Fprintf(os.Stderr, "  at %d temperatures %.4f ± %.4f: extrapolated to many temperatures %.4f (remaining bias %.4f)\n",
			c.Temps, c.NegLogEvidencePerPoint, c.SE, c.Extrapolated, c.RemainingBias)
	}
	for _, b := range append(append(bs, vs...), us...) {
		gap := "(gap: estimate every point, --points 0)"
		if b.Gap != nil {
			gap = fmt.Sprintf("gap %.4f ± %.4f", *b.Gap, *b.GapSE)
		}
		fmt.Fprintf(os.Stderr, "  %-70s -ELBO %.4f ± %.4f (KL(q(u))/N %.4f)  %s\n", b.Reference, b.NegELBO, b.SE, b.KLU, gap)
	}
	printWarnings(sum.Warnings)
	buf, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("evidence.json: %w", err)
	}
	fmt.Println(string(buf))
	if err := dir.WriteFile("evidence.json", buf); err != nil {
		return err
	}
	return dir.Commit()
}

// annealedCheckpoint reports whether the checkpoint at path was trained with an annealed bound (an
// unreadable one is reported by loadCheckpoint later).
func annealedCheckpoint(path string) bool {
	cfg, _, err := train.ReadCheckpointInfo(path)
	if err != nil {
		return true
	}
	m, err := bounds.Lookup(cfg.Method)
	return err != nil || m.Annealed()
}

// variantFlags parses --eta-scales and --chains (nil when not given).
func variantFlags(etaScales, chains string) (scales []float64, counts []int, err error) {
	if etaScales != "" {
		if scales, err = parseFactors("eta-scales", etaScales); err != nil {
			return nil, nil, err
		}
	}
	if chains != "" {
		if counts, err = parseCounts("chains", chains); err != nil {
			return nil, nil, err
		}
	}
	return scales, counts, nil
}
