package train_test

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestScoreMissingExact: the exact GP conditional's hidden-entry MSE and NELL equal a float64
// reference built by hand (SE-ARD from the trained lengthscales and kernel variance, the complete
// rows' latents, an LU solve of K_CC + s^2 I) to 1e-8, on a toy with a learned mean (--mean-bias);
// a mask with no complete row is an error.
func TestScoreMissingExact(t *testing.T) {
	truth := toyData(30)
	x := make([][]float64, len(truth))
	mask := make([][]float64, len(truth))
	for i := range truth {
		x[i] = append([]float64(nil), truth[i]...)
		mask[i] = []float64{1, 1, 1, 1}
		if i%5 == 0 {
			mask[i] = []float64{1, 0, 1, 0}
			x[i][1], x[i][3] = math.NaN(), math.NaN()
		}
	}
	cfg := model.DefaultConfig("iwvi", 2)
	cfg.M, cfg.K, cfg.MeanBias = 6, 4, true
	m, err := model.New(cfg, x, mask)
	if err != nil {
		t.Fatal(err)
	}
	tr := train.New(m, testutil.Backend())
	if err := tr.Run(40, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	ev, err := tr.Evaluate(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := tr.CompleteExact(ev)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tr.ScoreMissingExact(truth, ev, ex)
	if err != nil {
		t.Fatal(err)
	}
	outs := mlmodel.MustExecOnceN(tr.Backend, tr.Ctx.Store(), func(ctx *mlmodel.Scope, h *Node) []*Node {
		g := h.Graph()
		return []*Node{m.Kernel.Lengthscales(ctx, g), m.Kernel.Diag(ctx, h), m.Lik.NoiseVariance(ctx, g),
			vars.New(ctx.At("inducing"), "mean_bias", make([]float64, 4)).ValueGraph(g)}
	}, ev.Latent[:1])
	ls, kv, s2, bias := vars.Flat64(outs[0]), vars.Flat64(outs[1])[0], vars.Flat64(outs[2])[0], vars.Flat64(outs[3])
	if bias[0] == 0 {
		t.Fatal("the learned mean is zero: the test would not see a missing bias")
	}
	var cond, damaged []int
	for i := range mask {
		if mask[i][1] == 0 {
			damaged = append(damaged, i)
		} else {
			cond = append(cond, i)
		}
	}
	k := func(a, b []float64) float64 {
		r2 := 0.0
		for q := range a {
			r2 += (a[q] - b[q]) * (a[q] - b[q]) / (ls[q] * ls[q])
		}
		return kv * math.Exp(-r2/2)
	}
	a := mat.NewDense(len(cond), len(cond), nil)
	xc := mat.NewDense(len(cond), 4, nil)
	for i, r := range cond {
		for j, c := range cond {
			a.Set(i, j, k(ev.Latent[r], ev.Latent[c]))
		}
		a.Set(i, i, a.At(i, i)+s2)
		for j := range 4 {
			xc.Set(i, j, truth[r][j]-bias[j])
		}
	}
	sse, nll, entries := 0.0, 0.0, 0
	for _, r := range damaged {
		kr := mat.NewDense(len(cond), 1, nil)
		for i, c := range cond {
			kr.Set(i, 0, k(ev.Latent[r], ev.Latent[c]))
		}
		var w mat.Dense
		if err := w.Solve(a, kr); err != nil {
			t.Fatal(err)
		}
		v := kv - mat.Dot(kr.ColView(0), w.ColView(0))
		for j := range 4 {
			if mask[r][j] != 0 {
				continue
			}
			mu := bias[j] + mat.Dot(w.ColView(0), xc.ColView(j))
			d := truth[r][j] - mu
			sse += d * d
			nll += 0.5*math.Log(2*math.Pi*s2) + (d*d+v)/(2*s2)
			entries++
		}
	}
	wantMSE, wantNELL := sse/float64(entries), nll/float64(len(damaged))
	if math.Abs(sc.MSE-wantMSE) > 1e-8 || math.Abs(sc.NELL-wantNELL) > 1e-8*math.Max(1, math.Abs(wantNELL)) {
		t.Errorf("exact MSE %.10g NELL %.10g, want %.10g and %.10g", sc.MSE, sc.NELL, wantMSE, wantNELL)
	}
	if sc.Entries != entries || sc.Rows != len(damaged) || sc.Components != 4 {
		t.Errorf("entries %d rows %d components %d, want %d, %d, 4", sc.Entries, sc.Rows, sc.Components, entries, len(damaged))
	}
	sparse, err := tr.ScoreMissing(truth, ev)
	if err != nil {
		t.Fatal(err)
	}
	if sparse.MSE == sc.MSE {
		t.Error("the exact conditional scored exactly as the sparse one: it did not run")
	}
	if _, err := tr.NewExact(truth[:3], ev.Latent[:2]); err == nil {
		t.Error("3 rows with 2 latents should be refused")
	}
	if _, err := tr.NewExact(x[:1], ev.Latent[:1]); err == nil {
		t.Error("a conditioning row with a missing (NaN) entry should be refused")
	}
	// no complete row
	for i := range mask {
		mask[i][1] = 0
	}
	m2, err := model.New(cfg, x, mask)
	if err != nil {
		t.Fatal(err)
	}
	tr2 := train.New(m2, testutil.Backend())
	ev2, err := tr2.Evaluate(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr2.CompleteExact(ev2); err == nil {
		t.Error("a mask without a complete row should be refused")
	}
}
