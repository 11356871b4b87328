package eval_test

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// TestScoreMissing: the missing-entry MSE matches metrics on the Evaluate reconstruction, and the
// missing-entry NELL matches the likelihood's masked expected log-likelihood with the mask inverted
// (a different code path: MaskedMarginals instead of per-output variances).
func TestScoreMissing(t *testing.T) {
	truth, x, mask := toy.Hidden()
	cfg := model.DefaultConfig("mf", 2)
	cfg.M = 6
	tr := toy.Fit(t, cfg, x, mask, 40)
	m := tr.Model
	ev, err := eval.Evaluate(tr, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := eval.ScoreMissing(tr, truth, ev)
	if err != nil {
		t.Fatal(err)
	}
	inv := make([][]float64, len(mask))
	for i := range mask {
		inv[i] = make([]float64, 4)
		for j := range inv[i] {
			inv[i][j] = 1 - mask[i][j]
		}
	}
	if want, _ := metrics.MSE(truth, ev.Recon, inv); math.Abs(sc.MSE-want) > 1e-9 || sc.Entries != 12 || sc.Rows != 6 {
		t.Errorf("missing MSE %g (entries %d, rows %d), want %g over 12 entries in 6 rows", sc.MSE, sc.Entries, sc.Rows, want)
	}
	out := mlmodel.MustExecOnce(tr.Backend, tr.Ctx.Store(), func(ctx *mlmodel.Scope, xt, mk, h *Node) *Node {
		post := gp.NewPosterior(ctx, h.Graph(), m.Inducing, m.Kernel)
		return ReduceAllSum(m.Lik.ExpectedLogLik(ctx, post, xt, mk, h))
	}, truth, inv, ev.Latent)
	if want := -vars.Flat64(out)[0] / 6; math.Abs(sc.NELL-want) > 1e-8 {
		t.Errorf("missing NELL %g, want %g", sc.NELL, want)
	}
	if _, err := eval.ScoreMissing(toy.Trainer(t, "mf", nil), truth, ev); err == nil {
		t.Error("a model without a mask should not score missing entries")
	}
}
