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
}

// ScoreMissing scores the missing entries (mask 0) of the model's data against truth [N, D] at the
// reconstruction latents ev.Latent [N, Q]: predictive means and per-entry variances of f, and the
// learned noise variance. An error when the model has no mask or truth has the wrong shape.
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
	lat, err := vars.Matrix(ev.Latent, m.DType())
	if err != nil {
		return nil, fmt.Errorf("score missing: latent means: %w", err)
	}
	out, err := exec.Exec(lat)
	if err != nil {
		return nil, fmt.Errorf("score missing: %w", err)
	}
	mean, vr := matrix(out[0]), matrix(out[1])
	s2 := vars.Flat64(out[2])[0]
	sc := &MissingScores{}
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
			nll += 0.5*math.Log(2*math.Pi*s2) + (r*r+vr[i][j])/(2*s2)
			sc.Entries++
		}
		if damaged {
			sc.Rows++
		}
	}
	if sc.Entries == 0 {
		return nil, fmt.Errorf("score missing: the mask hides no entry")
	}
	sc.MSE = sse / float64(sc.Entries)
	sc.NELL = nll / float64(sc.Rows)
	return sc, nil
}
