package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/standard"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Row5 is one line of Table 5: the standard GPLVM or VAIS on one data set.
type Row5 struct {
	Dataset    string      `json:"dataset"`
	Method     string      `json:"method"` // "standard" or "vais"
	N          int         `json:"n"`
	Iterations int         `json:"iterations"`
	Runs       int         `json:"runs"`
	Test       int         `json:"test_points"`    // held-out points, half their entries hidden
	MSE        [2]float64  `json:"mse"`            // hidden entries of the held-out points; mean, 2 s.e.
	NELL       [2]float64  `json:"nell_per_point"` // hidden entries, per held-out point; mean, 2 s.e.
	TrainMSE   [2]float64  `json:"train_mse"`      // reconstruction of the training points
	TrainNELL  [2]float64  `json:"train_nell"`     // per training point
	OneNNError *[2]float64 `json:"one_nn_error,omitempty"`
	SecPerIter float64     `json:"seconds_per_iteration"`
	PerRun     []Run5      `json:"per_run"` // every run's values, in seed order
}

// Run5 is one run's values in a Row5 (same units; the subset and held-out points depend on the seed).
type Run5 struct {
	Seed       uint64   `json:"seed"`
	MSE        float64  `json:"mse"`
	NELL       float64  `json:"nell_per_point"`
	TrainMSE   float64  `json:"train_mse"`
	TrainNELL  float64  `json:"train_nell"`
	OneNNError *float64 `json:"one_nn_error,omitempty"`
}

// job5 is one fit of Table 5.
type job5 struct {
	dataset, method     string
	seed                uint64
	mse, nell           float64 // held-out hidden entries
	trainMSE, trainNELL float64
	nn                  *float64
	n, test             int
	secs                float64
}

// runTable5 fits the standard GPLVM (Lawrence 2003: MAP point latents, exact marginal likelihood)
// and VAIS-GPLVM on subsets of oilflow, wine, Frey and MNIST and reports MSE, NELL and 1-NN error.
func runTable5(args []string) error {
	fs := flag.NewFlagSet("reproduce --table 5", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	fs.Int("table", 5, "paper table (5 here)")
	runs := fs.Int("runs", 1, "seeds per cell (the paper: 10)")
	iters := fs.Int("iters", 400, "Adam iterations of both models")
	subset := fs.Int("subset", 300, "points per data set (a seeded random subset; 0 = all)")
	reconIters := fs.Int("recon-iters", 200, "Adam iterations fitting the latents of the held-out points")
	paper := fs.Bool("paper", false, "the paper's protocol: all of oilflow and wine, 300 images of Frey and MNIST, 3000 iterations, 10 runs, full batch")
	datasets := fs.String("datasets", "oilflow,wine,frey,mnist", "comma-separated datasets")
	out := fs.String("out", "out/table5", "directory for table5.md and table5.json")
	backendName := fs.String("backend", "", backendHelp)
	jobs := fs.Int("jobs", runtime.NumCPU(), "fits run at the same time (results do not depend on it)")
	mf.setDefaultBatch(fs, 100)
	set, err := parseSet(fs, args)
	if err != nil {
		return err
	}
	if *paper {
		*iters, *runs, mf.batch = 3000, 10, 0
	}
	if *runs < 1 || *iters < 1 || *jobs < 1 || *reconIters < 1 || (*subset != 0 && *subset < 20) {
		return usagef("--runs, --jobs, --iters and --recon-iters must be >= 1 and --subset 0 or >= 20")
	}
	names := strings.Split(*datasets, ",")
	for _, d := range names {
		if !slices.Contains([]string{"oilflow", "wine", "frey", "mnist"}, d) {
			return usagef("--datasets: unknown dataset %q for table 5 (want oilflow, wine, frey, mnist)", d)
		}
	}
	fits := 2 * len(names) * *runs // standard and vais per dataset and run
	dir, err := openTableDir(*out, 5)
	if err != nil {
		return err
	}
	defer dir.Close()
	b, err := openBackend(*backendName, mf.dtype, *jobs, fits)
	if err != nil {
		return backendUsage(*backendName, err)
	}
	sets := map[string]*data.Dataset{}
	var list []job5
	for _, name := range names {
		var ds *data.Dataset
		if name == "frey" || name == "mnist" {
			ds, err = loadImages(name, "unit")
		} else {
			ds, err = loadData(name, mf.standardize)
		}
		if err != nil {
			return err
		}
		sets[name] = ds
		for _, method := range []string{"standard", "vais"} {
			for r := 0; r < *runs; r++ {
				list = append(list, job5{dataset: name, method: method, seed: uint64(r + 1)})
			}
		}
	}
	sizeOf := func(name string) int {
		if *paper && (name == "oilflow" || name == "wine") {
			return 0
		}
		return *subset
	}
	start := time.Now()
	err = runJobs(list, *jobs, func(j *job5) string { return j.method }, func(j *job5) error {
		all, allLabels := subsetRows(sets[j.dataset], sizeOf(j.dataset), j.seed)
		x, labels, test, hidden, mask := holdOut(all, allLabels, j.seed)
		j.n, j.test = len(all), len(test)
		q := map[string]int{"oilflow": 10, "wine": 9, "frey": 20, "mnist": 5}[j.dataset]
		if mf.q != 0 {
			q = mf.q
		}
		if j.method == "standard" {
			m, err := standard.New(standard.Config{Q: q, Kernel: mf.kernel, LR: mf.lr, Noise0: mf.noise0}, x, b)
			if err != nil {
				return err
			}
			if err := m.Run(*iters, nil); err != nil {
				return fmt.Errorf("%s standard seed %d: %w", j.dataset, j.seed, err)
			}
			ev, err := m.Evaluate(labels)
			if err != nil {
				return err
			}
			rec, err := m.Reconstruct(hidden, mask, *reconIters)
			if err != nil {
				return fmt.Errorf("%s standard seed %d: %w", j.dataset, j.seed, err)
			}
			j.mse, j.nell, _ = rec.ScoreHidden(test, mask)
			j.trainMSE, j.trainNELL, j.nn, j.secs = ev.MSE, ev.NELL, ev.OneNNError, m.SecondsPerIter()
		} else {
			local := mf
			images := j.dataset == "frey" || j.dataset == "mnist"
			if images && !set["k"] {
				local.k = 25 // Table 4
			}
			if images && !set["shared-q-sqrt"] {
				local.sharedQSqrt = true
			}
			if local.batch > len(x) {
				local.batch = 0
			}
			cfg, err := local.config("vais", j.dataset, j.seed)
			if err != nil {
				return err
			}
			m, err := model.New(cfg, x, nil)
			if err != nil {
				return err
			}
			tr := train.New(m, b)
			if err := tr.Run(*iters, nil, 0, nil); err != nil {
				return fmt.Errorf("%s vais seed %d: %w", j.dataset, j.seed, err)
			}
			ev, err := tr.Evaluate(1, labels)
			if err != nil {
				return err
			}
			res, err := infer.Latents(tr, hidden, mask, infer.Options{Iters: *reconIters, Seed: j.seed})
			if err != nil {
				return fmt.Errorf("%s vais seed %d: %w", j.dataset, j.seed, err)
			}
			sc, err := res.ScoreMissing(test)
			if err != nil {
				return err
			}
			j.mse, j.nell = sc.MSE, sc.NELL
			j.trainMSE, j.trainNELL, j.nn, j.secs = ev.MSE, ev.NELL, ev.OneNNError, tr.SecondsPerIter()
		}
		fmt.Fprintf(os.Stderr, "%s %s seed %d done (%.0f s elapsed)\n", j.dataset, j.method, j.seed, time.Since(start).Seconds())
		return nil
	})
	if err != nil {
		return err
	}
	res := struct {
		Settings map[string]any `json:"settings"`
		Rows     []Row5         `json:"rows"`
	}{Settings: map[string]any{"iters": *iters, "runs": *runs, "subset": *subset, "paper": *paper, "batch": mf.batch,
		"backend": b.Name(), "pixels": "unit", "standardized": mf.standardize, "k": "5 (oilflow, wine), 25 (frey, mnist) unless --k"}}
	mf.recordOptions(res.Settings)
	for i := 0; i < len(list); i += *runs {
		cell := list[i : i+*runs]
		row := Row5{Dataset: cell[0].dataset, Method: cell[0].method, N: cell[0].n, Test: cell[0].test, Iterations: *iters, Runs: *runs}
		var mse, nell, trainMSE, trainNELL, nn []float64
		for _, j := range cell {
			mse, nell = append(mse, j.mse), append(nell, j.nell)
			trainMSE, trainNELL = append(trainMSE, j.trainMSE), append(trainNELL, j.trainNELL)
			if j.nn != nil {
				nn = append(nn, *j.nn)
			}
			row.SecPerIter += j.secs / float64(len(cell))
			row.PerRun = append(row.PerRun, Run5{Seed: j.seed, MSE: j.mse, NELL: j.nell, TrainMSE: j.trainMSE, TrainNELL: j.trainNELL, OneNNError: j.nn})
		}
		row.MSE[0], row.MSE[1] = metrics.MeanAndTwoSE(mse)
		row.NELL[0], row.NELL[1] = metrics.MeanAndTwoSE(nell)
		row.TrainMSE[0], row.TrainMSE[1] = metrics.MeanAndTwoSE(trainMSE)
		row.TrainNELL[0], row.TrainNELL[1] = metrics.MeanAndTwoSE(trainNELL)
		if len(nn) == len(cell) {
			m, se := metrics.MeanAndTwoSE(nn)
			row.OneNNError = &[2]float64{m, se}
		}
		res.Rows = append(res.Rows, row)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Table 5 (settings: %v). Standard GPLVM (MAP point latents, exact GP marginal likelihood) against "+
		"VAIS-GPLVM. Each subset is split: 90%% train, 10%% held out with half of each held-out point's entries hidden "+
		"(seeded). Held-out MSE and NELL score the hidden entries after fitting each held-out point's latent from its "+
		"observed entries with the trained model frozen (standard: MAP of h*; VAIS: infer.Latents with its chains): "+
		"MSE in data units squared (images: pixels on [0, 1]); NELL = -sum over hidden entries of E[log N(x | f, s^2)] per "+
		"held-out point, nats. Train MSE / NELL (per point) reconstruct the training points from their own latents, where "+
		"an exact GP nearly interpolates. 1-NN error of the training latents. Mean ± 2 s.e.\n\n", res.Settings)
	sb.WriteString("| dataset | method | N | held out | iters | held-out MSE | held-out NELL | train MSE | train NELL | 1-NN error | s/iter |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range res.Rows {
		nn := pmCell(r.OneNNError)
		fmt.Fprintf(&sb, "| %s | %s | %d | %d | %d | %.4f ± %.4f | %.3f ± %.3f | %.4f ± %.4f | %.3f ± %.3f | %s | %.3f |\n",
			r.Dataset, r.Method, r.N, r.Test, r.Iterations, r.MSE[0], r.MSE[1], r.NELL[0], r.NELL[1],
			r.TrainMSE[0], r.TrainMSE[1], r.TrainNELL[0], r.TrainNELL[1], nn, r.SecPerIter)
	}
	md := sb.String()
	fmt.Print(md)
	return writeTable(*out, "table5", md, res)
}

// holdOut splits rows into training rows (90%) and held-out rows (10%, at least 2), chosen by
// PCG(seed), and hides half of each held-out row's entries (at least one observed and one hidden):
// the held-out truth, a copy with NaN at hidden entries, and the mask (1 = observed).
func holdOut(x [][]float64, labels []int, seed uint64) (train [][]float64, trainLabels []int, test, hidden, mask [][]float64) {
	rng := rand.New(rand.NewPCG(seed, 0x4e1d))
	nTest := max(2, len(x)/10)
	isTest := map[int]bool{}
	for _, i := range rng.Perm(len(x))[:nTest] {
		isTest[i] = true
	}
	d := len(x[0])
	for i, row := range x {
		if !isTest[i] {
			train = append(train, row)
			if labels != nil {
				trainLabels = append(trainLabels, labels[i])
			}
			continue
		}
		m := make([]float64, d)
		for _, j := range rng.Perm(d)[:(d+1)/2] {
			m[j] = 1
		}
		test, mask = append(test, row), append(mask, m)
	}
	return train, trainLabels, test, withNaN(test, mask), mask
}

// subsetRows returns n rows of ds (and their labels) chosen by PCG(seed), in their original order;
// all rows when n is 0 or at least N.
func subsetRows(ds *data.Dataset, n int, seed uint64) ([][]float64, []int) {
	if n == 0 || n >= len(ds.X) {
		return ds.X, ds.Labels
	}
	idx := rand.New(rand.NewPCG(seed, 0x5b5e7)).Perm(len(ds.X))[:n]
	sort.Ints(idx)
	x := make([][]float64, n)
	var labels []int
	for i, j := range idx {
		x[i] = ds.X[j]
		if ds.Labels != nil {
			labels = append(labels, ds.Labels[j])
		}
	}
	return x, labels
}

// writeTable writes name.md and name.json under dir and prints the JSON.
func writeTable(dir, name, md string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	buf, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s JSON: %w", name, err)
	}
	fmt.Println(string(buf))
	if err := os.WriteFile(filepath.Join(dir, name+".json"), buf, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".md"), []byte(md), 0o644)
}
