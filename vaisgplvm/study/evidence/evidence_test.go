package evidence

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"gonum.org/v1/gonum/floats"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// toy returns n points of 4 noisy smooth functions of a 1-D latent.
func toy(n int) [][]float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([][]float64, n)
	for i := range x {
		t := rng.Float64()*4 - 2
		x[i] = []float64{math.Sin(t), math.Cos(t), t, t * t / 4}
		for j := range x[i] {
			x[i][j] += 0.1 * rng.NormFloat64()
		}
	}
	return x
}

// trained returns a VAIS model with q latent dimensions trained for 60 full-batch iterations on
// toy(n).
func trained(t *testing.T, q, n int, mutate ...func(*model.Config)) *train.Trainer {
	t.Helper()
	cfg := model.DefaultConfig("vais", q)
	cfg.M, cfg.K, cfg.Batch = 6, 3, 0
	for _, f := range mutate {
		f(&cfg)
	}
	m, err := model.New(cfg, toy(n), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), 60, train.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	return tr
}

// quadrature returns log Z_n = log ∫ exp(l_n(h)) N(h | 0, I) dh for every point by the midpoint
// rule on a grid of g points per dimension over [-8, 8]^Q (Q = 1 or 2), in float64 on the host.
func quadrature(t *testing.T, tr *train.Trainer, g int) []float64 {
	t.Helper()
	m := tr.Model
	q := m.Cfg.Q
	var pts [][]float64
	step := 16 / float64(g)
	for i := 0; i < g; i++ {
		a := -8 + (float64(i)+0.5)*step
		if q == 1 {
			pts = append(pts, []float64{a})
			continue
		}
		for j := 0; j < g; j++ {
			pts = append(pts, []float64{a, -8 + (float64(j)+0.5)*step})
		}
	}
	points := make([]int, m.N)
	for i := range points {
		points[i] = i
	}
	s, err := newSampler(tr, points, false)
	if err != nil {
		t.Fatal(err)
	}
	// h [G, N, Q]: every grid point for every data point.
	flat := make([]float64, 0, len(pts)*m.N*q)
	for _, p := range pts {
		for n := 0; n < m.N; n++ {
			flat = append(flat, p...)
		}
	}
	llT, _, err := s.Eval(tensors.FromFlatDataAndDimensions(flat, len(pts), m.N, q))
	if err != nil {
		t.Fatal(err)
	}
	ll := vars.Flat64(llT) // [G, N]
	logZ := make([]float64, m.N)
	for n := range logZ {
		terms := make([]float64, len(pts))
		for k, p := range pts {
			lp := 0.0
			for _, v := range p {
				lp += -0.5*v*v - 0.5*math.Log(2*math.Pi) + math.Log(step)
			}
			terms[k] = ll[k*m.N+n] + lp
		}
		logZ[n] = floats.LogSumExp(terms)
	}
	return logZ
}

// TestAgainstQuadrature: on trained Q = 1 and Q = 2 toy models, the AIS estimate of every point's
// log Z_n (400 temperatures, 8 runs) matches midpoint quadrature (4000 and 300 x 300 points over
// [-8, 8]^Q) within 4 of its standard errors plus 0.01 nats, and the per-point total within 4 of
// its standard error plus 0.005.
func TestAgainstQuadrature(t *testing.T) {
	for _, c := range []struct{ q, grid int }{{1, 4000}, {2, 300}} {
		tr := trained(t, c.q, 25)
		exact := quadrature(t, tr, c.grid)
		res, err := Estimate(context.Background(), tr, Options{Temps: 400, Runs: 8, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for n, lz := range res.LogZ {
			d := math.Abs(lz - exact[n])
			worst = max(worst, d/(res.LogZSE[n]+1e-12))
			if d > 4*res.LogZSE[n]+0.01 {
				t.Errorf("Q = %d, point %d: AIS %.4f ± %.4f, quadrature %.4f", c.q, n, lz, res.LogZSE[n], exact[n])
			}
		}
		want := -floats.Sum(exact)/float64(len(exact)) + res.KL/float64(res.N)
		t.Logf("Q = %d: -log evidence per point AIS %.5f ± %.5f, quadrature %.5f; acceptance %.2f; worst point %.1f s.e.",
			c.q, res.NegLogEvidencePerPoint, res.SE, want, res.AcceptRate, worst)
		if math.Abs(res.NegLogEvidencePerPoint-want) > 4*res.SE+0.005 {
			t.Errorf("Q = %d: per point %.5f ± %.5f, quadrature %.5f", c.q, res.NegLogEvidencePerPoint, res.SE, want)
		}
	}
}

// TestAboveEveryBound: at a trained VAIS model's parameters the evidence is above the bounds of
// Decompose (q0's ELBO, IWVI with K samples, the trained chain), each from 20 draws: every gap to
// the evidence is above -3 of its standard errors.
func TestAboveEveryBound(t *testing.T) {
	res, bs := decomposed(t, trained(t, 2, 25))
	if len(bs) != 3 {
		t.Fatalf("want q0, IWVI and the chain, got %+v", bs)
	}
	for _, b := range bs {
		checkBelowEvidence(t, res, b)
	}
}

// decomposed returns the evidence (300 temperatures, 4 runs) at tr's parameters and Decompose's
// bounds there from 20 draws.
func decomposed(t *testing.T, tr *train.Trainer) (*Result, []BoundValue) {
	t.Helper()
	res, err := Estimate(context.Background(), tr, Options{Temps: 300, Runs: 4})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := Decompose(context.Background(), tr, res, 20)
	if err != nil {
		t.Fatal(err)
	}
	return res, bs
}

// checkBelowEvidence fails unless bound b is below the evidence res: gap > -3 of its s.e.
func checkBelowEvidence(t *testing.T, res *Result, b BoundValue) {
	t.Helper()
	if b.Gap == nil || b.GapSE == nil {
		t.Fatalf("%s: no gap although every point was estimated", b.Reference)
	}
	t.Logf("%-70s -ELBO %.4f ± %.4f, gap %.4f ± %.4f", b.Reference, b.NegELBO, b.SE, *b.Gap, *b.GapSE)
	if !(*b.Gap > -3**b.GapSE) {
		t.Errorf("%s: -ELBO %.4f below the -log evidence %.4f ± %.4f", b.Reference, b.NegELBO, res.NegLogEvidencePerPoint, res.SE)
	}
}

// TestAgainstLargeKImportanceSampling: on a trained Q = 2 toy model, importance sampling from q0
// with K = 1000 samples per point (IWVI's bound, 10 draws), which tends to the evidence as K
// grows, agrees with the AIS estimate within 3 combined standard errors plus 0.02 nats per point.
func TestAgainstLargeKImportanceSampling(t *testing.T) {
	tr := trained(t, 2, 25)
	res, err := Estimate(context.Background(), tr, Options{Temps: 400, Runs: 8, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	is, err := withBound(tr, "iwvi", model.MaxK)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := eval.Evaluate(is, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	se := math.Hypot(*ev.NegELBOSE, res.SE)
	t.Logf("IS with K = 1000: %.4f ± %.4f; AIS: %.4f ± %.4f", ev.NegELBO, *ev.NegELBOSE, res.NegLogEvidencePerPoint, res.SE)
	if math.Abs(ev.NegELBO-res.NegLogEvidencePerPoint) > 3*se+0.02 {
		t.Errorf("IS %.4f and AIS %.4f differ by more than 3 s.e. (%.4f) + 0.02", ev.NegELBO, res.NegLogEvidencePerPoint, se)
	}
}

// TestPaperDRuleStaysBelowEvidence: a VAIS model trained with App. D's step-size rule
// (model.Config.PaperEta, K = 5) has a bound below the evidence at its parameters (gap > -3 s.e.),
// as a valid bound must.
func TestPaperDRuleStaysBelowEvidence(t *testing.T) {
	tr := trained(t, 2, 25, func(c *model.Config) { c.K, c.AdaptEta, c.PaperEta, c.Eta = 5, false, true, 0.2 })
	res, bs := decomposed(t, tr)
	chain := bs[len(bs)-1]
	t.Logf("App. D chain: -ELBO %.4f ± %.4f, -log evidence %.4f ± %.4f", chain.NegELBO, chain.SE, res.NegLogEvidencePerPoint, res.SE)
	if chain.Gap == nil || !(*chain.Gap > -3**chain.GapSE) {
		t.Errorf("App. D chain's -ELBO %.4f is below the -log evidence %.4f ± %.4f", chain.NegELBO, res.NegLogEvidencePerPoint, res.SE)
	}
}

// TestChainVariants: at a trained VAIS model's parameters, the trained chain with eta_k x 1 and
// with one chain is the trained bound itself (the same draws, to 1e-9); with eta_k x 1e-9 the
// chain does not move and its bound is q0's ELBO (within 4 combined standard errors); every
// variant, also eta_k x 4 and 4 weighted chains, stays below the evidence (gap > -3 s.e.); the
// trainer is left as it was; bad requests are refused.
func TestChainVariants(t *testing.T) {
	tr := trained(t, 2, 25)
	res, bs := decomposed(t, tr)
	q0, chain := bs[0], bs[2]
	vs, err := ChainVariants(context.Background(), tr, res, 20, []float64{1, 1e-9, 4}, []int{1, 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 5 {
		t.Fatalf("want 5 variants, got %+v", vs)
	}
	for _, i := range []int{0, 3} {
		if math.Abs(vs[i].NegELBO-chain.NegELBO) > 1e-9*math.Abs(chain.NegELBO) {
			t.Errorf("%s: -ELBO %.12g, want the trained chain's %.12g", vs[i].Reference, vs[i].NegELBO, chain.NegELBO)
		}
	}
	for _, i := range []int{1, 2, 4} { // the same noise draws: only the step sizes or chains differ
		if math.Abs(vs[i].NegELBO-chain.NegELBO) < 1e-6 {
			t.Errorf("%s: -ELBO %.12g is the trained chain's: the variant did not reach the graph", vs[i].Reference, vs[i].NegELBO)
		}
	}
	if se := math.Hypot(vs[1].SE, q0.SE); math.Abs(vs[1].NegELBO-q0.NegELBO) > 4*se {
		t.Errorf("eta x 1e-9: -ELBO %.4f, want q0 alone %.4f within 4 s.e. (%.4f)", vs[1].NegELBO, q0.NegELBO, se)
	}
	for _, b := range vs {
		checkBelowEvidence(t, res, b)
	}
	if tr.Model.Step.Scale != 0 || tr.Model.Cfg.Samples != 1 {
		t.Errorf("the trainer's model changed: step scale %g, samples %d", tr.Model.Step.Scale, tr.Model.Cfg.Samples)
	}
	if again, err := Decompose(context.Background(), tr, res, 20); err != nil || again[2].NegELBO != chain.NegELBO {
		t.Errorf("the trained chain after the variants: %+v (%v), want %.12g", again, err, chain.NegELBO)
	}
	for _, bad := range []struct {
		scales []float64
		chains []int
	}{{[]float64{-1}, nil}, {[]float64{0}, nil}, {[]float64{math.Inf(1)}, nil}, {nil, []int{0}}} {
		if _, err := ChainVariants(context.Background(), tr, nil, 1, bad.scales, bad.chains); err == nil {
			t.Errorf("scales %v, chains %v: want an error", bad.scales, bad.chains)
		}
	}
	mf := trained(t, 2, 25, func(c *model.Config) { c.Method = "mf" })
	if _, err := ChainVariants(context.Background(), mf, nil, 2, []float64{2}, nil); err == nil || !strings.Contains(err.Error(), "no annealed chain") {
		t.Errorf("MF model: got %v, want the no-annealed-chain error", err)
	}
}

// TestUnconverged: a bound more than 3 standard errors above the evidence estimate gets a warning
// naming it and --temps; one within 3 s.e. (MC noise), below the evidence, or without a gap does
// not.
func TestUnconverged(t *testing.T) {
	gap := func(g, se float64) (*float64, *float64) { return &g, &se }
	var bs []BoundValue
	for _, c := range []struct {
		what    string
		g, se   float64
		withGap bool
	}{{"above", -0.10, 0.02, true}, {"noise", -0.05, 0.02, true}, {"below", 0.3, 0.02, true}, {"no gap", -9, 0.01, false}} {
		b := BoundValue{Reference: c.what}
		if c.withGap {
			b.Gap, b.GapSE = gap(c.g, c.se)
		}
		bs = append(bs, b)
	}
	w := Unconverged(bs)
	if len(w) != 1 || !strings.Contains(w[0], "above is 0.100 ± 0.020 nats per point above") || !strings.Contains(w[0], "--temps") {
		t.Errorf("warnings %q: want one, for the bound 0.1 above the estimate (5 s.e.), naming --temps", w)
	}
	if w := Unconverged(bs[1:]); w != nil {
		t.Errorf("warnings %q for bounds within noise or below the evidence, want none", w)
	}
}

// TestUnderdamped: at a trained VAIS model's parameters, the underdamped chain at dampings 0, 0.5
// and 0.9 (the trained schedule and step sizes, and x 2) and IWVI at the chain's K + 1 = 4 evaluations
// all stay below the evidence (gap > -3 s.e.); the trainer's variables gain no underdamped
// parameters; a damping outside [0, 1) and a model without a chain are refused.
func TestUnderdamped(t *testing.T) {
	tr := trained(t, 2, 25)
	res, _ := decomposed(t, tr)
	us, err := Underdamped(context.Background(), tr, res, 20, []float64{1, 2}, []float64{0, 0.5, 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 7 || us[6].Name != "iwvi" || !strings.Contains(us[6].Reference, "4 importance samples") {
		t.Fatalf("want 6 underdamped variants and IWVI with K + 1 = 4 samples, got %+v", us)
	}
	for _, b := range us {
		checkBelowEvidence(t, res, b)
	}
	for v := range tr.Ctx.Store().IterVariables() {
		if strings.HasPrefix(v.Scope(), "/bound") {
			t.Errorf("the trainer gained the variable %s/%s", v.Scope(), v.Name())
		}
	}
	if _, err := Underdamped(context.Background(), tr, res, 2, nil, []float64{1}); err == nil {
		t.Error("damping 1: want an error")
	}
	mf := trained(t, 2, 25, func(c *model.Config) { c.Method = "mf" })
	if _, err := Underdamped(context.Background(), mf, nil, 2, nil, []float64{0.5}); err == nil || !strings.Contains(err.Error(), "no annealed chain") {
		t.Errorf("MF model: got %v, want the no-annealed-chain error", err)
	}
}

// TestTrainedUHABelowEvidence: a model trained with the underdamped bound (its damping and mass
// learned) has every bound of Decompose, its own chain included, below the evidence at its
// parameters (gap > -3 s.e.).
func TestTrainedUHABelowEvidence(t *testing.T) {
	tr := trained(t, 2, 25, func(c *model.Config) { c.Method = "uha" })
	res, bs := decomposed(t, tr)
	if len(bs) != 3 || bs[2].Name != "uha" {
		t.Fatalf("want q0, IWVI and the underdamped chain, got %+v", bs)
	}
	for _, b := range bs {
		checkBelowEvidence(t, res, b)
	}
}

// TestStartFromQ0: the AIS estimate started from each point's q0 (Options.Start "q0") matches
// quadrature as the prior start does (Q = 2 toy, 400 temperatures, within 4 s.e. + 0.01 per point),
// and with only 20 temperatures it is much closer to quadrature than the prior start (the path
// from q0 is shorter): its per-point error is below half the prior start's.
func TestStartFromQ0(t *testing.T) {
	tr := trained(t, 2, 25)
	exact := quadrature(t, tr, 300)
	want := -floats.Sum(exact) / float64(len(exact))
	res, err := Estimate(context.Background(), tr, Options{Temps: 400, Runs: 8, Seed: 3, Start: "q0", CheckTemps: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Start != "q0" {
		t.Errorf("Start = %q, want q0", res.Start)
	}
	for n, lz := range res.LogZ {
		if math.Abs(lz-exact[n]) > 4*res.LogZSE[n]+0.01 {
			t.Errorf("point %d: AIS from q0 %.4f ± %.4f, quadrature %.4f", n, lz, res.LogZSE[n], exact[n])
		}
	}
	short := func(start string) float64 {
		r, err := Estimate(context.Background(), tr, Options{Temps: 20, Runs: 8, Seed: 4, Start: start, CheckTemps: -1})
		if err != nil {
			t.Fatal(err)
		}
		return math.Abs(r.NegLogEvidencePerPoint - r.KL/float64(r.N) - want)
	}
	fromPrior, fromQ0 := short("prior"), short("q0")
	t.Logf("20 temperatures: error per point from the prior %.4f, from q0 %.4f", fromPrior, fromQ0)
	if !(fromQ0 < 0.5*fromPrior) {
		t.Errorf("20 temperatures: from q0 %.4f is not below half the prior start's error %.4f", fromQ0, fromPrior)
	}
	if _, err := Estimate(context.Background(), tr, Options{Start: "posterior"}); err == nil {
		t.Error("start posterior: want an error")
	}
}

// TestRefusesMismatchedArguments (issue 50, class 3c): Decompose refuses an evidence estimate made
// at another model (it paired the bounds of one model with the evidence of another), Estimate a
// NaN acceptance target (it ran), and NotConverged and Stuck take nil.
func TestRefusesMismatchedArguments(t *testing.T) {
	a := trained(t, 2, 25)
	b := trained(t, 2, 25, func(c *model.Config) { c.Seed = 7 })
	res, err := Estimate(context.Background(), a, Options{Temps: 20, Runs: 2, Points: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decompose(context.Background(), b, res, 5); err == nil || !strings.Contains(err.Error(), "other parameters") {
		t.Errorf("Decompose with another model's evidence: %v, want an error", err)
	}
	if _, err := Decompose(context.Background(), a, res, 5); err != nil {
		t.Errorf("Decompose with its own evidence: %v", err)
	}
	if _, err := Estimate(context.Background(), a, Options{Temps: 20, Runs: 2, Accept: math.NaN()}); err == nil || !strings.Contains(err.Error(), "acceptance target") {
		t.Errorf("Estimate with a NaN acceptance target: %v, want an error", err)
	}
	if NotConverged(nil, 0.05) != "" || Stuck(nil) != "" {
		t.Error("NotConverged or Stuck of nil is not empty")
	}
	if w := Stuck(&Result{AcceptRate: 0, Temps: 5}); !strings.Contains(w, "did not move") {
		t.Errorf("Stuck at acceptance 0: %q, want a warning", w)
	}
	if w := Stuck(res); w != "" {
		t.Errorf("Stuck at acceptance %.2f: %q, want none", res.AcceptRate, w)
	}
}
