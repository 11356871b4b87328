package eval_test

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestScoreMissingExact: the exact GP conditional's hidden-entry MSE and NELL equal a float64
// reference built by hand (SE-ARD from the trained lengthscales and kernel variance, the complete
// rows' latents, an LU solve of K_CC + s^2 I) to 1e-8, on a toy with a learned mean (--mean-bias),
// at the trained hyperparameters and at the refit's; the refit's marginal likelihood is the
// reference's, above the trained hyperparameters' and not beaten by 10% moves of any of its three;
// bad shapes, NaN rows and a mask with no complete row are errors.
func TestScoreMissingExact(t *testing.T) {
	truth, x, mask := toy.Hidden()
	cfg := model.DefaultConfig("iwvi", 2)
	cfg.M, cfg.K, cfg.MeanBias = 6, 4, true
	tr := toy.Fit(t, cfg, x, mask, 40)
	ev, err := eval.Evaluate(tr, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := eval.CompleteExact(tr, ev, eval.ExactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := eval.ScoreMissingExact(tr, truth, ev, ex)
	if err != nil {
		t.Fatal(err)
	}
	m := tr.Model
	outs := mlmodel.MustExecOnceN(tr.Backend, tr.Ctx.Store(), func(ctx *mlmodel.Scope, h *Node) []*Node {
		g := h.Graph()
		return []*Node{m.Kernel.Lengthscales(ctx, g), m.Kernel.Diag(ctx, h), m.Lik.NoiseVariance(ctx, g),
			vars.New(ctx.At("inducing"), "mean_bias", make([]float64, 4)).ValueGraph(g)}
	}, ev.Latent[:1])
	ls, kv, s2, bias := vars.Flat64(outs[0]), vars.Flat64(outs[1])[0], vars.Flat64(outs[2])[0], vars.Flat64(outs[3])
	if bias[0] == 0 {
		t.Fatal("the learned mean is zero: the test would not see a missing bias")
	}
	ref := exactRef{truth: truth, mask: mask, latent: ev.Latent, ls: ls, kv: kv, bias: bias}
	wantMSE, wantNELL, entries, rows := ref.scores(1, 1, s2)
	if math.Abs(sc.MSE-wantMSE) > 1e-8 || math.Abs(sc.NELL-wantNELL) > 1e-8*math.Max(1, math.Abs(wantNELL)) {
		t.Errorf("exact MSE %.10g NELL %.10g, want %.10g and %.10g", sc.MSE, sc.NELL, wantMSE, wantNELL)
	}
	if sc.Entries != entries || sc.Rows != rows || sc.Components != 4 {
		t.Errorf("entries %d rows %d components %d, want %d, %d, 4", sc.Entries, sc.Rows, sc.Components, entries, rows)
	}
	sparse, err := eval.ScoreMissing(tr, truth, ev)
	if err != nil {
		t.Fatal(err)
	}
	if sparse.MSE == sc.MSE {
		t.Error("the exact conditional scored exactly as the sparse one: it did not run")
	}
	if _, err := eval.NewExact(tr, truth[:3], ev.Latent[:2], eval.ExactOptions{}); err == nil {
		t.Error("3 rows with 2 latents should be refused")
	}
	if _, err := eval.NewExact(tr, x[:1], ev.Latent[:1], eval.ExactOptions{}); err == nil {
		t.Error("a conditioning row with a missing (NaN) entry should be refused")
	}
	// the refit: predictions at its hyperparameters, and a maximum of the marginal likelihood
	rex, err := eval.CompleteExact(tr, ev, eval.ExactOptions{Refit: true})
	if err != nil {
		t.Fatal(err)
	}
	rsc, err := eval.ScoreMissingExact(tr, truth, ev, rex)
	if err != nil {
		t.Fatal(err)
	}
	c, a, noise := rex.LengthscaleFactor, rex.VarianceFactor, rex.Noise
	if !rex.Refitted || rex.FitRows != 24 || (c == 1 && a == 1 && noise == s2) {
		t.Errorf("refit %+v: want new hyperparameters from the 24 complete rows", rex)
	}
	if wantMSE, wantNELL, _, _ := ref.scores(c, a, noise); math.Abs(rsc.MSE-wantMSE) > 1e-8 || math.Abs(rsc.NELL-wantNELL) > 1e-8*math.Max(1, math.Abs(wantNELL)) {
		t.Errorf("refitted exact MSE %.10g NELL %.10g, want %.10g and %.10g", rsc.MSE, rsc.NELL, wantMSE, wantNELL)
	}
	best := ref.negLogLik(c, a, noise)
	if math.Abs(best-rex.NegLogLik) > 1e-8 {
		t.Errorf("refit's -log p per entry %.10g, the reference's %.10g", rex.NegLogLik, best)
	}
	if start := ref.negLogLik(1, 1, s2); !(best < start) {
		t.Errorf("refit -log p per entry %.6g, not below the trained hyperparameters' %.6g", best, start)
	}
	for _, f := range [][3]float64{{1.1, 1, 1}, {0.9, 1, 1}, {1, 1.1, 1.1}, {1, 0.9, 0.9}, {1, 1, 1.1}, {1, 1, 0.9}} {
		if v := ref.negLogLik(c*f[0], a*f[1], noise*f[2]); v < best-1e-5 {
			t.Errorf("-log p per entry %.8g at the refit times %v, below the refit's %.8g: not a maximum", v, f, best)
		}
	}
	// no complete row
	for i := range mask {
		mask[i][1] = 0
	}
	m2, err := model.New(cfg, x, mask)
	if err != nil {
		t.Fatal(err)
	}
	tr2, err := train.New(m2, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	ev2, err := eval.Evaluate(tr2, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eval.CompleteExact(tr2, ev2, eval.ExactOptions{}); err == nil {
		t.Error("a mask without a complete row should be refused")
	}
}

// exactRef is the exact conditional built by hand in float64: SE-ARD from the trained lengthscales
// (times c) and kernel variance (times a), the complete rows' latents, LU solves.
type exactRef struct {
	truth, mask, latent [][]float64
	ls, bias            []float64
	kv                  float64
}

func (r exactRef) k(x, y []float64, c, a float64) float64 {
	r2 := 0.0
	for q := range x {
		r2 += (x[q] - y[q]) * (x[q] - y[q]) / (r.ls[q] * r.ls[q] * c * c)
	}
	return a * r.kv * math.Exp(-r2/2)
}

// system returns K_CC + noise I and X_C - b over the complete rows, and the damaged rows.
func (r exactRef) system(c, a, noise float64) (cond, damaged []int, kcc, xc *mat.Dense) {
	for i := range r.mask {
		full := true
		for _, o := range r.mask[i] {
			full = full && o != 0
		}
		if full {
			cond = append(cond, i)
		} else {
			damaged = append(damaged, i)
		}
	}
	d := len(r.truth[0])
	kcc, xc = mat.NewDense(len(cond), len(cond), nil), mat.NewDense(len(cond), d, nil)
	for i, p := range cond {
		for j, q := range cond {
			kcc.Set(i, j, r.k(r.latent[p], r.latent[q], c, a))
		}
		kcc.Set(i, i, kcc.At(i, i)+noise)
		for j := range d {
			xc.Set(i, j, r.truth[p][j]-r.bias[j])
		}
	}
	return cond, damaged, kcc, xc
}

// scores returns the hidden entries' MSE and NELL per damaged row at the single latents.
func (r exactRef) scores(c, a, noise float64) (mse, nell float64, entries, rows int) {
	cond, damaged, kcc, xc := r.system(c, a, noise)
	sse := 0.0
	for _, p := range damaged {
		kr := mat.NewDense(len(cond), 1, nil)
		for i, q := range cond {
			kr.Set(i, 0, r.k(r.latent[p], r.latent[q], c, a))
		}
		var w mat.Dense
		if err := w.Solve(kcc, kr); err != nil {
			panic(err)
		}
		v := a*r.kv - mat.Dot(kr.ColView(0), w.ColView(0))
		for j := range r.truth[p] {
			if r.mask[p][j] != 0 {
				continue
			}
			mu := r.bias[j] + mat.Dot(w.ColView(0), xc.ColView(j))
			e := r.truth[p][j] - mu
			sse += e * e
			nell += 0.5*math.Log(2*math.Pi*noise) + (e*e+v)/(2*noise)
			entries++
		}
	}
	return sse / float64(entries), nell / float64(len(damaged)), entries, len(damaged)
}

// negLogLik returns -log p(X_C | H_C) per entry: independent columns N(0, K_CC + noise I).
func (r exactRef) negLogLik(c, a, noise float64) float64 {
	_, _, kcc, xc := r.system(c, a, noise)
	n, d := xc.Dims()
	var w mat.Dense
	if err := w.Solve(kcc, xc); err != nil {
		panic(err)
	}
	var prod mat.Dense
	prod.MulElem(xc, &w)
	logDet, sign := mat.LogDet(kcc)
	if sign <= 0 {
		return math.Inf(1)
	}
	return 0.5*math.Log(2*math.Pi) + 0.5*logDet/float64(n) + 0.5*mat.Sum(&prod)/float64(n*d)
}

// TestValidateExactNoise: on MF (one component) the NELL of the hidden entries, sum over a row's
// hidden entries of 0.5 log(2 pi s^2) + (e^2 + v) / (2 s^2), is least at s^2 = the mean of e^2 + v,
// where it equals (entries/rows) 0.5 (log(2 pi s^2) + 1): the chosen predictive noise meets that
// closed form to 0.02 nats and is not beaten by 10% moves; the returned NELL is the one
// ScoreMissingExact then reports; the conditioning noise is untouched.
func TestValidateExactNoise(t *testing.T) {
	tr, truth := toy.Trained(t, "mf", 1, 40)
	ev, err := eval.Evaluate(tr, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := eval.CompleteExact(tr, ev, eval.ExactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	noise := ex.Noise
	got, err := eval.ValidateExactNoise(tr, truth, ev, ex)
	if err != nil {
		t.Fatal(err)
	}
	s2 := ex.PredictiveNoise
	sc, err := eval.ScoreMissingExact(tr, truth, ev, ex)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sc.NELLPredictive-got) > 1e-9 || ex.Noise != noise || s2 == noise {
		t.Errorf("validated NELL %.8g, scored %.8g; noise %g -> %g, predictive %g: want equal NELLs, the noise kept and a new predictive noise",
			got, sc.NELLPredictive, noise, ex.Noise, s2)
	}
	closed := float64(sc.Entries) / float64(sc.Rows) * 0.5 * (math.Log(2*math.Pi*s2) + 1)
	if math.Abs(got-closed) > 0.02 {
		t.Errorf("NELL %.6g at s^2 = %.6g, the closed-form minimum there %.6g", got, s2, closed)
	}
	for _, f := range []float64{0.9, 1.1} {
		ex.PredictiveNoise = s2 * f
		sc, err := eval.ScoreMissingExact(tr, truth, ev, ex)
		if err != nil {
			t.Fatal(err)
		}
		if sc.NELLPredictive < got-1e-6 {
			t.Errorf("NELL %.8g at %g times the chosen s^2, below its %.8g", sc.NELLPredictive, f, got)
		}
	}
}
