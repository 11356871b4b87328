package train

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// MissingScores are the reconstruction scores of the entries the model never saw (mask 0),
// computed at the reconstruction latents of an Evaluation against the true values.
type MissingScores struct {
	MSE     float64 `json:"mse_missing"`     // mean over missing entries of (x - E[f])^2, data units squared
	NELL    float64 `json:"nell_missing"`    // -(1/#damaged rows) sum of E_q(f)[log N(x | f, s^2)] over missing entries, nats per damaged row
	Entries int     `json:"missing_entries"` // number of missing entries scored
	Rows    int     `json:"damaged_rows"`    // rows with at least one missing entry
	// MSEPredictive and NELLPredictive score the posterior predictive mixture
	// (Evaluation.Predictive) instead of the single latent: the mixture means sum_s w_s E[f(h_s)],
	// and -(1/#damaged rows) sum over damaged rows of log sum_s w_s exp(sum over the row's missing
	// entries of E_q(f)[log N(x | f(h_s), s^2)]). Equal to MSE and NELL with one component (MF).
	MSEPredictive  float64 `json:"mse_missing_predictive"`
	NELLPredictive float64 `json:"nell_missing_predictive"`
	Components     int     `json:"components"` // particles per point of the mixture
}

// ScoreMissing scores the missing entries (mask 0) of the model's data against truth [N, D] at the
// reconstruction latents ev.Latent [N, Q] (predictive means and per-entry variances of f, and the
// learned noise variance), and under the posterior predictive mixture over ev.Predictive's
// particles (MSEPredictive, NELLPredictive; one component when ev has none). An error when the
// model has no mask or truth has the wrong shape.
func (t *Trainer) ScoreMissing(truth [][]float64, ev *Evaluation) (*MissingScores, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	m := t.Model
	if m.Mask == nil {
		return nil, fmt.Errorf("score missing: the model has no observation mask")
	}
	if len(truth) != m.N || len(truth[0]) != m.D || len(ev.Latent) != m.N {
		return nil, fmt.Errorf("score missing: truth is %dx%d and latents %d rows, want %dx%d", len(truth), len(truth[0]), len(ev.Latent), m.N, m.D)
	}
	exec, err := mlmodel.NewExec(t.Backend, t.Ctx.Store(), func(ctx *mlmodel.Scope, h *Node) []*Node {
		post := gp.NewPosterior(ctx, h.Graph(), m.Inducing, m.Kernel)
		mg := post.Predict(h, true)
		return []*Node{mg.Mean, mg.Var, m.Lik.NoiseVariance(ctx, h.Graph())}
	})
	if err != nil {
		return nil, err
	}
	predict := func(h [][]float64) (mean, vr [][]float64, s2 float64, err error) {
		lat, err := vars.Matrix(h, m.DType())
		if err != nil {
			return nil, nil, 0, fmt.Errorf("score missing: latents: %w", err)
		}
		out, err := exec.Exec(lat)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("score missing: %w", err)
		}
		return matrix(out[0]), matrix(out[1]), vars.Flat64(out[2])[0], nil
	}
	pred := ev.Predictive
	if pred == nil || pred.Particles == nil {
		pred = singleComponent(ev)
	}
	sc := &MissingScores{Components: len(pred.Particles)}
	// the single latent
	mean, vr, s2, err := predict(ev.Latent)
	if err != nil {
		return nil, err
	}
	entry := func(x, mu, v float64) float64 { return -0.5*math.Log(2*math.Pi*s2) - ((x-mu)*(x-mu)+v)/(2*s2) }
	sse, nll := 0.0, 0.0
	for i := range truth {
		damaged := false
		for j, x := range truth[i] {
			if m.Mask[i][j] != 0 {
				continue
			}
			damaged = true
			r := x - mean[i][j]
			sse += r * r
			nll -= entry(x, mean[i][j], vr[i][j])
			sc.Entries++
		}
		if damaged {
			sc.Rows++
		}
	}
	// the mixture: each component's predictive, then per damaged row a log-sum-exp over them
	mix := make([][]float64, m.N)
	logs := make([][]float64, m.N) // [N][S]: sum over the row's missing entries at h_s
	for i := range mix {
		mix[i], logs[i] = make([]float64, m.D), make([]float64, len(pred.Particles))
	}
	for k, h := range pred.Particles {
		mean, vr, _, err := predict(h)
		if err != nil {
			return nil, err
		}
		for i := range truth {
			for j, x := range truth[i] {
				if m.Mask[i][j] == 0 {
					mix[i][j] += pred.Weights[k][i] * mean[i][j]
					logs[i][k] += entry(x, mean[i][j], vr[i][j])
				}
			}
		}
	}
	sseMix, nllMix := 0.0, 0.0
	for i := range truth {
		damaged := false
		for j, x := range truth[i] {
			if m.Mask[i][j] == 0 {
				damaged = true
				sseMix += (x - mix[i][j]) * (x - mix[i][j])
			}
		}
		if damaged {
			w := make([]float64, len(pred.Particles))
			for k := range w {
				w[k] = pred.Weights[k][i]
			}
			nllMix -= logMixture(w, logs[i])
		}
	}
	if sc.Entries == 0 {
		return nil, fmt.Errorf("score missing: the mask hides no entry")
	}
	sc.MSE, sc.NELL = sse/float64(sc.Entries), nll/float64(sc.Rows)
	sc.MSEPredictive, sc.NELLPredictive = sseMix/float64(sc.Entries), nllMix/float64(sc.Rows)
	return sc, nil
}
