package train

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
)

// Evaluation holds the metrics of a trained model on its full data (see package metrics for the
// definitions).
type Evaluation struct {
	NegELBO    float64     `json:"neg_elbo_per_point"`
	MSE        float64     `json:"mse"`
	NELL       float64     `json:"nell_per_point"`
	OneNNError *float64    `json:"one_nn_error,omitempty"`
	Latent     [][]float64 `json:"-"` // reconstruction latents [N, Q]
	Recon      [][]float64 `json:"-"` // predictive means [N, D]
}

// Evaluate computes the metrics on all N points, averaging the bound over draws noise draws
// (iteration seeds far from the training ones). labels may be nil.
func (t *Trainer) Evaluate(draws int, labels []int) (*Evaluation, error) {
	m := t.Model
	full := *m
	full.Cfg.Batch = 0
	exec, err := context.NewExec(t.Backend, t.Ctx, func(ctx *context.Context, x, mask, idx, eps0, chain *Node) []*Node {
		if !m.HasMask() {
			mask = nil
		}
		res, _ := full.Bound(ctx, x, mask, idx, eps0, chain)
		mean, ell := full.Predict(ctx, x, mask, res.Recon)
		return []*Node{res.ELBO, res.Recon, mean, ell}
	})
	if err != nil {
		return nil, err
	}
	ev := &Evaluation{}
	for k := 0; k < draws; k++ {
		x, mask, idx, eps0, chain := Inputs(&full, m.Cfg.Seed+1_000_003, k)
		out, err := exec.Exec(cleanNaN(x), mask, idx, eps0, chain)
		if err != nil {
			return nil, err
		}
		ev.NegELBO -= scalar(out[0]) / float64(m.N) / float64(draws)
		if k == 0 {
			ev.Latent = matrix(out[1])
			ev.Recon = matrix(out[2])
			ell := tensors.MustCopyFlatData[float64](out[3])
			for _, v := range ell {
				ev.NELL -= v / float64(m.N)
			}
		}
	}
	ev.MSE = metrics.MSE(m.X, ev.Recon, m.Mask)
	if labels != nil {
		e := metrics.OneNNError(ev.Latent, labels)
		ev.OneNNError = &e
	}
	return ev, nil
}

func matrix(t *tensors.Tensor) [][]float64 {
	flat := tensors.MustCopyFlatData[float64](t)
	r, c := t.Shape().Dim(0), t.Shape().Dim(1)
	out := make([][]float64, r)
	for i := range out {
		out[i] = flat[i*c : (i+1)*c]
	}
	return out
}
