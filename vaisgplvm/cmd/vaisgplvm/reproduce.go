package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Row is one line of Table 1: a dataset, a method and an iteration count, with each metric's
// mean and two standard errors over the runs.
type Row struct {
	Dataset    string     `json:"dataset"`
	Method     string     `json:"method"`
	Iterations int        `json:"iterations"`
	Runs       int        `json:"runs"`
	NegELBO    [2]float64 `json:"neg_elbo_per_point"` // mean, 2 s.e.
	MSE        [2]float64 `json:"mse"`
	NELL       [2]float64 `json:"nell_per_point"`
	OneNNError [2]float64 `json:"one_nn_error"`
	SecPerIter float64    `json:"seconds_per_iteration"`
}

// Table1 is the JSON written by reproduce --table 1.
type Table1 struct {
	Settings map[string]any `json:"settings"`
	Rows     []Row          `json:"rows"`
}

func runReproduce(args []string) error {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	table := fs.Int("table", 1, "paper table to reproduce (1)")
	runs := fs.Int("runs", 1, "seeds per cell (the paper: 10)")
	iters := fs.Int("iters", 3000, "iterations of the last column; rows at 1/3, 2/3 and all of them")
	paper := fs.Bool("paper", false, "the paper's protocol: 3000 iterations, 10 runs, full batch")
	datasets := fs.String("datasets", "oilflow,wine", "comma-separated datasets")
	methods := fs.String("methods", "mf,iwvi,vais", "comma-separated methods")
	out := fs.String("out", "out/table1", "directory for table1.md and table1.json")
	backendName := fs.String("backend", "", "backend: go or auto")
	jobs := fs.Int("jobs", runtime.NumCPU(), "trainings run at the same time (results do not depend on it)")
	fs.Lookup("batch").DefValue = "100"
	mf.batch = 100
	if err := parse(fs, args); err != nil {
		return err
	}
	if *table != 1 {
		return usagef("--table %d: only table 1 is implemented so far", *table)
	}
	if *paper {
		*iters, *runs, mf.batch = 3000, 10, 0
	}
	if *runs < 1 || *iters < 3 || *jobs < 1 {
		return usagef("--runs and --jobs must be >= 1 and --iters >= 3")
	}
	for _, d := range strings.Split(*datasets, ",") {
		if d != "oilflow" && d != "wine" {
			return usagef("--datasets: unknown dataset %q (want oilflow, wine)", d)
		}
	}
	for _, m := range strings.Split(*methods, ",") {
		if !slices.Contains(model.Methods, m) {
			return usagef("--methods: unknown method %q (want %s)", m, strings.Join(model.Methods, ", "))
		}
		if _, err := mf.config(m, "oilflow", 1); err != nil {
			return err
		}
	}
	b, err := backend.New(*backendName)
	if err != nil {
		return usagef("--backend: %v", err)
	}
	snaps := []int{*iters / 3, 2 * *iters / 3, *iters}
	res := Table1{Settings: map[string]any{"iters": *iters, "runs": *runs, "batch": mf.batch, "backend": b.Name(),
		"k": mf.k, "m": mf.m, "eta": mf.eta, "lr": mf.lr, "standardized": mf.standardize,
		"precondition": mf.precondition, "schedule": mf.schedule, "parallel_jobs": *jobs}}
	var list []job
	sets := map[string]*data.Dataset{}
	for _, dsName := range strings.Split(*datasets, ",") {
		ds, err := loadData(dsName, mf.standardize)
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
	if err := runJobs(list, *jobs, func(j *job) error {
		cfg, err := mf.config(j.method, j.dataset, j.seed)
		if err != nil {
			return err
		}
		ds := sets[j.dataset]
		m, err := model.New(cfg, ds.X, nil)
		if err != nil {
			return err
		}
		tr := train.New(m, b)
		for _, it := range snaps {
			if err := tr.Run(it, progress, 0, nil); err != nil {
				return fmt.Errorf("%s %s seed %d: %w", j.dataset, j.method, j.seed, err)
			}
			ev, err := tr.Evaluate(3, ds.Labels)
			if err != nil {
				return err
			}
			j.evals = append(j.evals, ev)
		}
		j.secs = tr.SecondsPerIter()
		fmt.Fprintf(os.Stderr, "%s %s seed %d done (%.0f s elapsed)\n", j.dataset, j.method, j.seed, time.Since(start).Seconds())
		return nil
	}); err != nil {
		return err
	}
	for i := 0; i < len(list); i += *runs {
		cell := list[i : i+*runs]
		for s, it := range snaps {
			var evs []*train.Evaluation
			secs := 0.0
			for _, j := range cell {
				evs = append(evs, j.evals[s])
				secs += j.secs / float64(len(cell))
			}
			res.Rows = append(res.Rows, summarise(cell[0].dataset, cell[0].method, it, evs, secs))
		}
	}
	md := markdown(res)
	fmt.Print(md)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	buf, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(buf))
	if err := os.WriteFile(filepath.Join(*out, "table1.json"), buf, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*out, "table1.md"), []byte(md), 0o644)
}

func summarise(ds, method string, iters int, evs []*train.Evaluation, secs float64) Row {
	col := func(f func(*train.Evaluation) float64) [2]float64 {
		v := make([]float64, len(evs))
		for i, e := range evs {
			v[i] = f(e)
		}
		m, se := metrics.MeanAndTwoSE(v)
		return [2]float64{m, se}
	}
	return Row{Dataset: ds, Method: method, Iterations: iters, Runs: len(evs), SecPerIter: secs,
		NegELBO:    col(func(e *train.Evaluation) float64 { return e.NegELBO }),
		MSE:        col(func(e *train.Evaluation) float64 { return e.MSE }),
		NELL:       col(func(e *train.Evaluation) float64 { return e.NELL }),
		OneNNError: col(func(e *train.Evaluation) float64 { return *e.OneNNError }),
	}
}

func markdown(t Table1) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Table 1 (settings: %v). -ELBO and NELL in nats per data point, MSE in data units squared; mean ± 2 s.e.\n\n", t.Settings)
	sb.WriteString("| dataset | method | iters | -ELBO | MSE | NELL | 1-NN error | s/iter |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&sb, "| %s | %s | %d | %.3f ± %.3f | %.4f ± %.4f | %.3f ± %.3f | %.3f ± %.3f | %.3f |\n",
			r.Dataset, r.Method, r.Iterations, r.NegELBO[0], r.NegELBO[1], r.MSE[0], r.MSE[1],
			r.NELL[0], r.NELL[1], r.OneNNError[0], r.OneNNError[1], r.SecPerIter)
	}
	return sb.String()
}

// job is one training run of a table cell.
type job struct {
	dataset, method string
	seed            uint64
	evals           []*train.Evaluation // one per snapshot
	secs            float64             // seconds per iteration
}

// runJobs runs do on every job with at most n at a time and returns the first error.
func runJobs(list []job, n int, do func(*job) error) error {
	sem := make(chan struct{}, n)
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i := range list {
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
