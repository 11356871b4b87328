package paper

import (
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
)

// Row is one line of Tables 1-3: a dataset, a method and an iteration count, with each metric's
// mean and two standard errors over the runs ([2]float64{mean, 2 s.e.}), each run's own values in
// PerRun, and the paper's printed row for the same cell in Paper (nil where it prints none).
type Row struct {
	Dataset    string     `json:"dataset"`
	Method     string     `json:"method"`
	Iterations int        `json:"iterations"`
	Runs       int        `json:"runs"`
	NegELBO    [2]float64 `json:"neg_elbo_per_point"` // nats per point (per image in tables 2, 3)
	// NegELBOSE is the Monte Carlo standard error of NegELBO's mean from the evaluations' noise
	// draws: sqrt(sum_r se_r^2) / runs over the runs' own standard errors (eval.Evaluation).
	NegELBOSE float64 `json:"neg_elbo_mc_se"`
	// KLU is KL(q(u) || p(u)) / N, the part of NegELBO that q(u) costs (eval.Evaluation.KLUPerPoint).
	KLU        [2]float64  `json:"kl_u_per_point"`
	MSE        [2]float64  `json:"mse"`            // per entry, data units squared
	NELL       [2]float64  `json:"nell_per_point"` // nats per point (per damaged image in tables 2, 3)
	OneNNError *[2]float64 `json:"one_nn_error,omitempty"`
	// ImputedSummary: the mixture's and the exact conditional's scores (Tables 1-3; nil where a
	// run's evaluation has none: stored before they existed, or trained without --exact).
	ImputedSummary
	SecPerIter float64 `json:"seconds_per_iteration"`
	// ESS and weight entropy of K weights per damaged image (Table 3 only).
	ESS     *[2]float64 `json:"ess,omitempty"`
	Entropy *[2]float64 `json:"weight_entropy,omitempty"`
	// ESSDefinitions are the mean per-image ESS under the definitions of eval.ESSBreakdown (Table 3
	// only), mean ± 2 s.e. over the seeds.
	ESSDefinitions *ESSDefinitions `json:"ess_definitions,omitempty"`
	// FinalRise is how much the runs' training curves still climbed over the last fifth of the
	// iterations up to this row (metrics.CurveRise of the -ELBO per point of each mini-batch step:
	// the bound's mean over the last fifth minus its mean over the fifth before), mean ± 2 s.e.
	// over the runs, nats per point; StillMoving counts the runs whose rise is beyond two of its
	// own standard errors (metrics.Rise.Flat: not flat), and FallingBack those of them whose bound
	// got worse (metrics.Rise.FallingBack). All nil where no curve was recorded.
	FinalRise   *[2]float64 `json:"final_rise,omitempty"`
	StillMoving *int        `json:"runs_still_moving,omitempty"`
	FallingBack *int        `json:"runs_falling_back,omitempty"`
	// PerRun holds every run's values, in seed order, so that methods can be compared seed by
	// seed (run r of every method uses seed r: the same noise for the data's hidden pixels).
	PerRun []RunResult `json:"per_run"`
	// DivergedSeeds are the seeds of the cell whose training diverged before this row's
	// iterations (Result.Diverged has where and why); Runs and PerRun leave them out.
	DivergedSeeds []uint64 `json:"diverged_seeds,omitempty"`
	// Paper is the paper's row for this dataset, method and iteration count (nil: none printed).
	Paper *PaperRow `json:"paper,omitempty"`
}

// RunResult is one run's values in a Row: its seed and the metrics in the Row's units.
type RunResult struct {
	Seed       uint64   `json:"seed"`
	NegELBO    float64  `json:"neg_elbo_per_point"`
	NegELBOSE  float64  `json:"neg_elbo_mc_se"` // Monte Carlo standard error of NegELBO
	MSE        float64  `json:"mse"`
	NELL       float64  `json:"nell_per_point"`
	OneNNError *float64 `json:"one_nn_error,omitempty"`
	Imputed
	ESS     *float64 `json:"ess,omitempty"`
	Entropy *float64 `json:"weight_entropy,omitempty"`
	// FinalRise is the run's curve's rise over its last fifth up to the row's iterations.
	FinalRise *metrics.Rise `json:"final_rise,omitempty"`
}

// riseOf fills in row's convergence columns from the runs' curves cut at the row's iterations
// (curves[r] nil or too short: none for the row).
func riseOf(row *Row, curves [][]float64) {
	var rises []float64
	moving, back := 0, 0
	for r, c := range curves {
		if len(c) < row.Iterations {
			return
		}
		rise, err := metrics.CurveRise(c[:row.Iterations])
		if err != nil {
			return
		}
		row.PerRun[r].FinalRise = &rise
		rises = append(rises, rise.PerPoint)
		if !rise.Flat() {
			moving++
		}
		if rise.FallingBack() {
			back++
		}
	}
	if len(rises) == 0 {
		return
	}
	v := meanTwoSE(rises)
	row.FinalRise, row.StillMoving, row.FallingBack = &v, &moving, &back
}

// summarise returns the Row of the evaluations evs of one cell, run r with seed seeds[r].
func summarise(ds, method string, iters int, evs []*eval.Evaluation, seeds []uint64, secs float64) Row {
	col := func(f func(*eval.Evaluation) float64) [2]float64 {
		v := make([]float64, len(evs))
		for i, e := range evs {
			v[i] = f(e)
		}
		return meanTwoSE(v)
	}
	per := make([]RunResult, len(evs))
	sumVar := 0.0
	for i, e := range evs {
		per[i] = RunResult{Seed: seeds[i], NegELBO: e.NegELBO, MSE: e.MSE, NELL: e.NELL, OneNNError: e.OneNNError}
		per[i].Imputed = imputedOf(e)
		if e.NegELBOSE != nil {
			per[i].NegELBOSE = *e.NegELBOSE
			sumVar += *e.NegELBOSE * *e.NegELBOSE
		}
	}
	row := Row{Dataset: ds, Method: method, Iterations: iters, Runs: len(evs), SecPerIter: secs,
		NegELBO:    col(func(e *eval.Evaluation) float64 { return e.NegELBO }),
		KLU:        col(func(e *eval.Evaluation) float64 { return e.KLUPerPoint }),
		MSE:        col(func(e *eval.Evaluation) float64 { return e.MSE }),
		NELL:       col(func(e *eval.Evaluation) float64 { return e.NELL }),
		OneNNError: oneNN(evs),
		PerRun:     per,
		NegELBOSE:  math.Sqrt(sumVar) / float64(len(evs)),
	}
	imputed := make([]Imputed, len(per))
	for i := range per {
		imputed[i] = per[i].Imputed
	}
	row.ImputedSummary = summariseImputed(imputed)
	if p, ok := Paper(ds, method, iters); ok {
		row.Paper = &p
	}
	return row
}

// oneNN summarises the 1-NN errors, nil when the data has no labels.
func oneNN(evs []*eval.Evaluation) *[2]float64 {
	v := make([]float64, len(evs))
	for i, e := range evs {
		if e.OneNNError == nil {
			return nil
		}
		v[i] = *e.OneNNError
	}
	m := meanTwoSE(v)
	return &m
}

// meanTwoSE returns the mean of v and two standard errors (metrics.MeanAndTwoSE) as a pair.
func meanTwoSE(v []float64) [2]float64 {
	m, se := metrics.MeanAndTwoSE(v)
	return [2]float64{m, se}
}

// ESSDefinitions are a Table 3 row's mean per-image ESS under each definition of
// eval.ESSBreakdown, mean ± 2 s.e. over the seeds (nil where a definition does not apply).
type ESSDefinitions struct {
	Particles  *[2]float64 `json:"particles,omitempty"`  // the method's own K chains or samples (the ESS column)
	Q0Samples  [2]float64  `json:"q0_samples"`           // K samples of the model's q0, for every method
	PerPixel   [2]float64  `json:"per_pixel"`            // per-entry weights of K samples of q0, mean over observed pixels
	Increments *[2]float64 `json:"increments,omitempty"` // one chain's K incremental weights (annealed bounds)
}

// essDefinitions summarises snapshot s of the jobs of one cell.
func essDefinitions(cell []job, s int) *ESSDefinitions {
	var part, q0, pix, inc []float64
	for _, j := range cell {
		e := j.breakdowns[s]
		q0, pix = append(q0, stat.Mean(e.Q0Samples, nil)), append(pix, stat.Mean(e.PerPixel, nil))
		if e.Particles != nil {
			part = append(part, stat.Mean(e.Particles, nil))
		}
		if e.Increments != nil {
			inc = append(inc, stat.Mean(e.Increments, nil))
		}
	}
	d := &ESSDefinitions{Q0Samples: meanTwoSE(q0), PerPixel: meanTwoSE(pix)}
	if len(part) == len(cell) {
		v := meanTwoSE(part)
		d.Particles = &v
	}
	if len(inc) == len(cell) {
		v := meanTwoSE(inc)
		d.Increments = &v
	}
	return d
}
