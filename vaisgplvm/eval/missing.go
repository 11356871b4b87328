package eval

import (
	"fmt"
	"math"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/data"
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
	// Conditional is the exact GP conditional that scored them (ScoreMissingExact), nil for the
	// sparse GP's.
	Conditional *Exact `json:"exact_conditional,omitempty"`
}

// ScoreMissing scores the missing entries (mask 0) of the model's data against truth [N, D] at the
// reconstruction latents ev.Latent [N, Q] (predictive means and per-entry variances of f, and the
// learned noise variance), and under the posterior predictive mixture over ev.Predictive's
// particles (MSEPredictive, NELLPredictive; one component when ev has none). An error when the
// model has no mask or truth has the wrong shape.
func ScoreMissing(t *train.Trainer, truth [][]float64, ev *Evaluation) (*MissingScores, error) {
	if err := checkMissing(t, truth, ev); err != nil {
		return nil, err
	}
	m := t.Model
	exec, err := mlmodel.NewExec(t.Backend, t.Ctx.Store(), func(ctx *mlmodel.Scope, h *Node) []*Node {
		post := gp.NewPosterior(ctx, h.Graph(), m.Inducing, m.Kernel)
		mg := post.Predict(h, true)
		return []*Node{mg.Mean, mg.Var, m.Lik.NoiseVariance(ctx, h.Graph())}
	})
	if err != nil {
		return nil, err
	}
	predict := func(h [][]float64) (*rowPredictive, error) {
		lat, err := vars.Matrix(h, m.DType())
		if err != nil {
			return nil, fmt.Errorf("score missing: latents: %w", err)
		}
		out, err := exec.Exec(lat)
		if err != nil {
			return nil, fmt.Errorf("score missing: %w", err)
		}
		return &rowPredictive{mean: vars.Rows(out[0]), vr: vars.Rows(out[1]), s2: vars.Flat64(out[2])[0]}, nil
	}
	return scoreHidden(truth, m.Mask, ev, predict)
}

// checkMissing returns an error when the model has no mask or truth or ev.Latent do not match it.
func checkMissing(t *train.Trainer, truth [][]float64, ev *Evaluation) error {
	if err := t.Ready(); err != nil {
		return err
	}
	m := t.Model
	if m.Mask == nil {
		return fmt.Errorf("score missing: the model has no observation mask")
	}
	if len(truth) != m.N || len(truth[0]) != m.D || len(ev.Latent) != m.N {
		return fmt.Errorf("score missing: truth is %dx%d and latents %d rows, want %dx%d", len(truth), len(truth[0]), len(ev.Latent), m.N, m.D)
	}
	return nil
}

// rowPredictive is a predictive at some rows' latents: means and variances of f [rows, D] and
// the noise variance s2.
type rowPredictive struct {
	mean, vr [][]float64
	s2       float64
}

// scoreHidden scores the entries mask hides against truth with predict, called at the damaged
// rows' latents only: once at the single latents ev.Latent, then once per particle of ev's
// posterior predictive mixture.
func scoreHidden(truth, mask [][]float64, ev *Evaluation, predict func(h [][]float64) (*rowPredictive, error)) (*MissingScores, error) {
	var rows []int
	for i := range mask {
		for _, o := range mask[i] {
			if o == 0 {
				rows = append(rows, i)
				break
			}
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("score missing: the mask hides no entry")
	}
	pred := ev.Predictive
	if pred == nil || pred.Particles == nil {
		pred = singleComponent(ev)
	}
	sc := &MissingScores{Components: len(pred.Particles), Rows: len(rows)}
	entry := func(x, mu, v, s2 float64) float64 {
		return -0.5*math.Log(2*math.Pi*s2) - ((x-mu)*(x-mu)+v)/(2*s2)
	}
	// the single latent
	p, err := predict(data.Rows(ev.Latent, rows))
	if err != nil {
		return nil, err
	}
	sse, nll := 0.0, 0.0
	for i, r := range rows {
		for j, x := range truth[r] {
			if mask[r][j] == 0 {
				d := x - p.mean[i][j]
				sse += d * d
				nll -= entry(x, p.mean[i][j], p.vr[i][j], p.s2)
				sc.Entries++
			}
		}
	}
	// the mixture: each component's predictive, then per damaged row a log-sum-exp over them
	mix := make([][]float64, len(rows))
	logs := make([][]float64, len(rows)) // [rows][S]: sum over the row's missing entries at h_s
	for i, r := range rows {
		mix[i], logs[i] = make([]float64, len(truth[r])), make([]float64, len(pred.Particles))
	}
	for k, h := range pred.Particles {
		p, err := predict(data.Rows(h, rows))
		if err != nil {
			return nil, err
		}
		for i, r := range rows {
			for j, x := range truth[r] {
				if mask[r][j] == 0 {
					mix[i][j] += pred.Weights[k][r] * p.mean[i][j]
					logs[i][k] += entry(x, p.mean[i][j], p.vr[i][j], p.s2)
				}
			}
		}
	}
	sseMix, nllMix := 0.0, 0.0
	for i, r := range rows {
		for j, x := range truth[r] {
			if mask[r][j] == 0 {
				sseMix += (x - mix[i][j]) * (x - mix[i][j])
			}
		}
		w := make([]float64, len(pred.Particles))
		for k := range w {
			w[k] = pred.Weights[k][r]
		}
		nllMix -= logMixture(w, logs[i])
	}
	sc.MSE, sc.NELL = sse/float64(sc.Entries), nll/float64(sc.Rows)
	sc.MSEPredictive, sc.NELLPredictive = sseMix/float64(sc.Entries), nllMix/float64(sc.Rows)
	return sc, nil
}
