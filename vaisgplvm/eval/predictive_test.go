package eval_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// predictAt returns the predictive means and per-entry variances of f [N, D] at latents h [N, Q]
// and the noise variance, computed here (an independent exec, not ScoreMissing's).
func predictAt(tr *train.Trainer, h [][]float64) (mean, vr [][]float64, s2 float64) {
	m := tr.Model
	out := mlmodel.MustExecOnceN(tr.Backend, tr.Ctx.Store(), func(ctx *mlmodel.Scope, hn *Node) []*Node {
		post := gp.NewPosterior(ctx, hn.Graph(), m.Inducing, m.Kernel)
		mg := post.Predict(hn, true)
		return []*Node{mg.Mean, mg.Var, m.Lik.NoiseVariance(ctx, hn.Graph())}
	}, h)
	rows := func(f []float64, d int) [][]float64 {
		r := make([][]float64, len(f)/d)
		for i := range r {
			r[i] = f[i*d : (i+1)*d]
		}
		return r
	}
	return rows(vars.Flat64(out[0]), m.D), rows(vars.Flat64(out[1]), m.D), vars.Flat64(out[2])[0]
}

// TestPredictiveOneComponent: with one particle per point (IWVI K = 1, and MF) the posterior
// predictive mixture is the single latent: the same MSE, NELL and hidden-entry scores.
func TestPredictiveOneComponent(t *testing.T) {
	for _, method := range []string{"iwvi", "mf"} {
		tr, truth := toy.Trained(t, method, 1, 40)
		ev, err := eval.Evaluate(tr, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := ev.Predictive
		if p == nil || p.Components != 1 || math.Abs(p.MSE-ev.MSE) > 1e-12 || math.Abs(p.NELL-ev.NELL) > 1e-9*math.Abs(ev.NELL) {
			t.Fatalf("%s: predictive %+v, want one component with MSE %g and NELL %g", method, p, ev.MSE, ev.NELL)
		}
		sc, err := eval.ScoreMissing(tr, truth, ev)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(sc.MSEPredictive-sc.MSE) > 1e-12 || math.Abs(sc.NELLPredictive-sc.NELL) > 1e-9*math.Abs(sc.NELL) {
			t.Errorf("%s: hidden entries, mixture MSE %g NELL %g, single latent %g %g", method, sc.MSEPredictive, sc.NELLPredictive, sc.MSE, sc.NELL)
		}
	}
}

// TestPredictiveMixtureMonteCarlo: with K = 5 importance samples, ScoreMissing's mixture scores of
// the hidden entries match a reference computed here: the weighted mean of the particles'
// predictive means (MSE, to 1e-12), and a brute-force Monte Carlo estimate of
// -log sum_s w_s exp(E_q(f)[sum_j log N(x_j | f_j, s^2)]) (NELL; f drawn from each particle's
// predictive, 20000 draws; within 4 Monte Carlo standard errors).
func TestPredictiveMixtureMonteCarlo(t *testing.T) {
	tr, truth := toy.Trained(t, "iwvi", 5, 60)
	ev, err := eval.Evaluate(tr, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := ev.Predictive
	if p == nil || p.Components != 5 || len(p.Particles) != 5 || len(p.Weights[0]) != len(truth) {
		t.Fatalf("predictive %+v: want 5 components over %d points", p, len(truth))
	}
	sc, err := eval.ScoreMissing(tr, truth, ev)
	if err != nil {
		t.Fatal(err)
	}
	mask := tr.Model.Mask
	means, vars2 := make([][][]float64, 5), make([][][]float64, 5)
	var s2 float64
	for k := range 5 {
		means[k], vars2[k], s2 = predictAt(tr, p.Particles[k])
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const draws = 20000
	sse, entries, nll, nllVar, rows := 0.0, 0, 0.0, 0.0, 0
	for i := range truth {
		var hidden []int
		for j := range truth[i] {
			if mask[i][j] == 0 {
				hidden = append(hidden, j)
			}
		}
		if hidden == nil {
			continue
		}
		rows++
		ell := make([]float64, 5)
		for k := range 5 {
			var sum, sumSq float64
			for range draws {
				v := 0.0
				for _, j := range hidden {
					f := means[k][i][j] + math.Sqrt(vars2[k][i][j])*rng.NormFloat64()
					v += -0.5*math.Log(2*math.Pi*s2) - (truth[i][j]-f)*(truth[i][j]-f)/(2*s2)
				}
				sum, sumSq = sum+v, sumSq+v*v
			}
			ell[k] = sum / draws
			// the s.e. of the log-sum-exp is at most the largest component's s.e.
			nllVar = max(nllVar, (sumSq/draws-ell[k]*ell[k])/draws)
		}
		top := slicesMax(ell)
		mix := 0.0
		for k := range 5 {
			mix += p.Weights[k][i] * math.Exp(ell[k]-top)
		}
		nll -= top + math.Log(mix)
		for _, j := range hidden {
			mu := 0.0
			for k := range 5 {
				mu += p.Weights[k][i] * means[k][i][j]
			}
			sse += (truth[i][j] - mu) * (truth[i][j] - mu)
			entries++
		}
	}
	if want := sse / float64(entries); math.Abs(sc.MSEPredictive-want) > 1e-12 {
		t.Errorf("mixture MSE %g, want %g", sc.MSEPredictive, want)
	}
	want, se := nll/float64(rows), math.Sqrt(nllVar*float64(rows))/float64(rows)
	t.Logf("hidden entries: mixture NELL %g, Monte Carlo %g ± %g; single latent NELL %g, MSE %g vs mixture %g", sc.NELLPredictive, want, se, sc.NELL, sc.MSE, sc.MSEPredictive)
	if math.Abs(sc.NELLPredictive-want) > 4*se+1e-9 {
		t.Errorf("mixture NELL %g, Monte Carlo %g ± %g", sc.NELLPredictive, want, se)
	}
}

// TestPredictiveTwoModes: when a point's posterior has two modes, h* and -h*, the mixture predicts
// the average of the two predictions, and the single latent between them (their mean, 0)
// predicts f(0), on no mode: with the truth at the modes' average, the mixture's hidden-entry
// MSE is zero and the single latent's is not.
func TestPredictiveTwoModes(t *testing.T) {
	tr, truth := toy.Trained(t, "iwvi", 2, 60)
	ev, err := eval.Evaluate(tr, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, q := len(truth), len(ev.Latent[0])
	plus, minus, zero := make([][]float64, n), make([][]float64, n), make([][]float64, n)
	half := make([]float64, n)
	for i := range n {
		plus[i], minus[i], zero[i] = make([]float64, q), make([]float64, q), make([]float64, q)
		for j := range q {
			plus[i][j], minus[i][j] = 1.5, -1.5
		}
		half[i] = 0.5
	}
	fp, _, _ := predictAt(tr, plus)
	fm, _, _ := predictAt(tr, minus)
	modal := make([][]float64, n)
	for i := range n {
		modal[i] = make([]float64, len(truth[i]))
		for j := range modal[i] {
			modal[i][j] = (fp[i][j] + fm[i][j]) / 2
		}
	}
	ev.Latent = zero
	ev.Predictive = &eval.Predictive{Components: 2, Particles: [][][]float64{plus, minus}, Weights: [][]float64{half, half}}
	sc, err := eval.ScoreMissing(tr, modal, ev)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("two modes: mixture MSE %g, single latent MSE %g", sc.MSEPredictive, sc.MSE)
	if !(sc.MSEPredictive < 1e-20) || !(sc.MSE > 1e-6) {
		t.Errorf("two modes: mixture MSE %g (want 0), single latent %g (want > 0)", sc.MSEPredictive, sc.MSE)
	}
}

func slicesMax(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
