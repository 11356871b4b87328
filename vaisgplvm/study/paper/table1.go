package paper

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Result is a reproduced Table 1, 2 or 3: its settings, its rows (dataset x method x snapshot, in
// that order) and the paper's claims checked against our rows.
type Result struct {
	Table    int            `json:"table"`
	Settings map[string]any `json:"settings"`
	Rows     []Row          `json:"rows"`
	Claims   []Claim        `json:"claims"`
	// Baselines are the simple methods beside the GPLVMs: PCA and data-space 1-NN (Table 1),
	// column-mean and k-NN imputation of the hidden pixels (Table 2).
	Baselines []Baseline `json:"baselines,omitempty"`
	// Diverged are the trainings that diverged (nil: none); the rows leave them out from the first
	// snapshot they did not reach.
	Diverged []DivergedRun `json:"diverged,omitempty"`

	jobs []job                    // for WriteFigures
	sets map[string]*data.Dataset // the datasets, by name
}

// Table1 reproduces the paper's Table 1: MF, IWVI and VAIS on oilflow and wine (or on Table1Options.Data),
// -ELBO, reconstruction MSE and NELL per point and the latents' 1-NN error, at Iters/3, 2 Iters/3
// and Iters iterations. Errors: an *option.Error for bad options, else the first failed training;
// a training that diverges (option.Diverged) is not an error but a result (Result.Diverged), and the
// table goes on without it.
func Table1(ctx context.Context, o Table1Options) (*Result, error) {
	return snapshots(ctx, 1, optsOf(&o))
}

// Table2 reproduces the paper's Table 2: MF, IWVI and VAIS on Frey faces and MNIST 1s and 7s with
// 5% of the images missing 75% of their pixels (HidePixels, drawn with each run's seed); MSE and
// NELL score the hidden pixels, the bound is over the observed ones.
func Table2(ctx context.Context, o ImageOptions) (*Result, error) {
	return snapshots(ctx, 2, optsOf(&o))
}

// Table3 reproduces the paper's Table 3: on the Table 2 Frey task, the ESS and entropy of the K
// normalised importance weights per damaged image (IWVI: K samples of q0; VAIS: K independent
// annealed chains).
func Table3(ctx context.Context, o ImageOptions) (*Result, error) {
	return snapshots(ctx, 3, optsOf(&o))
}

func init() {
	images := func() TableOptions { return &ImageOptions{Pixels: "unit"} }
	for _, s := range []Spec{
		{Number: 1, Title: "oilflow, wine", Datasets: []string{"oilflow", "wine"}, Methods: []string{"mf", "iwvi", "vais"},
			Iters: 3000, Options: func() TableOptions { return &Table1Options{} }, PaperFullBatch: true, Run: outputOf(Table1)},
		{Number: 2, Title: "missing pixels of Frey and MNIST", Datasets: []string{"frey", "mnist"}, Methods: []string{"mf", "iwvi", "vais"},
			Iters: 300, Options: images, Run: outputOf(Table2)},
		{Number: 3, Title: "ESS of the weights", Datasets: []string{"frey"}, Methods: []string{"iwvi", "vais"}, Iters: 300,
			Weighted: true, Options: images, Run: outputOf(Table3)},
	} {
		s.Snapshots, s.Figures = true, []string{"curves_*.png", "latent_*.png", "ard_*.png", "images_*.png", "ess_*.png"}
		if err := Register(s); err != nil {
			panic(err)
		}
	}
}

// outputOf makes a table function of options T one that takes TableOptions (a *T) and returns an
// Output.
func outputOf[T any, R Output](f func(context.Context, T) (R, error)) func(context.Context, TableOptions) (Output, error) {
	return func(ctx context.Context, o TableOptions) (Output, error) {
		t, ok := any(o).(*T)
		if !ok {
			var want *T
			return nil, option.Of("Options", "this table takes %T, not %T", want, o)
		}
		r, err := f(ctx, *t)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// Made returns the result's settings (Output).
func (r *Result) Made() map[string]any {
	if r.Settings == nil {
		r.Settings = map[string]any{}
	}
	return r.Settings
}

// job is one training run of a table cell.
type job struct {
	dataset, method string
	seed            uint64
	cfg             model.Config
	evals           []*eval.Evaluation   // one per snapshot
	weights         []*eval.WeightStats  // one per snapshot (table 3)
	breakdowns      []*eval.ESSBreakdown // one per snapshot (table 3): the ESS under other definitions
	secs            float64              // seconds per iteration
	art             *artefacts           // for the figures (first seed only)
	curve           []float64            // -ELBO per point per iteration
	wall            float64              // wall-clock seconds of the training and its evaluations
	stored          bool                 // read back from Trainings.Store, not trained in this run
	key             string               // jobKey: what the store files it under
	diverged        *DivergedRun         // the training diverged: evals holds the snapshots before it
	backend         string               // the backend that trained it (backend.Label; "" when stored without it)
}

// snapshots runs Tables 1-3: every dataset x method x seed trained to Iters, evaluated at Iters/3,
// 2 Iters/3 and Iters.
func snapshots(ctx context.Context, table int, o opts) (*Result, error) {
	o, err := o.withDefaults(table)
	if err != nil {
		return nil, err
	}
	res := &Result{Table: table, sets: map[string]*data.Dataset{}}
	for _, name := range o.Datasets {
		for _, method := range o.Methods {
			for r := 1; r <= o.Runs; r++ {
				cfg, err := o.config(table, method, name, uint64(r))
				if err != nil {
					return nil, err
				}
				res.jobs = append(res.jobs, job{dataset: name, method: method, seed: uint64(r), cfg: cfg})
			}
		}
	}
	b, err := o.openBackend(res.jobs[0].cfg.DType, len(res.jobs))
	if err != nil {
		return nil, err
	}
	o = o.jobsFor(b)
	fingerprints := map[string]fingerprint{}
	for _, name := range o.Datasets {
		if res.sets[name], err = o.load(table, name); err != nil {
			return nil, err
		}
		fingerprints[name] = fingerprintOf(res.sets[name])
	}
	if o.Store != "" {
		if err := checkStoreDir(o.Store); err != nil {
			return nil, err
		}
	}
	snaps := []int{o.Iters / 3, 2 * o.Iters / 3, o.Iters}
	toTrain := len(res.jobs)
	for i := range res.jobs {
		j := &res.jobs[i]
		if j.key, err = jobKey(table, j, fingerprints[j.dataset], snaps, o); err != nil {
			return nil, err
		}
		if o.Store == "" || o.Fresh {
			continue
		}
		_, mask, damaged, err := jobData(table, res.sets[j.dataset], j.seed)
		if err != nil {
			return nil, err
		}
		ok, err := o.readBack("training it again", func() (bool, error) {
			return loadJob(o.Store, j, j.key, o.Figures, mask, damaged)
		})
		if err != nil {
			return nil, err
		}
		if ok {
			toTrain--
		}
	}
	if err := checkStoreOnly(o, len(res.jobs), func(i int) (string, bool) {
		j := &res.jobs[i]
		return trainingName(j.dataset, j.method, j.seed), j.stored
	}); err != nil {
		return nil, err
	}
	for i := range res.jobs { // every training's step must fit before any graph is built
		j := &res.jobs[i]
		if j.stored {
			continue
		}
		ds := res.sets[j.dataset]
		if err := j.cfg.CheckMemory(len(ds.X), len(ds.X[0])); err != nil {
			return nil, fmt.Errorf("%s %s: %w", j.dataset, j.method, err)
		}
	}
	if o.Log != nil && toTrain < len(res.jobs) {
		fmt.Fprintf(o.Log, "%d of %d trainings read back from %s (finished in an earlier run); %d to train\n",
			len(res.jobs)-toTrain, len(res.jobs), o.Store, toTrain)
	}
	res.Settings = o.settings(table, res.jobs[0].cfg)
	qs, fps := map[string]int{}, map[string]string{}
	for _, j := range res.jobs {
		qs[j.dataset] = j.cfg.Q
	}
	for name, fp := range fingerprints {
		fps[name] = fp.content[:16]
	}
	res.Settings["q"], res.Settings["seeds"], res.Settings["data_content_sha256"] = qs, fmt.Sprintf("1..%d", o.Runs), fps
	if sg := stopGradCells(len(res.jobs), func(i int) (string, string, bool) {
		return res.jobs[i].dataset, res.jobs[i].method, res.jobs[i].cfg.StopGrad
	}); sg != "" {
		res.Settings["stop_grad"] = sg
	}
	start := time.Now()
	o.plan(toTrain)
	err = runJobs(ctx, res.jobs, o.Jobs, func(j *job) (uint64, string) { return j.seed, j.method }, func(j *job) error {
		if j.stored {
			return nil
		}
		jobStart := time.Now()
		ds := res.sets[j.dataset]
		x, mask, damaged, err := jobData(table, ds, j.seed)
		if err != nil {
			return err
		}
		tr, err := train.NewFor(j.cfg, x, mask, b)
		if err != nil {
			return fmt.Errorf("%s %s seed %d: %w", j.dataset, j.method, j.seed, err)
		}
		j.backend = backend.Label(b)
		observe := o.observer(j.dataset, j.method, j.seed, snaps[len(snaps)-1])
		draws := protocol.EvaluationOf(j.dataset, 3, tr)
		if err := o.trainSnapshots(ctx, table, j, tr, ds, damaged, snaps, draws, observe); err != nil {
			if j.diverged = divergedFrom(err, j.dataset, j.method, j.seed); j.diverged == nil {
				return fmt.Errorf("%s %s seed %d: %w", j.dataset, j.method, j.seed, err)
			}
		}
		j.secs, j.curve = tr.SecondsPerIter(), slices.Clone(tr.Curve)
		var params *train.Params
		if j.diverged == nil && j.seed == 1 && (o.Figures || o.Store != "") {
			if j.art, err = newArtefacts(tr, j, mask, damaged); err != nil {
				return err
			}
			params = j.art.params
		}
		if j.diverged == nil && o.Observer != nil {
			done := Trained{Table: table, Dataset: j.dataset, Method: j.method, Seed: j.seed, Key: j.key,
				HiddenPixels: damaged != nil, Pixels: cmp.Or(o.Pixels, "unit"), Standardize: o.Standardize, Trainer: tr}
			if err := o.Observer.Trained(done); err != nil {
				return fmt.Errorf("%s %s seed %d: %w", j.dataset, j.method, j.seed, err)
			}
		}
		j.wall = time.Since(jobStart).Seconds()
		if o.Store != "" {
			if err := saveJob(o.Store, j, j.key, params, damaged); err != nil {
				return err
			}
		}
		o.logFinished(j.dataset, j.method, j.seed, j.diverged, start)
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Settings["wall_seconds"] = math.Round(time.Since(start).Seconds())
	res.Settings["training_seconds"] = trainingSeconds(res.jobs, func(j *job) float64 { return j.wall })
	res.Settings["backend"] = trainedOn(res.jobs, func(j *job) string { return j.backend })
	if o.Store != "" {
		res.Settings["trainings_stored"] = fmt.Sprintf("%d of %d read back from an earlier run's store", len(res.jobs)-toTrain, len(res.jobs))
	}
	res.Rows = rowsOf(res.jobs, o.Runs, snaps, table)
	res.Diverged = divergedRuns(res.jobs)
	res.Claims = claims(res)
	if res.Baselines, err = o.snapshotBaselines(table, res); err != nil {
		return nil, fmt.Errorf("baselines: %w", err)
	}
	return res, nil
}

// trainSnapshots trains j to each of snaps in turn and evaluates it there (Tables 2 and 3: the
// hidden pixels' scores; Table 3: the weights), appending to j's evaluations. A divergence is
// returned as the option.Diverged it is, after the snapshots it reached.
func (o opts) trainSnapshots(ctx context.Context, table int, j *job, tr *train.Trainer, ds *data.Dataset, damaged []int, snaps []int,
	draws int, observe func(train.Event)) error {
	for _, it := range snaps {
		if err := tr.Run(ctx, it, train.RunOptions{Observe: observe}); err != nil {
			return err
		}
		ev, err := eval.Evaluate(tr, draws, ds.Labels)
		if err != nil {
			return err
		}
		if damaged != nil && o.Exact && it == snaps[len(snaps)-1] { // the last row only: its cost is minutes
			if ev.Exact, ev.ExactRefit, err = scoreExact(ctx, tr, ds.X, ev, j.seed, o.ExactFitRows); err != nil {
				return err
			}
		}
		if damaged != nil { // tables 2, 3: score the hidden pixels against their true values
			sc, err := eval.ScoreMissing(tr, ds.X, ev)
			if err != nil {
				return err
			}
			ev.MSE, ev.NELL = sc.MSE, sc.NELL // the table's columns: scores of the hidden pixels
			if ev.Predictive != nil {
				ev.Predictive.MSE, ev.Predictive.NELL = sc.MSEPredictive, sc.NELLPredictive
			}
		}
		if table == 3 {
			e, err := eval.NewESSBreakdown(tr, damaged, j.cfg.K, j.seed) // its Own are Weights(damaged, K, seed)
			if err != nil {
				return err
			}
			if e.Own == nil {
				return fmt.Errorf("weights: method %q has no importance weights", j.method)
			}
			j.weights, j.breakdowns = append(j.weights, e.Own), append(j.breakdowns, e)
		}
		j.evals = append(j.evals, ev)
	}
	return nil
}

// scoreExact scores the hidden entries under the exact GP conditional on the complete rows at
// the trained hyperparameters, and refitted with its predictive noise validated
// (infer.ScoreExact): its mixture's MSE and NELL.
func scoreExact(ctx context.Context, tr *train.Trainer, truth [][]float64, ev *eval.Evaluation, seed uint64, fitRows int) (trained, refit *eval.Predictive, err error) {
	ex, val, err := infer.ScoreExact(ctx, tr, truth, ev, infer.ExactValidation{Hide: protocol.HiddenShare, FitRows: fitRows, Seed: seed})
	if err != nil {
		return nil, nil, err
	}
	mixture := func(sc *eval.MissingScores) *eval.Predictive {
		return &eval.Predictive{MSE: sc.MSEPredictive, NELL: sc.NELLPredictive, Components: sc.Components}
	}
	return mixture(ex), mixture(val), nil
}

// jobData returns the data a training of table trains on for seed: ds's matrix and mask, with
// Table 2 and 3's hidden pixels (HidePixels) and the damaged images' indices.
func jobData(table int, ds *data.Dataset, seed uint64) (x, mask [][]float64, damaged []int, err error) {
	if table >= 2 {
		return protocol.HidePixels(ds.X, seed)
	}
	return ds.X, ds.Mask, nil, nil // your own data may have missing entries
}

// trainingSeconds is the wall-clock seconds of the jobs' trainings and evaluations (wall gives one
// job's), summed and rounded (those read back from the store with their own).
func trainingSeconds[T any](jobs []T, wall func(*T) float64) float64 {
	t := 0.0
	for i := range jobs {
		t += wall(&jobs[i])
	}
	return math.Round(t)
}

// snapshotBaselines computes the baselines of Table 1 (PCA with each dataset's Q, data-space
// 1-NN) and Table 2 (imputation of each seed's hidden pixels); Table 3 has none.
func (o opts) snapshotBaselines(table int, res *Result) ([]Baseline, error) {
	var out []Baseline
	for _, name := range o.Datasets {
		ds := res.sets[name]
		switch table {
		case 1:
			q := jobQ(res.jobs, name)
			b, err := latentBaselines(name, ds.X, ds.Mask, ds.Labels, min(q, len(ds.X[0])))
			if err != nil {
				return nil, err
			}
			out = append(out, b...)
		case 2:
			var mean, knn []float64
			var val, ppca imputed
			q := jobQ(res.jobs, name)
			for r := 1; r <= o.Runs; r++ {
				hidden, mask, _, err := protocol.HidePixels(ds.X, uint64(r))
				if err != nil {
					return nil, err
				}
				m, k, err := imputationMSE(ds.X, hidden, mask, hidden, mask, true)
				if err != nil {
					return nil, err
				}
				mean, knn = append(mean, m), append(knn, k)
				if err := strongImputation(ds.X, hidden, mask, q, uint64(r), &val, &ppca); err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
			}
			out = append(append(out, imputationRows(name, mean, knn)...), strongRows(name, val, ppca, imputed{}, q)...)
		}
	}
	return out, nil
}

// jobQ is the latent dimension Q of the dataset's trainings (0 when none).
func jobQ(jobs []job, dataset string) int {
	for _, j := range jobs {
		if j.dataset == dataset {
			return j.cfg.Q
		}
	}
	return 0
}

// rowsOf summarises the jobs, runs consecutive jobs per cell, into one row per cell and snapshot,
// over the runs that reached it (none reached it: no row).
func rowsOf(jobs []job, runs int, snaps []int, table int) []Row {
	var rows []Row
	for i := 0; i < len(jobs); i += runs {
		all := jobs[i : i+runs]
		for s, it := range snaps {
			var cell []job // the runs that reached snapshot s: all but those that diverged before it
			var lost []uint64
			for _, j := range all {
				if len(j.evals) > s {
					cell = append(cell, j)
				} else {
					lost = append(lost, j.seed)
				}
			}
			if len(cell) == 0 {
				continue // every run diverged before it: Result.Diverged says so
			}
			var evs []*eval.Evaluation
			var seeds []uint64
			secs := 0.0
			for _, j := range cell {
				evs, seeds = append(evs, j.evals[s]), append(seeds, j.seed)
				secs += j.secs / float64(len(cell))
			}
			row := summarise(cell[0].dataset, cell[0].method, it, evs, seeds, secs)
			row.DivergedSeeds = lost
			curves := make([][]float64, len(cell))
			for r, j := range cell {
				curves[r] = j.curve
			}
			riseOf(&row, curves)
			if table == 3 {
				var ess, ent []float64
				for r, j := range cell {
					w := j.weights[s]
					ess, ent = append(ess, w.ESS), append(ent, w.Entropy)
					row.PerRun[r].ESS, row.PerRun[r].Entropy = &w.ESS, &w.Entropy
				}
				e, h := meanTwoSE(ess), meanTwoSE(ent)
				row.ESS, row.Entropy = &e, &h
				row.ESSDefinitions = essDefinitions(cell, s)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// load loads a dataset of a table: images for tables 2 and 3 (ImageOptions.Pixels), oilflow and wine
// for table 1 (Options.Standardize), or Table1Options.Data.
func (o opts) load(table int, name string) (*data.Dataset, error) {
	switch {
	case o.Data != nil:
		return o.Data, nil
	case protocol.IsImage(name):
		return protocol.LoadImages(name, o.Pixels)
	}
	return protocol.LoadTabular(name, o.Standardize)
}

// stopGradCells names the datasets whose VAIS cells train with the stop-gradient chain ("vais on
// frey"), "" when none does: it is set per dataset (Config), so the first job's configuration does
// not speak for the others. cell(i) gives the i-th of n jobs' dataset, method and StopGrad.
func stopGradCells(n int, cell func(i int) (dataset, method string, stopGrad bool)) string {
	var names []string
	for i := range n {
		if ds, method, sg := cell(i); sg && method == "vais" && !slices.Contains(names, ds) {
			names = append(names, ds)
		}
	}
	if names == nil {
		return ""
	}
	return "vais on " + strings.Join(names, ", ")
}

// settings records a run's protocol for the table's caption and JSON: the options and the
// configuration of its first training (M, K, batch ... are the same in every cell unless noted).
func (o opts) settings(table int, c model.Config) map[string]any {
	s := map[string]any{"table": table, "iters": o.Iters, "runs": o.Runs, "batch": c.Batch,
		"k": c.K, "m": c.M, "kernel": cmp.Or(c.Kernel, "se"), "whitened": c.Whitened, "samples": c.Samples, "dtype": cmp.Or(c.DType, "float64"), "eta": etaSetting(c), "lr": c.LR, "standardized": o.Standardize,
		"precondition": c.Precondition, "schedule": c.Schedule, "parallel_jobs": o.Jobs, "shared_q_sqrt": c.SharedQSqrt, "paper": o.Paper}
	if c.ClipGrad > 0 {
		s["clip_grad"] = c.ClipGrad
	}
	if c.PointEta {
		s["point_eta"] = true
	}
	if c.AdamBeta2 != 0 && c.AdamBeta2 != model.DefaultAdamBeta2 {
		s["adam_beta2"] = c.AdamBeta2
	}
	if o.Data != nil {
		s["data"], s["missing_entries"] = o.Data.Name, o.Data.Missing()
	}
	if table >= 2 && table <= 3 {
		s["pixels"] = pixelsName(o.Pixels)
		s["missing"] = "5% of images (seeded by the run) lose 75% of their pixels"
		s["eval"] = "bound: 2 noise draws; VAIS reconstruction latent: 4 weighted chains per image"
	}
	return s
}

func pixelsName(p string) string {
	if p == "" {
		return "unit"
	}
	return p
}

// etaSetting describes the step-size rule of c: the (initial) eta and whether it is fixed, learned
// or adapted.
func etaSetting(c model.Config) string {
	eta := fmt.Sprint(c.Eta)
	if c.Eta == 0 {
		eta = fmt.Sprintf("%g/K = %g", model.EtaTimesK, c.StepSize())
	}
	target, gain := c.AcceptTarget, c.AdaptRate
	if target == 0 {
		target = anneal.DefaultTargetAccept
	}
	if gain == 0 {
		gain = anneal.DefaultAdaptRate
	}
	switch {
	case c.PaperEta:
		return "App. D's rule from " + eta
	case c.AdaptEta && !c.LearnEta:
		return fmt.Sprintf("adaptive from %s toward acceptance %g (gain %g)", eta, target, gain)
	case c.LearnEta:
		return "learned from " + eta
	}
	return eta
}
