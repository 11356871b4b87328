package cmf

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// LRScore is one run of the learning-rate sweep (ExperimentOptions.LRs): a family trained at LR on
// the training points less the validation share, scored by its bound on the validation points
// after fitting their locals (nats per point, higher is better, ± MC s.e.).
type LRScore struct {
	Family     string   `json:"family"`
	LR         float64  `json:"lr"`
	Validation Estimate `json:"validation_bound"`
	// Diverged is the training error of a rate that diverged ("" otherwise; Validation is then zero).
	Diverged string `json:"diverged,omitempty"`
	// Rise is how much the run's training curve still rose over its last fifth (CurveRise).
	Rise    *Rise   `json:"final_rise,omitempty"`
	Chosen  bool    `json:"chosen"`
	Seconds float64 `json:"seconds"` // training and fitting
}

// MaxSweepExtensions is how many rates the sweep adds past an end of the given ones that wins.
const MaxSweepExtensions = 3

// sweepLR chooses each family's learning rate by one rule: train o.SweepIters steps on y less a
// validation share o.Validation (drawn with the seed), fit the validation points' locals
// o.FitIters steps with the globals frozen, and keep the rate with the highest validation bound
// (o.Draws draws). The rates are o.LRs, and while the best is the lowest or the highest rate tried
// the grid extends past that end by its own ratio there (up to MaxSweepExtensions rates), so that
// the chosen rate is bracketed unless the table says otherwise. The families go in order; with
// o.WarmStart cmf's sweep starts every run from mean-field's chosen sweep model, as the full run
// starts from mean-field's trained one. Errors: a family that diverged at every rate, a failed run,
// ctx's.
func sweepLR(ctx context.Context, o ExperimentOptions, order []string, y [][]float64) ([]LRScore, map[string]float64, error) {
	valIdx, fitIdx := split(len(y), max(1, int(math.Round(o.Validation*float64(len(y))))), o.Config.Seed, 0x5a11d)
	yFit, yVal := data.Rows(y, fitIdx), data.Rows(y, valIdx)
	so := o
	so.Iters = o.SweepIters
	var scores []LRScore
	chosen := map[string]float64{}
	var mf *Model
	for _, fam := range order {
		fs, models, err := sweepFamily(ctx, so, fam, yFit, yVal, mf)
		scores = append(scores, fs...)
		if err != nil {
			return scores, nil, err
		}
		best := bestRate(fs) // >= 0: sweepFamily errs when every rate diverged
		scores[len(scores)-len(fs)+best].Chosen = true
		chosen[fam] = fs[best].LR
		if fam == "meanfield" {
			mf = models[best]
		}
	}
	return scores, chosen, nil
}

// sweepFamily scores family fam at o.LRs, extending the grid past a winning end (sweepLR), and
// returns the scores in increasing rate with their trained models (nil for a diverged rate).
// Errors: every rate diverged, a failed run.
func sweepFamily(ctx context.Context, o ExperimentOptions, fam string, yFit, yVal [][]float64, mf *Model) ([]LRScore, []*Model, error) {
	rates := slices.Clone(o.LRs)
	slices.Sort(rates)
	rates = slices.Compact(rates)
	var scores []LRScore
	var models []*Model
	run := func(lr float64, at int) error {
		s, m, err := sweepRun(ctx, o, fam, lr, yFit, yVal, mf)
		if err != nil {
			return fmt.Errorf("learning-rate sweep, family %s, lr %g: %w", fam, lr, err)
		}
		scores, models = slices.Insert(scores, at, s), slices.Insert(models, at, m)
		return nil
	}
	for i, lr := range rates {
		if err := run(lr, i); err != nil {
			return scores, models, err
		}
	}
	for ext := 0; ; ext++ {
		best, n := bestRate(scores), len(scores)
		var err error
		switch {
		case best < 0:
			return scores, models, fmt.Errorf("learning-rate sweep: family %s diverged at every rate %v: give lower rates in the sweep", fam, rates)
		case n < 2 || ext == MaxSweepExtensions || (best > 0 && best < n-1):
			return scores, models, nil
		case best == n-1:
			err = run(scores[n-1].LR*scores[n-1].LR/scores[n-2].LR, n)
		default: // best == 0
			err = run(scores[0].LR*scores[0].LR/scores[1].LR, 0)
		}
		if err != nil {
			return scores, models, err
		}
	}
}

// bestRate returns the index of the highest validation bound among the scores that did not
// diverge, -1 when all did.
func bestRate(scores []LRScore) int {
	best := -1
	for i, s := range scores {
		if s.Diverged == "" && (best < 0 || s.Validation.PerPoint > scores[best].Validation.PerPoint) {
			best = i
		}
	}
	return best
}

// sweepRun trains one family at rate lr on yFit and scores it on yVal; a run that diverges in
// training or fitting, or whose validation bound is not finite, is a score with Diverged set, not
// an error.
func sweepRun(ctx context.Context, o ExperimentOptions, fam string, lr float64, yFit, yVal [][]float64, mf *Model) (LRScore, *Model, error) {
	s := LRScore{Family: fam, LR: lr}
	fr, err := trainFamily(ctx, o, fam, lr, yFit, mf, fmt.Sprintf("sweep lr %.3g", lr))
	var held *Model
	if err == nil {
		held, err = fr.Model.Fit(ctx, yVal, o.FitIters)
	}
	if err == nil && ctx.Err() == nil {
		s.Validation, err = held.Bound(o.Draws)
	}
	if err := ctx.Err(); err != nil {
		return s, nil, err
	}
	if fr != nil {
		s.Rise, s.Seconds = fr.Rise, fr.Model.Seconds
	}
	if held != nil {
		s.Seconds += held.Seconds
	}
	if option.AsDiverged(err) != nil {
		s.Diverged = err.Error()
		return s, nil, nil
	}
	if err != nil {
		return s, nil, err
	}
	return s, fr.Model, nil
}
