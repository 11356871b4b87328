package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Row is one line of Table 1: a dataset, a method and an iteration count, with each metric's
// mean and two standard errors over the runs, and each run's own values in PerRun.
type Row struct {
	Dataset    string      `json:"dataset"`
	Method     string      `json:"method"`
	Iterations int         `json:"iterations"`
	Runs       int         `json:"runs"`
	NegELBO    [2]float64  `json:"neg_elbo_per_point"` // mean, 2 s.e.
	MSE        [2]float64  `json:"mse"`
	NELL       [2]float64  `json:"nell_per_point"`
	OneNNError *[2]float64 `json:"one_nn_error,omitempty"` // nil without labels
	SecPerIter float64     `json:"seconds_per_iteration"`
	// ESS and weight entropy of K weights per damaged image (table 3 only).
	ESS     *[2]float64 `json:"ess,omitempty"`
	Entropy *[2]float64 `json:"weight_entropy,omitempty"`
	// PerRun holds every run's values, in seed order, so that methods can be compared seed by
	// seed (run r of every method uses seed r: the same noise for the data's hidden pixels).
	PerRun []RunResult `json:"per_run"`
}

// RunResult is one run's values in a Row: its seed and the metrics in the Row's units.
type RunResult struct {
	Seed       uint64   `json:"seed"`
	NegELBO    float64  `json:"neg_elbo_per_point"`
	MSE        float64  `json:"mse"`
	NELL       float64  `json:"nell_per_point"`
	OneNNError *float64 `json:"one_nn_error,omitempty"`
	ESS        *float64 `json:"ess,omitempty"`
	Entropy    *float64 `json:"weight_entropy,omitempty"`
}

// Table1 is the JSON written by reproduce --table 1.
type Table1 struct {
	Settings map[string]any `json:"settings"`
	Rows     []Row          `json:"rows"`
}

func runReproduce(args []string) error {
	switch tableOf(args) {
	case "5":
		return runTable5(args)
	case "6":
		return runTable6(args)
	}
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	table := fs.Int("table", 1, "paper table to reproduce: 1 (oilflow, wine) or 2 (missing pixels of Frey and MNIST)")
	pixels := fs.String("pixels", "unit", "table 2 pixel scale: unit ([0, 1]) or raw (0-255)")
	runs := fs.Int("runs", 1, "seeds per cell (the paper: 10)")
	iters := fs.Int("iters", 3000, "iterations of the last column; rows at 1/3, 2/3 and all of them")
	paper := fs.Bool("paper", false, "the paper's protocol: 3000 iterations, 10 runs, full batch")
	datasets := fs.String("datasets", "oilflow,wine", "comma-separated datasets (table 2: frey,mnist)")
	methods := fs.String("methods", "mf,iwvi,vais", "comma-separated methods")
	out := fs.String("out", "out/table1", "directory for tableN.md and tableN.json (default out/tableN)")
	backendName := fs.String("backend", "", backendHelp)
	jobs := fs.Int("jobs", runtime.NumCPU(), "trainings run at the same time (results do not depend on it)")
	noFigures := fs.Bool("no-figures", false, "do not write the PNG figures")
	file := fs.String("data", "", "table 1 on your own data instead of --datasets: a delimited file as for train --data (missing entries masked)")
	labels := fs.String("labels", "", "with --data: the header name of a class-label column")
	mf.setDefaultBatch(fs, 100)
	set, err := parseSet(fs, args)
	if err != nil {
		return err
	}
	allowed := []string{"oilflow", "wine"}
	var own *trainingData // --data
	var ownSrc dataSource
	if *labels != "" && *file == "" {
		return usagef("--labels names a column of --data")
	}
	switch *table {
	case 1:
		if *paper {
			*iters, *runs, mf.batch = 3000, 10, 0
		}
		switch {
		case *file != "" && set["datasets"]:
			return usagef("--data and --datasets exclude each other")
		case *file != "":
			if ownSrc, own, err = mf.loadOwn(*file, *labels); err != nil {
				return err
			}
			*datasets, allowed = own.Name, []string{own.Name}
			if !set["out"] {
				*out = filepath.Join("out", "table1-"+own.Name)
			}
		}
	case 2, 3:
		if *file != "" {
			return usagef("--data works with --table 1")
		}
		// Table 4's settings for the image data: K = 25; the stochastic variant (batch 100) in both
		// sizes; one q(u) square root shared by the outputs (D = 560, 784) unless set.
		// Table 3 scores the weights of IWVI and VAIS on the Frey reconstruction task.
		allowed = []string{"frey", "mnist"}
		defaults := map[string]func(){
			"datasets": func() { *datasets = "frey,mnist" }, "iters": func() { *iters = 300 },
			"out": func() { *out = fmt.Sprintf("out/table%d", *table) },
		}
		mf.imageDefaults(set)
		if *table == 3 {
			defaults["datasets"] = func() { *datasets = "frey" }
			defaults["methods"] = func() { *methods = "iwvi,vais" }
		}
		for name, apply := range defaults {
			if !set[name] {
				apply()
			}
		}
		if *paper {
			*iters, *runs = 3000, 10
		}
		if *pixels != "unit" && *pixels != "raw" {
			return usagef("--pixels %q: want unit or raw", *pixels)
		}
	default:
		return usagef("--table %d: the paper has tables 1, 2, 3, 5 and 6 (4 lists settings)", *table)
	}
	if *runs < 1 || *iters < 3 || *jobs < 1 {
		return usagef("--runs and --jobs must be >= 1 and --iters >= 3")
	}
	for _, d := range strings.Split(*datasets, ",") {
		if !slices.Contains(allowed, d) {
			return usagef("--datasets: unknown dataset %q for table %d (want %s)", d, *table, strings.Join(allowed, ", "))
		}
	}
	for _, m := range strings.Split(*methods, ",") {
		if !slices.Contains(model.Methods, m) {
			return usagef("--methods: unknown method %q (want %s)", m, strings.Join(model.Methods, ", "))
		}
		if _, err := mf.config(m, allowed[0], 1); err != nil {
			return err
		}
	}
	dir, err := openTableDir(*out, *table)
	if err != nil {
		return err
	}
	defer dir.Close()
	trainings := len(strings.Split(*datasets, ",")) * len(strings.Split(*methods, ",")) * *runs
	b, err := openBackend(*backendName, mf.dtype, *jobs, trainings)
	if err != nil {
		return backendUsage(*backendName, err)
	}
	snaps := []int{*iters / 3, 2 * *iters / 3, *iters}
	res := Table1{Settings: map[string]any{"iters": *iters, "runs": *runs, "batch": mf.batch, "backend": b.Name(),
		"k": mf.k, "m": mf.m, "eta": mf.etaSetting(), "lr": mf.lr, "standardized": mf.standardize,
		"precondition": mf.precondition, "schedule": mf.schedule, "parallel_jobs": *jobs, "table": *table,
		"shared_q_sqrt": mf.sharedQSqrt}}
	mf.recordOptions(res.Settings)
	if own != nil {
		res.Settings["data_file"], res.Settings["missing_entries"] = ownSrc.File, own.Missing()
	}
	if *table == 3 && strings.Contains(*methods, "mf") {
		return usagef("--methods: table 3 compares the weights of iwvi and vais; mf has none")
	}
	if *table >= 2 {
		res.Settings["pixels"] = *pixels
		res.Settings["missing"] = "5% of images (seeded by the run) lose 75% of their pixels"
		res.Settings["eval"] = "bound: 1 noise draw; VAIS reconstruction latent: 4 weighted chains per image"
	}
	var list []job
	sets := map[string]*data.Dataset{}
	for _, dsName := range strings.Split(*datasets, ",") {
		var ds *data.Dataset
		switch {
		case own != nil:
			ds = own.Dataset
		case *table >= 2:
			ds, err = loadImages(dsName, *pixels)
		default:
			ds, err = loadData(dsName, mf.standardize)
		}
		if err != nil {
			return err
		}
		sets[dsName] = ds
		for _, method := range strings.Split(*methods, ",") {
			for r := 0; r < *runs; r++ {
				list = append(list, job{dataset: dsName, method: method, seed: uint64(r + 1)})
			}
		}
	}
	start := time.Now()
	var progress io.Writer
	if *jobs == 1 {
		progress = os.Stderr
	}
	if err := runJobs(list, *jobs, func(j *job) string { return j.method }, func(j *job) error {
		cfg, err := mf.config(j.method, j.dataset, j.seed)
		if err != nil {
			return err
		}
		ds := sets[j.dataset]
		x, mask := ds.X, ds.Mask // your own data may have missing entries
		var damaged []int
		if *table >= 2 {
			if x, mask, damaged, err = hidePixels(ds.X, j.seed); err != nil {
				return err
			}
		}
		m, err := model.New(cfg, x, mask)
		if err != nil {
			return err
		}
		tr := train.New(m, b)
		draws := 3
		if *table >= 2 { // full-data evaluation of K = 25 chains over ~2000 images dominates otherwise
			draws, tr.ReconChains = 1, 4
		}
		for _, it := range snaps {
			if err := tr.Run(it, progress, 0, nil); err != nil {
				return fmt.Errorf("%s %s seed %d: %w", j.dataset, j.method, j.seed, err)
			}
			ev, err := tr.Evaluate(draws, ds.Labels)
			if err != nil {
				return err
			}
			if damaged != nil { // tables 2, 3: score the hidden pixels against their true values
				sc, err := tr.ScoreMissing(ds.X, ev)
				if err != nil {
					return err
				}
				ev.MSE, ev.NELL = sc.MSE, sc.NELL // the table's columns: scores of the hidden pixels
			}
			j.evals = append(j.evals, ev)
			if *table == 3 {
				w, err := tr.Weights(damaged, mf.k, j.seed)
				if err != nil {
					return err
				}
				j.weights = append(j.weights, w)
			}
		}
		j.secs = tr.SecondsPerIter()
		if j.seed == 1 && !*noFigures {
			last := j.evals[len(j.evals)-1]
			params, err := tr.Params()
			if err != nil {
				return err
			}
			j.art = &artefacts{curve: tr.Curve, params: params, recon: last.Recon, mask: mask, damaged: damaged}
			if *table == 3 {
				j.art.ess = j.weights[len(j.weights)-1].PerPointESS
			}
		}
		fmt.Fprintf(os.Stderr, "%s %s seed %d done (%.0f s elapsed)\n", j.dataset, j.method, j.seed, time.Since(start).Seconds())
		return nil
	}); err != nil {
		return err
	}
	for i := 0; i < len(list); i += *runs {
		cell := list[i : i+*runs]
		for s, it := range snaps {
			var evs []*train.Evaluation
			var seeds []uint64
			secs := 0.0
			for _, j := range cell {
				evs, seeds = append(evs, j.evals[s]), append(seeds, j.seed)
				secs += j.secs / float64(len(cell))
			}
			row := summarise(cell[0].dataset, cell[0].method, it, evs, seeds, secs)
			if *table == 3 {
				var ess, ent []float64
				for r, j := range cell {
					w := j.weights[s]
					ess, ent = append(ess, w.ESS), append(ent, w.Entropy)
					row.PerRun[r].ESS, row.PerRun[r].Entropy = &w.ESS, &w.Entropy
				}
				m, se := metrics.MeanAndTwoSE(ess)
				row.ESS = &[2]float64{m, se}
				m, se = metrics.MeanAndTwoSE(ent)
				row.Entropy = &[2]float64{m, se}
			}
			res.Rows = append(res.Rows, row)
		}
	}
	md := markdown(res, *table)
	fmt.Print(md)
	if !*noFigures {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		files, err := writeFigures(*out, *table, list, sets)
		if err != nil {
			return fmt.Errorf("figures: %w", err)
		}
		fmt.Fprintf(os.Stderr, "figures: %s\n", strings.Join(files, " "))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	buf, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("table JSON: %w", err)
	}
	fmt.Println(string(buf))
	name := fmt.Sprintf("table%d", *table)
	if err := os.WriteFile(filepath.Join(*out, name+".json"), buf, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*out, name+".md"), []byte(md), 0o644)
}

// openTableDir checks, before any training, that a table's --out can be created and written, and
// holds it (rundir) for the run. The previous run's tableN.md, tableN.json and figures there are
// removed first: a table's outputs are always those of one run.
func openTableDir(out string, table int) (*rundir.Dir, error) {
	name := fmt.Sprintf("table%d", table)
	dir, err := rundir.Open(out, []string{name + ".md", name + ".json", "*.png"}, rundir.Options{Overwrite: true})
	if err != nil {
		return nil, usagef("%v", err)
	}
	return dir, nil
}

// summarise returns the Row of the evaluations evs of one cell, run r with seed seeds[r].
func summarise(ds, method string, iters int, evs []*train.Evaluation, seeds []uint64, secs float64) Row {
	col := func(f func(*train.Evaluation) float64) [2]float64 {
		v := make([]float64, len(evs))
		for i, e := range evs {
			v[i] = f(e)
		}
		m, se := metrics.MeanAndTwoSE(v)
		return [2]float64{m, se}
	}
	per := make([]RunResult, len(evs))
	for i, e := range evs {
		per[i] = RunResult{Seed: seeds[i], NegELBO: e.NegELBO, MSE: e.MSE, NELL: e.NELL, OneNNError: e.OneNNError}
	}
	return Row{Dataset: ds, Method: method, Iterations: iters, Runs: len(evs), SecPerIter: secs,
		NegELBO:    col(func(e *train.Evaluation) float64 { return e.NegELBO }),
		MSE:        col(func(e *train.Evaluation) float64 { return e.MSE }),
		NELL:       col(func(e *train.Evaluation) float64 { return e.NELL }),
		OneNNError: oneNN(evs),
		PerRun:     per,
	}
}

// oneNN summarises the 1-NN errors, nil when the data has no labels.
func oneNN(evs []*train.Evaluation) *[2]float64 {
	v := make([]float64, len(evs))
	for i, e := range evs {
		if e.OneNNError == nil {
			return nil
		}
		v[i] = *e.OneNNError
	}
	m, se := metrics.MeanAndTwoSE(v)
	return &[2]float64{m, se}
}

func markdown(t Table1, table int) string {
	var sb strings.Builder
	if table == 3 {
		fmt.Fprintf(&sb, "Table 3 (settings: %v). ESS = 1/sum_k w_k^2 and entropy -sum_k w_k log w_k of the K normalised "+
			"weights per damaged image (IWVI: K samples of q0; VAIS: K independent annealed chains), averaged over the "+
			"damaged images; -ELBO, MSE and NELL as in Table 2; mean ± 2 s.e.\n\n", t.Settings)
		sb.WriteString("| dataset | method | iters | ESS | weight entropy | -ELBO | MSE | NELL |\n|---|---|---|---|---|---|---|---|\n")
		for _, r := range t.Rows {
			fmt.Fprintf(&sb, "| %s | %s | %d | %.2f ± %.2f | %.3f ± %.3f | %.3f ± %.3f | %.4f ± %.4f | %.3f ± %.3f |\n",
				r.Dataset, r.Method, r.Iterations, r.ESS[0], r.ESS[1], r.Entropy[0], r.Entropy[1],
				r.NegELBO[0], r.NegELBO[1], r.MSE[0], r.MSE[1], r.NELL[0], r.NELL[1])
		}
		return sb.String()
	}
	if table == 2 {
		fmt.Fprintf(&sb, "Table 2 (settings: %v). -ELBO in nats per image (all images, observed pixels); MSE over the "+
			"hidden pixels in squared pixel units of the chosen scale; NELL in nats per damaged image, over its hidden pixels; "+
			"1-NN error of the latents (MNIST: 1 vs 7); mean ± 2 s.e.\n\n", t.Settings)
	} else {
		fmt.Fprintf(&sb, "Table 1 (settings: %v). -ELBO and NELL in nats per data point, MSE in data units squared; mean ± 2 s.e.\n\n", t.Settings)
	}
	sb.WriteString("| dataset | method | iters | -ELBO | MSE | NELL | 1-NN error | s/iter |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range t.Rows {
		nn := pmCell(r.OneNNError)
		fmt.Fprintf(&sb, "| %s | %s | %d | %.3f ± %.3f | %.4f ± %.4f | %.3f ± %.3f | %s | %.3f |\n",
			r.Dataset, r.Method, r.Iterations, r.NegELBO[0], r.NegELBO[1], r.MSE[0], r.MSE[1],
			r.NELL[0], r.NELL[1], nn, r.SecPerIter)
	}
	sb.WriteString(pairedDifferences(t.Rows))
	return sb.String()
}

// job is one training run of a table cell.
type job struct {
	dataset, method string
	seed            uint64
	evals           []*train.Evaluation  // one per snapshot
	weights         []*train.WeightStats // one per snapshot (table 3)
	secs            float64              // seconds per iteration
	art             *artefacts           // for the figures (first seed only)
}

// runJobs runs do on every job with at most n at a time, the most expensive methods first (VAIS,
// the standard GPLVM, IWVI, then MF: a shorter makespan), and returns the errors joined. method
// names a job's method.
func runJobs[T any](list []T, n int, method func(*T) string, do func(*T) error) error {
	sem := make(chan struct{}, n)
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	order := make([]int, len(list))
	for i := range order {
		order[i] = i
	}
	cost := map[string]int{"vais": 0, "standard": 1, "iwvi": 2, "mf": 3}
	sort.SliceStable(order, func(a, b int) bool { return cost[method(&list[order[a]])] < cost[method(&list[order[b]])] })
	for _, i := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = do(&list[i])
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// loadImages loads frey or mnist (its 1s and 7s) with pixels on the unit ("" too) or raw scale.
func loadImages(name, pixels string) (*data.Dataset, error) {
	scale := data.Unit
	switch pixels {
	case "raw":
		scale = data.Raw
	case "", "unit":
	default:
		return nil, usagef("--pixels %q: want unit or raw", pixels)
	}
	switch name {
	case "frey":
		return data.Frey(scale)
	case "mnist":
		return data.MNIST17(scale)
	}
	return nil, usagef("unknown image dataset %q (want frey or mnist)", name)
}

// hidePixels applies the paper's missing-data protocol (5% of images lose 75% of their pixels,
// seeded): a copy of x with NaN at hidden pixels, and the observation mask.
func hidePixels(x [][]float64, seed uint64) (hidden, mask [][]float64, damaged []int, err error) {
	mask, damaged, err = data.MissingMask(len(x), len(x[0]), 0.05, 0.75, seed)
	if err != nil {
		return nil, nil, nil, err
	}
	return withNaN(x, mask), mask, damaged, nil
}

// withNaN returns a copy of x with NaN where mask is 0 (the form the model and infer take for
// missing entries, so that no hidden value can leak into a fit).
func withNaN(x, mask [][]float64) [][]float64 {
	out := make([][]float64, len(x))
	for i := range x {
		out[i] = append([]float64(nil), x[i]...)
		for j := range out[i] {
			if mask[i][j] == 0 {
				out[i][j] = math.NaN()
			}
		}
	}
	return out
}

// recordOptions adds to a table's settings the options that are off by default, when they are on.
func (f *modelFlags) recordOptions(settings map[string]any) {
	if f.clipGrad > 0 {
		settings["clip_grad"] = f.clipGrad
	}
	if f.stopGrad {
		settings["stop_grad"] = true
	}
	if f.pointEta {
		settings["point_eta"] = true
	}
	if f.adamBeta2 != model.DefaultAdamBeta2 {
		settings["adam_beta2"] = f.adamBeta2
	}
}

// etaSetting describes the step-size rule of the flags: the (initial) eta and whether it is fixed,
// learned or adapted.
func (f *modelFlags) etaSetting() string {
	c := model.Config{K: f.k, Eta: f.eta}
	eta := fmt.Sprint(f.eta)
	if f.eta == 0 {
		eta = fmt.Sprintf("%g/K = %g", model.EtaTimesK, c.StepSize())
	}
	switch {
	case f.adaptEta && !f.learnEta:
		return fmt.Sprintf("adaptive from %s toward acceptance %g (gain %g)", eta, f.acceptTarget, f.adaptRate)
	case f.learnEta:
		return "learned from " + eta
	}
	return eta
}

// tableOf returns the value of --table (or -table) in args, "" when absent.
func tableOf(args []string) string {
	for i, a := range args {
		for _, p := range []string{"--table", "-table"} {
			if a == p && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v
			}
		}
	}
	return ""
}

// pmCell formats an optional mean ± 2 s.e. for a table cell: "-" when absent.
func pmCell(v *[2]float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f ± %.3f", v[0], v[1])
}
