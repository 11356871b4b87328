package eval

import (
	"fmt"
	"math"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"

	"gonum.org/v1/gonum/optimize"
)

// ValidateExactNoise sets ex.PredictiveNoise to the noise variance s^2 that minimises the
// posterior predictive mixture's NELL of the entries t's mask hides (truth [N, D], particles and
// weights from ev, as ScoreMissingExact scores them), and returns that NELL per damaged row. The
// means and variances of f do not depend on s^2, so they are predicted once per particle and
// a Nelder-Mead search over log s^2 (kept within 10^-3..10^3 times ex.Noise) finds it. Meant for validation rows (rows
// held out of ex's conditioning rows and damaged as the rows to impute are): the chosen s^2 then
// prices the error that a latent resting on part of a row adds. Errors: those of
// ScoreMissingExact, a search that finds no finite NELL.
func ValidateExactNoise(t *train.Trainer, truth [][]float64, ev *Evaluation, ex *Exact) (float64, error) {
	if err := checkExact(t, truth, ev, ex); err != nil {
		return 0, err
	}
	var preds []*rowPredictive // per call: the single latent, then each particle
	record := func(h [][]float64) (*rowPredictive, error) {
		p, err := ex.predict(h)
		if err == nil {
			preds = append(preds, p)
		}
		return p, err
	}
	if _, err := scoreHidden(truth, t.Model.Mask, ev, record); err != nil {
		return 0, err
	}
	replay := func(s2 float64) func([][]float64) (*rowPredictive, error) {
		i := 0
		return func([][]float64) (*rowPredictive, error) {
			p := *preds[i]
			p.s2, i = s2, i+1
			return &p, nil
		}
	}
	nell := func(logS2 float64) float64 {
		sc, err := scoreHidden(truth, t.Model.Mask, ev, replay(math.Exp(logS2)))
		if err != nil || math.IsNaN(sc.NELLPredictive) {
			return math.Inf(1)
		}
		return sc.NELLPredictive
	}
	base := math.Log(ex.Noise)
	res, err := optimize.Minimize(optimize.Problem{Func: func(x []float64) float64 { return nell(x[0]) }},
		[]float64{base}, &optimize.Settings{FuncEvaluations: 60, Converger: &optimize.FunctionConverge{Absolute: 1e-4, Iterations: 8}},
		&optimize.NelderMead{SimplexSize: 1})
	if err != nil && res == nil {
		return 0, fmt.Errorf("exact predictive: noise validation: %w", err)
	}
	best := math.Min(math.Max(res.X[0], base-3*math.Ln10), base+3*math.Ln10)
	v := nell(best)
	if math.IsInf(v, 1) {
		return 0, fmt.Errorf("exact predictive: noise validation found no finite NELL")
	}
	ex.PredictiveNoise = math.Exp(best)
	return v, nil
}
