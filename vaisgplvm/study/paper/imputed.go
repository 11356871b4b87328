package paper

import "github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"

// Imputed are one run's scores of the hidden entries beyond the single-latent MSE and NELL, nil
// where the run did not compute them: under the posterior predictive mixture over the
// reconstruction's particles (eval.Predictive; Pred), and under that mixture with the exact GP
// conditional in place of the sparse one (eval.Exact) at the trained hyperparameters (Exact) and
// refitted with a validated predictive noise (Refit; infer.ValidatedExact). Units as the row's
// MSE and NELL.
type Imputed struct {
	PredMSE   *float64 `json:"predictive_mse,omitempty"`
	PredNELL  *float64 `json:"predictive_nell,omitempty"`
	ExactMSE  *float64 `json:"exact_mse,omitempty"`
	ExactNELL *float64 `json:"exact_nell,omitempty"`
	RefitMSE  *float64 `json:"exact_refit_mse,omitempty"`
	RefitNELL *float64 `json:"exact_refit_nell,omitempty"`
}

// ImputedSummary is Imputed over a row's runs, mean ± 2 s.e.; a value is nil when a run lacks it
// (a training stored before it existed, or scored without --exact).
type ImputedSummary struct {
	PredMSE   *[2]float64 `json:"predictive_mse,omitempty"`
	PredNELL  *[2]float64 `json:"predictive_nell,omitempty"`
	ExactMSE  *[2]float64 `json:"exact_mse,omitempty"`
	ExactNELL *[2]float64 `json:"exact_nell,omitempty"`
	RefitMSE  *[2]float64 `json:"exact_refit_mse,omitempty"`
	RefitNELL *[2]float64 `json:"exact_refit_nell,omitempty"`
}

// imputedOf returns the scores an evaluation holds.
func imputedOf(e *eval.Evaluation) Imputed {
	var im Imputed
	if p := e.Predictive; p != nil {
		im.PredMSE, im.PredNELL = &p.MSE, &p.NELL
	}
	if p := e.Exact; p != nil {
		im.ExactMSE, im.ExactNELL = &p.MSE, &p.NELL
	}
	if p := e.ExactRefit; p != nil {
		im.RefitMSE, im.RefitNELL = &p.MSE, &p.NELL
	}
	return im
}

// summariseImputed returns the mean ± 2 s.e. of every value all runs have.
func summariseImputed(runs []Imputed) ImputedSummary {
	col := func(f func(Imputed) *float64) *[2]float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			p := f(r)
			if p == nil {
				return nil
			}
			v[i] = *p
		}
		if len(v) == 0 {
			return nil
		}
		m := meanTwoSE(v)
		return &m
	}
	return ImputedSummary{
		PredMSE:   col(func(r Imputed) *float64 { return r.PredMSE }),
		PredNELL:  col(func(r Imputed) *float64 { return r.PredNELL }),
		ExactMSE:  col(func(r Imputed) *float64 { return r.ExactMSE }),
		ExactNELL: col(func(r Imputed) *float64 { return r.ExactNELL }),
		RefitMSE:  col(func(r Imputed) *float64 { return r.RefitMSE }),
		RefitNELL: col(func(r Imputed) *float64 { return r.RefitNELL }),
	}
}

// cells renders the summary as the tables' mixture, exact and refit columns.
func (s ImputedSummary) cells(runs int) []string {
	return []string{pmOpt("%.4f", s.PredMSE, runs), pmOpt("%.3f", s.PredNELL, runs),
		pmOpt("%.4f", s.ExactMSE, runs), pmOpt("%.3f", s.ExactNELL, runs),
		pmOpt("%.4f", s.RefitMSE, runs), pmOpt("%.3f", s.RefitNELL, runs)}
}
