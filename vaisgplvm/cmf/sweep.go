package cmf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
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
	// Rise is how much the run's training curve still rose over its last tenth (CurveRise).
	Rise    *Rise   `json:"final_rise,omitempty"`
	Chosen  bool    `json:"chosen"`
	Seconds float64 `json:"seconds"` // training and fitting
}

// sweepLR chooses each family's learning rate among o.LRs by one rule: train o.SweepIters steps on
// y less a validation share o.Validation (drawn with the seed), fit the validation points' locals
// o.FitIters steps with the globals frozen, and keep the rate with the highest validation bound
// (o.Draws draws). The families go in order; with o.WarmStart cmf's sweep starts every run from
// mean-field's chosen sweep model, as the full run starts from mean-field's trained one. Errors: a
// family that diverged at every rate, a failed run, ctx's.
func sweepLR(ctx context.Context, o ExperimentOptions, order []string, y [][]float64) ([]LRScore, map[string]float64, error) {
	valIdx, fitIdx := split(len(y), max(1, int(math.Round(o.Validation*float64(len(y))))), o.Config.Seed, 0x5a11d)
	yFit, yVal := pick(y, fitIdx), pick(y, valIdx)
	so := o
	so.Iters = o.SweepIters
	var scores []LRScore
	chosen := map[string]float64{}
	var mf *Model
	for _, fam := range order {
		best, bestAt := math.Inf(-1), -1
		var bestModel *Model
		for _, lr := range o.LRs {
			s, m, err := sweepRun(ctx, so, fam, lr, yFit, yVal, mf)
			if err != nil {
				return scores, nil, fmt.Errorf("learning-rate sweep, family %s, lr %g: %w", fam, lr, err)
			}
			if s.Diverged == "" && s.Validation.PerPoint > best {
				best, bestAt, bestModel = s.Validation.PerPoint, len(scores), m
			}
			scores = append(scores, s)
		}
		if bestAt < 0 {
			return scores, nil, fmt.Errorf("learning-rate sweep: family %s diverged at every rate %v: give lower rates in the sweep", fam, o.LRs)
		}
		scores[bestAt].Chosen = true
		chosen[fam] = scores[bestAt].LR
		if fam == "meanfield" {
			mf = bestModel
		}
	}
	return scores, chosen, nil
}

// sweepRun trains one family at rate lr on yFit and scores it on yVal; a diverging run is a score
// with Diverged set, not an error.
func sweepRun(ctx context.Context, o ExperimentOptions, fam string, lr float64, yFit, yVal [][]float64, mf *Model) (LRScore, *Model, error) {
	s := LRScore{Family: fam, LR: lr}
	fr, err := trainFamily(ctx, o, fam, lr, yFit, mf, "sweep lr "+strconv.FormatFloat(lr, 'g', -1, 64))
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
	if errors.Is(err, ErrDiverged) {
		s.Diverged = err.Error()
		return s, nil, nil
	}
	if err != nil {
		return s, nil, err
	}
	return s, fr.Model, nil
}
