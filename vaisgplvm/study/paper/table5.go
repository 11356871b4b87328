package paper

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/baselines"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/standard"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Row5 is one line of Table 5: the standard GPLVM or VAIS on one dataset; [2]float64 pairs are
// mean and 2 s.e. over the runs.
type Row5 struct {
	Dataset    string      `json:"dataset"`
	Method     string      `json:"method"` // "standard" or a bound (the paper's: "vais")
	N          int         `json:"n"`
	Iterations int         `json:"iterations"`
	Runs       int         `json:"runs"`
	Test       int         `json:"test_points"`    // held-out points, half their entries hidden
	MSE        [2]float64  `json:"mse"`            // hidden entries of the held-out points, per entry
	NELL       [2]float64  `json:"nell_per_point"` // hidden entries, nats per held-out point
	TrainMSE   [2]float64  `json:"train_mse"`      // reconstruction of the training points
	TrainNELL  [2]float64  `json:"train_nell"`     // per training point
	OneNNError *[2]float64 `json:"one_nn_error,omitempty"`
	// ImputedSummary: the held-out hidden entries under the posterior predictive mixture over
	// the fitted points' particles (the Bayesian GPLVMs; nil for the standard GPLVM, whose
	// latents are points) and, with --exact, under the exact GP conditional on the training
	// points at their latents (trained and refitted hyperparameters).
	ImputedSummary
	SecPerIter float64 `json:"seconds_per_iteration"`
	// ConvergedRuns counts the runs whose fit converged by its rule, and ConvergeSeconds is the
	// mean and 2 s.e. of their fits' seconds, when the table fits to convergence (nil otherwise).
	ConvergedRuns   *int        `json:"converged_runs,omitempty"`
	ConvergeSeconds *[2]float64 `json:"convergence_seconds,omitempty"`
	PerRun          []Run5      `json:"per_run"` // every run's values, in seed order
	// DivergedSeeds are the cell's seeds whose fit diverged (Result5.Diverged); Runs and PerRun
	// leave them out.
	DivergedSeeds []uint64   `json:"diverged_seeds,omitempty"`
	Paper         *PaperRow5 `json:"paper,omitempty"` // the paper's row (10 runs)
}

// Run5 is one run's values in a Row5 (same units; the subset and held-out points depend on the seed).
type Run5 struct {
	Seed       uint64   `json:"seed"`
	MSE        float64  `json:"mse"`
	NELL       float64  `json:"nell_per_point"`
	TrainMSE   float64  `json:"train_mse"`
	TrainNELL  float64  `json:"train_nell"`
	OneNNError *float64 `json:"one_nn_error,omitempty"`
	Imputed
	// Convergence is how the fit ended when the table fits to convergence
	// (Table5Options.Converge); nil otherwise.
	Convergence *Convergence5 `json:"convergence,omitempty"`
}

// Convergence5 is how one of Table 5's fits to convergence ended.
type Convergence5 struct {
	Converged bool   `json:"converged"`
	StoppedBy string `json:"stopped_by"` // converge.Result.StoppedBy
	// Stages: "L-BFGS" (MF; the standard GPLVM on its MAP objective), "L-BFGS, then Adam", or
	// "Adam" (mini-batches), as converge.Stages.
	Stages     string  `json:"stages"`
	Iterations int     `json:"iterations"` // of every stage
	Seconds    float64 `json:"seconds"`    // of every stage
}

// Result5 is a reproduced Table 5.
type Result5 struct {
	Settings map[string]any `json:"settings"`
	Rows     []Row5         `json:"rows"`
	Claims   []Claim        `json:"claims"`
	// Baselines impute the same held-out hidden entries from the training rows: each column's
	// mean, and the mean of the KNN training rows nearest over the observed entries.
	Baselines []Baseline `json:"baselines,omitempty"`
	// Diverged are the fits that diverged (nil: none), left out of the rows.
	Diverged []DivergedRun `json:"diverged,omitempty"`
}

func init() {
	if err := Register(Spec{Number: 5, Title: "standard GPLVM vs VAIS", Datasets: []string{"oilflow", "wine", "frey", "mnist"},
		Methods: []string{"standard", "vais"}, Accepts: append([]string{"standard"}, model.Methods()...), Iters: 400,
		Options: func() TableOptions { return &Table5Options{Subset: 300, ReconIters: 200} }, PaperFullBatch: true, Run: outputOf(Table5)}); err != nil {
		panic(err)
	}
}

// Made returns the result's settings (Output).
func (r *Result5) Made() map[string]any {
	if r.Settings == nil {
		r.Settings = map[string]any{}
	}
	return r.Settings
}

// job5 is one fit of Table 5.
type job5 struct {
	dataset, method string
	seed            uint64
	cfg             model.Config
	run             Run5
	n, test         int
	secs            float64
	wall            float64 // wall-clock seconds of the fit, its held-out latents and scores
	stored          bool    // read back from Trainings.Store, not fitted in this run
	key             string  // job5Key: what the store files it under
	diverged        *DivergedRun
	backend         string // the backend that fitted it (backend.Label; "" when stored without it)
}

// subsetSetting is Table 5's subset setting: the points each dataset's subsets hold (sizeOf; 0
// for all of them, as under Paper for oil flow and wine), by dataset.
func subsetSetting(datasets []string, sizeOf func(string) int) map[string]string {
	out := map[string]string{}
	for _, name := range datasets {
		if n := sizeOf(name); n > 0 {
			out[name] = strconv.Itoa(n)
		} else {
			out[name] = "all"
		}
	}
	return out
}

// Table5 reproduces the paper's Table 5: the standard GPLVM (Lawrence 2003: MAP point latents, the
// exact GP marginal likelihood) against VAIS-GPLVM on seeded subsets of oilflow, wine, Frey and
// MNIST. Each subset is split by HoldOut; both models are trained on the training part, then each
// held-out point's latent is fitted from its observed half with the model frozen, and MSE and NELL
// score the hidden half. Errors: an *option.Error for bad options, else the first failed fit; a
// fit that diverges is a result (Result5.Diverged), left out of its row, and the table goes on.
func Table5(ctx context.Context, o Table5Options) (*Result5, error) { return table5(ctx, optsOf(&o)) }

func table5(ctx context.Context, o opts) (*Result5, error) {
	o, err := o.withDefaults(5)
	if err != nil {
		return nil, err
	}
	var list []job5
	for _, name := range o.Datasets {
		for _, method := range o.Methods {
			for r := 1; r <= o.Runs; r++ {
				bound := method
				if method == "standard" {
					bound = "vais" // the standard GPLVM takes Q, kernel, lr, noise0 from VAIS's configuration
				}
				cfg, err := o.configWith(5, bound, name, uint64(r), o.continuation(method, name))
				if err != nil {
					return nil, err
				}
				if o.Converge != nil && !protocol.IsImage(name) {
					cfg.Batch = 0 // the collapsed bound's L-BFGS needs the whole training part
				}
				list = append(list, job5{dataset: name, method: method, seed: uint64(r), cfg: cfg})
			}
		}
	}
	b, err := o.openBackend(list[0].cfg.DType, len(list))
	if err != nil {
		return nil, err
	}
	o = o.jobsFor(b)
	sets, fingerprints := map[string]*data.Dataset{}, map[string]fingerprint{}
	for _, name := range o.Datasets {
		if sets[name], err = o.load(5, name); err != nil {
			return nil, err
		}
		fingerprints[name] = fingerprintOf(sets[name])
	}
	if o.Store != "" {
		if err := checkStoreDir(o.Store); err != nil {
			return nil, err
		}
	}
	sizeOf := func(name string) int {
		if o.Subset == AllPoints || (o.Paper && !protocol.IsImage(name)) {
			return 0
		}
		return o.Subset
	}
	toFit := len(list)
	for i := range list {
		j := &list[i]
		if j.key, err = job5Key(j, fingerprints[j.dataset], sizeOf(j.dataset), o); err != nil {
			return nil, err
		}
		if o.Store == "" || o.Fresh {
			continue
		}
		ok, err := o.readBack("fitting it again", func() (bool, error) { return loadJob5(o.Store, j) })
		if err != nil {
			return nil, err
		}
		if ok {
			toFit--
		}
	}
	if err := checkStoreOnly(o, len(list), func(i int) (string, bool) {
		return trainingName(list[i].dataset, list[i].method, list[i].seed), list[i].stored
	}); err != nil {
		return nil, err
	}
	if o.Log != nil && toFit < len(list) {
		fmt.Fprintf(o.Log, "%d of %d fits read back from %s (finished in an earlier run); %d to fit\n",
			len(list)-toFit, len(list), o.Store, toFit)
	}
	start := time.Now()
	reporting := 0 // the standard GPLVM's fits do not report iterations
	for _, j := range list {
		if j.method != "standard" && !j.stored && o.Converge == nil { // a converging fit reports no iterations
			reporting++
		}
	}
	o.plan(reporting)
	err = runJobs(ctx, list, o.Jobs, func(j *job5) (uint64, string) { return j.seed, j.method }, func(j *job5) error {
		if j.stored {
			return nil
		}
		jobStart := time.Now()
		all, allLabels, err := protocol.SubsetRows(sets[j.dataset], sizeOf(j.dataset), j.seed)
		if err != nil {
			return err
		}
		s, err := protocol.HoldOut(all, allLabels, j.seed)
		if err != nil {
			return err
		}
		j.n, j.test, j.backend = len(all), len(s.Test), backend.Label(b)
		j.run.Seed = j.seed
		if j.method == "standard" {
			err = fitStandard(ctx, j, s, o, b)
		} else {
			err = fitBayesian(ctx, j, s, o, b)
		}
		if err != nil {
			if j.diverged = divergedFrom(err, j.dataset, j.method, j.seed); j.diverged == nil {
				return fmt.Errorf("%s %s seed %d: %w", j.dataset, j.method, j.seed, err)
			}
		}
		j.wall = time.Since(jobStart).Seconds()
		if o.Store != "" {
			if err := saveJob5(o.Store, j); err != nil {
				return err
			}
		}
		o.logFinished(j.dataset, j.method, j.seed, j.diverged, start)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := list[0].cfg
	res := &Result5{Settings: map[string]any{"table": 5, "iters": o.Iters, "runs": o.Runs, "subset": subsetSetting(o.Datasets, sizeOf), "paper": o.Paper,
		"batch": c.Batch, "backend": trainedOn(list, func(j *job5) string { return j.backend }), "pixels": "unit", "standardized": o.Standardize, "recon_iters": o.ReconIters,
		"k": "5 (oilflow, wine), 25 (frey, mnist) unless configured", "wall_seconds": math.Round(time.Since(start).Seconds())}}
	if o.Store != "" {
		res.Settings["trainings_stored"] = fmt.Sprintf("%d of %d read back from an earlier run's store", len(list)-toFit, len(list))
	}
	res.Settings["training_seconds"] = trainingSeconds(list, func(j *job5) float64 { return j.wall })
	if o.Converge != nil {
		res.Settings["iters"] = "to convergence"
		res.Settings["converge"] = convergeSetting(*o.Converge, o.ConvergeAdam)
	}
	if sg := stopGradCells(len(list), func(i int) (string, string, bool) {
		return list[i].dataset, list[i].method, list[i].cfg.StopGrad
	}); sg != "" {
		res.Settings["stop_grad"] = sg
	}
	for i := 0; i < len(list); i += o.Runs {
		var cell []job5
		var lost []uint64
		for _, j := range list[i : i+o.Runs] {
			if j.diverged != nil {
				lost, res.Diverged = append(lost, j.seed), append(res.Diverged, *j.diverged)
			} else {
				cell = append(cell, j)
			}
		}
		if len(cell) > 0 {
			row := row5(cell, o.Iters)
			row.DivergedSeeds = lost
			res.Rows = append(res.Rows, row)
		}
	}
	res.Claims = claims5(res.Rows)
	for _, name := range o.Datasets {
		var mean, knn []float64
		var val, ppca, vppca imputed
		var vp *imputed // the validated PPCA's scores, when asked for
		if o.ValidatePPCA {
			vp = &vppca
		}
		q := 0 // the GPLVMs' Q (every job's cfg is VAIS's configuration)
		for _, j := range list {
			if j.dataset == name {
				q = j.cfg.Q
			}
		}
		for r := 1; r <= o.Runs; r++ {
			all, labels, err := protocol.SubsetRows(sets[name], sizeOf(name), uint64(r))
			if err != nil {
				return nil, err
			}
			s, err := protocol.HoldOut(all, labels, uint64(r))
			if err != nil {
				return nil, err
			}
			m, k, err := imputationMSE(s.Test, s.Hidden, s.Mask, s.Train, nil, false)
			if err != nil {
				return nil, fmt.Errorf("baselines: %w", err)
			}
			mean, knn = append(mean, m), append(knn, k)
			if err := heldOutImputation(s, q, uint64(r), &val, &ppca, vp); err != nil {
				return nil, fmt.Errorf("baselines: %s: %w", name, err)
			}
		}
		res.Baselines = append(res.Baselines, imputationRows(name, mean, knn)...)
		if q > 0 {
			res.Baselines = append(res.Baselines, strongRows(name, val, ppca, vppca, q)...)
		}
	}
	return res, nil
}

// convergeSetting states the rules and caps of a table's fits to convergence (its settings, and
// its fits' store key).
func convergeSetting(opt converge.Options, adam converge.AdamRule) string {
	return fmt.Sprintf("L-BFGS until %s (the standard GPLVM and MF on full-batch data); %s; each fit capped at %g s and %d L-BFGS iterations (0: none)",
		opt.Rule, adam, opt.MaxSeconds, opt.MaxIters)
}

// continuation returns what a Table 5 fit to convergence changes in the protocol's configuration
// of method on dataset before Configure (nil for none): a bound other than MF that continues from
// the collapsed MF fit's optimum (full-batch tabular data; converge.Train) holds its step sizes
// eta_k fixed, as train --converge and Table 1 at convergence do: adapting eta_k toward an
// acceptance rate is not an ascent on the bound (docs/options.md, --converge).
func (o opts) continuation(method, dataset string) func(*model.Config) {
	if o.Converge == nil || protocol.IsImage(dataset) || method == "standard" || method == "mf" {
		return nil
	}
	return func(c *model.Config) { c.AdaptEta = false }
}

// converging returns the options of j's fit to convergence (o.Converge is not nil), with j's
// progress callback when o.ConvergeProgress gives one (converge.Train hands it the Adam stage too),
// and the Adam stage's.
func (o opts) converging(j *job5) (converge.Options, converge.AdamOptions) {
	lbfgs := *o.Converge
	if o.ConvergeProgress != nil {
		if f := o.ConvergeProgress(trainingName(j.dataset, j.method, j.seed)); f != nil {
			lbfgs.Observe = f
		}
	}
	return lbfgs, converge.AdamOptions{Rule: o.ConvergeAdam}
}

// fitStandard trains the standard GPLVM of a Table 5 job (to convergence with o.Converge) and
// scores it.
func fitStandard(ctx context.Context, j *job5, s protocol.Split, o opts, b backends.Backend) error {
	m, err := standard.New(standard.Config{Q: j.cfg.Q, Kernel: j.cfg.Kernel, LR: j.cfg.LR, Noise0: j.cfg.Noise0}, s.Train, b)
	if err != nil {
		return err
	}
	if o.Converge != nil {
		lbfgs, _ := o.converging(j)
		res, err := m.Converge(ctx, lbfgs)
		if err != nil {
			return err
		}
		if err := j.converged(res, nil, "L-BFGS", "MAP objective"); err != nil {
			return err
		}
	} else if err := m.Run(o.Iters, nil); err != nil {
		return err // an *option.Diverged is a result of the table (divergedFrom)
	}
	ev, err := m.Evaluate(s.TrainLabels)
	if err != nil {
		return err
	}
	rec, err := m.Reconstruct(s.Hidden, s.Mask, o.ReconIters)
	if err != nil {
		return err
	}
	j.run.MSE, j.run.NELL, _ = rec.ScoreHidden(s.Test, s.Mask)
	j.run.TrainMSE, j.run.TrainNELL, j.run.OneNNError, j.secs = ev.MSE, ev.NELL, ev.OneNNError, m.SecondsPerIter()
	return nil
}

// fitBayesian trains a Bayesian GPLVM (VAIS, or any registered bound) on a Table 5 job (full
// batch when the training part is smaller than a batch), fits the held-out latents with
// infer.Latents and scores them.
func fitBayesian(ctx context.Context, j *job5, s protocol.Split, o opts, b backends.Backend) error {
	cfg := j.cfg
	if cfg.Batch > len(s.Train) {
		cfg.Batch = 0
	}
	var tr *train.Trainer
	var err error
	if o.Converge != nil {
		if tr, err = train.NewFor(cfg, s.Train, nil, b); err != nil {
			return err
		}
		lbfgs, adam := o.converging(j)
		res, start, err := converge.Train(ctx, tr, lbfgs, adam)
		if err != nil {
			return err
		}
		if err := j.converged(res, start, converge.Stages(tr), "-ELBO"); err != nil {
			return err
		}
	} else if tr, err = train.Fit(ctx, cfg, s.Train, nil, b, o.Iters, train.RunOptions{Observe: o.observer(j.dataset, j.method, j.seed, o.Iters)}); err != nil {
		return err
	}
	ev, err := eval.Evaluate(tr, 1, s.TrainLabels)
	if err != nil {
		return err
	}
	res, err := infer.Latents(ctx, tr, s.Hidden, s.Mask, infer.Options{Iters: o.ReconIters, Seed: j.seed})
	if err != nil {
		return err
	}
	sc, err := res.ScoreMissing(s.Test)
	if err != nil {
		return err
	}
	j.run.MSE, j.run.NELL = sc.MSE, sc.NELL
	j.run.PredMSE, j.run.PredNELL = &sc.MSEPredictive, &sc.NELLPredictive
	j.run.TrainMSE, j.run.TrainNELL, j.run.OneNNError, j.secs = ev.MSE, ev.NELL, ev.OneNNError, tr.SecondsPerIter()
	if !o.Exact {
		return nil
	}
	ex, err := eval.NewExact(tr, s.Train, ev.Latent, eval.ExactOptions{})
	if err != nil {
		return err
	}
	val, err := infer.ValidatedExact(ctx, tr, s.Train, ev.Latent, infer.ExactValidation{Hide: protocol.HeldOutHidden, FitRows: o.ExactFitRows, Seed: j.seed})
	if err != nil {
		return err
	}
	for _, c := range []*eval.Exact{ex, val} {
		sc, err := res.ScoreMissingExact(s.Test, c)
		if err != nil {
			return err
		}
		if c == val {
			j.run.RefitMSE, j.run.RefitNELL = &sc.MSEPredictive, &sc.NELLPredictive
		} else {
			j.run.ExactMSE, j.run.ExactNELL = &sc.MSEPredictive, &sc.NELLPredictive
		}
	}
	return nil
}

// converged records in j how its fit to convergence ended: res, the last stage's result, after
// start, the L-BFGS stage's when Adam followed it (nil otherwise); objective names what the fit
// minimises. A fit stopped by the run's context is an error wrapping train.ErrInterrupted
// (converge.Result.Interrupted): the table stops, and a later run with a store fits it again.
func (j *job5) converged(res, start *converge.Result, stages, objective string) error {
	if err := res.Interrupted(objective); err != nil {
		return fmt.Errorf("%s %s seed %d: %w", j.dataset, j.method, j.seed, err)
	}
	c := &Convergence5{Converged: res.Converged, StoppedBy: res.StoppedBy, Stages: stages, Iterations: res.Iterations, Seconds: res.Seconds}
	if start != nil {
		c.Iterations, c.Seconds = c.Iterations+start.Iterations, c.Seconds+start.Seconds
	}
	j.run.Convergence = c
	return nil
}

// row5 summarises the runs of one Table 5 cell.
func row5(cell []job5, iters int) Row5 {
	j0 := cell[0]
	row := Row5{Dataset: j0.dataset, Method: j0.method, N: j0.n, Test: j0.test, Iterations: iters, Runs: len(cell)}
	var mse, nell, trainMSE, trainNELL, nn, secs []float64
	var imputed []Imputed
	converged := 0
	for _, j := range cell {
		perIter := j.secs // Adam's seconds per step
		if c := j.run.Convergence; c != nil {
			secs = append(secs, c.Seconds)
			perIter = c.Seconds / float64(max(c.Iterations, 1)) // the converging fit's, L-BFGS's and Adam's iterations together
			if c.Converged {
				converged++
			}
		}
		mse, nell = append(mse, j.run.MSE), append(nell, j.run.NELL)
		imputed = append(imputed, j.run.Imputed)
		trainMSE, trainNELL = append(trainMSE, j.run.TrainMSE), append(trainNELL, j.run.TrainNELL)
		if j.run.OneNNError != nil {
			nn = append(nn, *j.run.OneNNError)
		}
		row.SecPerIter += perIter / float64(len(cell))
		row.PerRun = append(row.PerRun, j.run)
	}
	row.MSE, row.NELL = meanTwoSE(mse), meanTwoSE(nell)
	row.TrainMSE, row.TrainNELL = meanTwoSE(trainMSE), meanTwoSE(trainNELL)
	if len(nn) == len(cell) {
		m := meanTwoSE(nn)
		row.OneNNError = &m
	}
	row.ImputedSummary = summariseImputed(imputed)
	if len(secs) > 0 {
		m := meanTwoSE(secs)
		row.ConvergedRuns, row.ConvergeSeconds = &converged, &m
	}
	if p, ok := Paper5(row.Dataset, row.Method); ok {
		row.Paper = &p
	}
	return row
}

// itersCell is the iterations column of a row: its Adam iterations, or, fitted to convergence,
// how many runs converged and their mean seconds.
func (row Row5) itersCell() string {
	if row.ConvergedRuns == nil {
		return fmt.Sprint(row.Iterations)
	}
	return fmt.Sprintf("to convergence: %d/%d converged, %s s", *row.ConvergedRuns, row.Runs, pm("%.0f", *row.ConvergeSeconds, row.Runs))
}

// claims5 checks the paper's Table 5 orderings (held-out MSE and NLL of the standard GPLVM against
// VAIS, per dataset) against ours: each row the paper has (its VAIS) against the same dataset's
// standard GPLVM, whatever rows lie between them.
func claims5(rows []Row5) []Claim {
	out := []Claim{}
	for _, a := range rows {
		if a.Method != "standard" || a.Paper == nil {
			continue
		}
		for _, b := range rows {
			if b.Dataset != a.Dataset || b.Method == "standard" || b.Paper == nil {
				continue
			}
			out = append(out, claimPair5(a, b)...)
		}
	}
	return out
}

// claimPair5 is claims5's two claims, held-out MSE and NLL, for the standard GPLVM's row a and
// row b of the same dataset.
func claimPair5(a, b Row5) []Claim {
	names := []string{a.Method, b.Method}
	when := fmt.Sprintf("%d iterations", a.Iterations)
	if a.ConvergedRuns != nil && b.ConvergedRuns != nil { // fitted with Converge, maybe stopped by its caps
		when = fmt.Sprintf("the end of fits to convergence (%d/%d and %d/%d converged)", *a.ConvergedRuns, a.Runs, *b.ConvergedRuns, b.Runs)
	}
	at := fmt.Sprintf(" at %s, mean of %s", when, seeds(a.Runs))
	if a.Runs != b.Runs {
		at = fmt.Sprintf(" at %s, means of %d and %d seeds (some diverged)", when, a.Runs, b.Runs)
	}
	return []Claim{
		orderClaim(a.Dataset+" held-out MSE", names, []float64{a.Paper.MSE.Mean, b.Paper.MSE.Mean},
			[]float64{a.MSE[0], b.MSE[0]}, true, "%.4g", " (10 runs)", at),
		orderClaim(a.Dataset+" held-out NLL", names, []float64{a.Paper.NLL.Mean, b.Paper.NLL.Mean},
			[]float64{a.NELL[0], b.NELL[0]}, true, "%.4g", " (10 runs)", at)}
}

// Tables returns Table 5 with the paper's values beside ours, and the claims checked.
func (r *Result5) Tables() []report.Table {
	t := report.Table{Title: fmt.Sprintf("Table 5 (%s). Standard GPLVM (MAP point latents, exact GP marginal likelihood) against "+
		"VAIS-GPLVM. Each subset is split: 90%% train, 10%% held out with half of each held-out point's entries hidden "+
		"(seeded). Held-out MSE and NELL score the hidden entries after fitting each held-out point's latent from its "+
		"observed entries with the trained model frozen (standard: MAP of h*; VAIS: infer.Latents with its chains): "+
		"MSE per entry in data units squared (images: pixels on [0, 1]); NELL = -sum over hidden entries of "+
		"E[log N(x | f, s^2)] per held-out point, nats. Train MSE / NELL (per point) reconstruct the training points "+
		"from their own latents, where an exact GP nearly interpolates. Mixture MSE / NELL: a Bayesian GPLVM's held-out scores under the "+
		"posterior predictive mixture over each point's particles (samples or chain ends) instead of at their weighted "+
		"mean; exact MSE / NELL: that mixture with the exact GP conditional on the training points at their latents (the "+
		"trained kernel and noise; every training point enters, as in k-NN) in place of the M inducing variables; refit MSE / "+
		"NELL: the same with the kernel variance, a factor on the lengthscales and the noise refitted by the exact marginal "+
		"likelihood of up to 1000 training points at their latents, and the held-out entries' noise variance chosen on 10%% of "+
		"the training points with half their entries hidden (infer.ValidatedExact). 1-NN error of the "+
		"training latents. Mean ± 2 s.e. "+
		"over the seeds. Paper columns: its printed MSE and NLL, mean (2 s.e.) over 10 runs, scale unstated.", settingsText(r.Settings)),
		Header: []string{"dataset", "method", "N", "held out", "iters", "held-out MSE", "paper MSE", "held-out NELL", "paper NLL",
			"mixture MSE", "mixture NELL", "exact MSE", "exact NELL", "refit MSE", "refit NELL", "train MSE", "train NELL", "1-NN error", "s/iter"}}
	for _, row := range r.Rows {
		var pmse, pnll *Value
		if row.Paper != nil {
			pmse, pnll = &row.Paper.MSE, &row.Paper.NLL
		}
		cells := []string{row.Dataset, methodCell(row.Method, row.Runs, row.DivergedSeeds),
			fmt.Sprint(row.N), fmt.Sprint(row.Test), row.itersCell(),
			pm("%.4f", row.MSE, row.Runs), paperCell(pmse), pm("%.3f", row.NELL, row.Runs), paperCell(pnll)}
		cells = append(cells, row.ImputedSummary.cells(row.Runs)...)
		t.Rows = append(t.Rows, append(cells, pm("%.4f", row.TrainMSE, row.Runs), pm("%.3f", row.TrainNELL, row.Runs),
			pmOpt("%.3f", row.OneNNError, row.Runs), fmt.Sprintf("%.3f", row.SecPerIter)))
	}
	out := []report.Table{t}
	if b := baselineTable(r.Baselines, fmt.Sprintf("MSE of the held-out hidden entries imputed from the training rows by their "+
		"column's mean, or by the mean of the %d training rows nearest over the held-out row's observed entries, or of the k "+
		"nearest with k chosen per seed from %v on 10%% of the training rows with half their entries hidden; and PPCA with "+
		"VAIS's Q fitted by EM on the training rows, imputing each held-out row's posterior mean given its observed entries, "+
		"NELL as the GPLVMs' (per held-out point); mean ± 2 s.e. over the seeds. Compare with the held-out MSE and NELL "+
		"columns.", protocol.KNN, baselines.KNNKs)); b != nil {
		out = append(out, *b)
	}
	if d := divergedTable(r.Diverged); d != nil {
		out = append(out, *d)
	}
	return withClaims(out, r.Claims, r.Settings)
}

// Markdown renders Table 5 (Tables) as Markdown.
func (r *Result5) Markdown() string { return withMadeWith(report.Markdown(r.Tables()), r.Settings) }
