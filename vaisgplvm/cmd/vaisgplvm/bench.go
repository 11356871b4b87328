package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// BenchResult is one method's timing at the paper's settings for one dataset.
type BenchResult struct {
	Method      string  `json:"method"`
	Dataset     string  `json:"dataset"`
	K           int     `json:"k"`
	Batch       int     `json:"batch"`
	StopGrad    bool    `json:"stop_grad,omitempty"` // VAIS without gradients through the chain's scores
	CompileSecs float64 `json:"first_iteration_seconds"`
	MedianSecs  float64 `json:"median_iteration_seconds"`
	MinSecs     float64 `json:"min_iteration_seconds"`
	// HostSecs is the mean time per timed iteration that the step spent on its inputs before its
	// graph ran (train.Trainer.HostSeconds), included in the iteration times: drawing the batch and
	// noise and building the input tensors, or with Prefetch only waiting for the previous step's
	// goroutine to finish them.
	HostSecs float64 `json:"host_seconds_per_iteration"`
	// Prefetch: each step's inputs were prepared on another goroutine while the previous step ran
	// (the default; --prefetch=false builds them in the step).
	Prefetch      bool    `json:"prefetch"`
	Iterations    int     `json:"timed_iterations"`
	Backend       string  `json:"backend"`
	NumCPU        int     `json:"num_cpu"`
	NegELBOAtLast float64 `json:"neg_elbo_per_point_last"`
	// CompiledGraphs counts the training graphs built over all the iterations (1: compiled once).
	CompiledGraphs int `json:"compiled_graphs"`
	// GraphOps and MatMuls count the operations of the training graph, and its matrix products
	// (Dot and DotGeneral).
	GraphOps int `json:"graph_ops"`
	MatMuls  int `json:"matmuls"`
	// Fit says how the expected log-likelihood was evaluated (for the first batch): "projected"
	// (D > M: O(M^2) per latent point, plus O(M D) per point with missing entries; gp.Projected) or
	// "means" ([B, D] predictive means).
	Fit string `json:"fit"`
}

func runBench(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	iters := fs.Int("iters", 5, "timed iterations per method (after one warm-up)")
	backendName := fs.String("backend", "", backendHelp)
	methods := fs.String("methods", strings.Join(model.Methods(), ","), "comma-separated methods to time")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the timed iterations to this file")
	dataset := fs.String("dataset", "oilflow", "oilflow or wine (fully observed), frey or mnist (Table 2's missing-data task: unit pixels, 5% of images lose 75% of their pixels; --k defaults to 25 and --shared-q-sqrt to true there)")
	observed := fs.Bool("observed", false, "frey or mnist without hidden pixels (fully observed, as Table 5 trains)")
	prefetch := fs.Bool("prefetch", true, "prepare each step's inputs (batch, noise, tensors) on another goroutine while the previous step runs; false builds them in the step, so that host_seconds_per_iteration is their whole cost")
	set, err := parseSet(fs, args)
	if err != nil {
		return err
	}
	var list []string
	for _, m := range strings.Split(*methods, ",") {
		if !slices.Contains(model.Methods(), m) {
			return usagef("--methods: unknown method %q (want %s)", m, strings.Join(model.Methods(), ", "))
		}
		list = append(list, m)
	}
	if *iters < 1 {
		return usagef("--iters must be >= 1")
	}
	b, err := openBackend(*backendName, mf.dtype, 1, 1)
	if err != nil {
		return backendUsage(*backendName, err)
	}
	x, mask, err := benchData(*dataset, *observed, &mf, set)
	if err != nil {
		return err
	}
	if mf.q == 0 {
		mf.q = paper.Q(*dataset)
	}
	if err := mf.fitToData(set, len(x), len(x[0])); err != nil {
		return err
	}
	var results []BenchResult
	var prof *os.File
	if *cpuProfile != "" {
		// A new file only: a run never replaces a file it did not write.
		if prof, err = os.OpenFile(*cpuProfile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); errors.Is(err, iofs.ErrExist) {
			return usagef("--cpuprofile %s exists: give the name of a new file", *cpuProfile)
		} else if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer prof.Close()
	}
	for _, method := range list {
		mf.boundDefaults(set, method)
		if data.IsImage(*dataset) {
			mf.imageDefaults(set, method, *dataset)
		}
		cfg, err := mf.config(method, *dataset, 1)
		if err != nil {
			return err
		}
		m, err := model.New(cfg, x, mask)
		if err != nil {
			return err
		}
		tr := train.New(m, b)
		tr.NoPrefetch = !*prefetch
		var profiling bool
		startProfile := func() error { // after the warm-up: compilation stays out of the profile
			if prof == nil {
				return nil
			}
			if err := pprof.StartCPUProfile(prof); err != nil {
				return fmt.Errorf("--cpuprofile: %w", err)
			}
			profiling = true
			return nil
		}
		first, times, host, err := paper.TimeSteps(tr, *iters, startProfile)
		if profiling {
			pprof.StopCPUProfile()
			prof = nil // one profile per file: the first method's
		}
		if err != nil {
			return err
		}
		r := BenchResult{Method: method, Dataset: *dataset, K: cfg.K, Batch: m.BatchSize(), StopGrad: cfg.StopGrad && annealed(method), CompileSecs: first,
			MedianSecs: times[len(times)/2], MinSecs: times[0], HostSecs: host, Prefetch: *prefetch,
			Iterations: *iters, Backend: b.Name(), NumCPU: runtime.NumCPU(), NegELBOAtLast: tr.Curve[len(tr.Curve)-1]}
		r.CompiledGraphs = tr.CompiledGraphs()
		r.GraphOps, r.MatMuls = tr.GraphOps()
		r.Fit = "means"
		if _, maskRows, _, _, _ := train.Inputs(m, cfg.Seed, 0); m.UsesProjectedFit(r.Batch, len(maskRows)) {
			r.Fit = "projected"
		}
		results = append(results, r)
	}
	buf, _ := json.MarshalIndent(results, "", "  ")
	fmt.Println(string(buf))
	return nil
}

// benchData loads the benchmark's data: a tabular dataset as is (mask nil), or an image dataset
// with Table 2's hidden pixels (none when observed). The per-method defaults (the bound's own, then
// the image presets: K 25, shared q(u) root, VAIS's stop-gradient chain on frey) are set per
// method before each configuration.
func benchData(name string, observed bool, mf *modelFlags, set map[string]bool) (x, mask [][]float64, err error) {
	b, err := data.Lookup(name)
	if err != nil {
		return nil, nil, usagef("--dataset: %v", err)
	}
	if !b.Image {
		if observed {
			return nil, nil, usagef("--observed is for the image datasets (%s has no hidden entries)", name)
		}
		ds, err := paper.LoadTabular(name, mf.standardize)
		if err != nil {
			return nil, nil, err
		}
		return ds.X, nil, nil
	}
	ds, err := b.Load(data.Unit)
	if err != nil {
		return nil, nil, err
	}
	if observed {
		return ds.X, nil, nil
	}
	x, mask, _, err = paper.HidePixels(ds.X, 1)
	return x, mask, err
}
