package train_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// mcKL is a bound defined outside package bounds, the whole of it: MF with its KL(q0 || p)
// estimated by Monte Carlo on the same draws (bounds.MF with monteCarloKL) instead of in closed
// form. bounds.Base answers every other question (draws, chain steps, weights ...).
type mcKL struct{ bounds.Base }

func (mcKL) Name() string { return "mf-mc-kl" }
func (mcKL) Evaluate(b *bounds.Batch, in bounds.Inputs) (*bounds.Result, *anneal.Chain) {
	return bounds.MF(b, in.Eps0, true), nil
}

// TestRegisteredBound: a bound registered from another package is a method like the built-in ones:
// configurations validate with it, a model trains with it (the bound improves), and at the same
// parameters its -ELBO estimates the same value as MF's closed-form-KL estimator, within 4
// combined Monte Carlo standard errors (200 draws each).
func TestRegisteredBound(t *testing.T) {
	if err := bounds.Register(mcKL{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bounds.Unregister("mf-mc-kl") })
	if !slices.Contains(model.Methods(), "mf-mc-kl") {
		t.Errorf("model.Methods() = %v: the registered bound is missing", model.Methods())
	}
	if err := (&model.Config{BoundConfig: model.BoundConfig{Method: "nope"}}).Validate(); err == nil {
		t.Fatal("unknown method: want an error")
	}
	cfg := model.DefaultConfig("mf-mc-kl", 2)
	cfg.M, cfg.Samples, cfg.Batch = 5, 4, 0
	x := toy.Data(30)
	tr := toy.Fit(t, cfg, x, nil, 40)
	if !(tr.Curve[len(tr.Curve)-1] < tr.Curve[0]) {
		t.Errorf("-ELBO went from %g to %g: want it lower", tr.Curve[0], tr.Curve[len(tr.Curve)-1])
	}
	mc, err := eval.Evaluate(tr, 200, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The same parameters under the built-in MF: swap the method and evaluate.
	tr.Model.Cfg.Method, tr.Model.Method = "mf", mustLookup(t, "mf")
	closed, err := eval.Evaluate(tr, 200, nil)
	if err != nil {
		t.Fatal(err)
	}
	se := math.Hypot(*mc.NegELBOSE, *closed.NegELBOSE)
	t.Logf("-ELBO per point: Monte Carlo KL %.4f ± %.4f, closed-form KL %.4f ± %.4f", mc.NegELBO, *mc.NegELBOSE, closed.NegELBO, *closed.NegELBOSE)
	if d := math.Abs(mc.NegELBO - closed.NegELBO); !(d < 4*se) {
		t.Errorf("the two estimators differ by %g, more than 4 combined standard errors (%g)", d, 4*se)
	}
}

func mustLookup(t *testing.T, name string) bounds.Method {
	t.Helper()
	m, err := bounds.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// wideIWVI is a bound with a setting and a trainable parameter of its own, the whole of it: IWVI
// whose proposal is q0 widened by a learned factor, h = a_n + exp(w) L_n eps, with one scalar w
// created under the bound's scope and started at the setting "log-width0". Every w gives a valid
// importance-weighted bound (the proposal's density is log N(eps) - log|L_n| - Q w); w = 0 is IWVI.
type wideIWVI struct{ bounds.Base }

func (wideIWVI) Name() string                                         { return "iwvi-wide" }
func (wideIWVI) Draws(s bounds.Sizes) int                             { return s.K }
func (wideIWVI) Evaluations(s bounds.Sizes) int                       { return s.K }
func (wideIWVI) Particles(s bounds.Sizes, n int) (bounds.Sizes, bool) { s.K = n; return s, true }
func (wideIWVI) Settings() []bounds.Setting {
	return []bounds.Setting{{Name: "log-width0", Usage: "initial log widening of q0 as proposal",
		Check: func(v float64) error {
			if math.Abs(v) > 3 {
				return fmt.Errorf("want a log factor in [-3, 3]")
			}
			return nil
		}}}
}
func (wideIWVI) Evaluate(b *bounds.Batch, in bounds.Inputs) (*bounds.Result, *anneal.Chain) {
	w := vars.New(in.Scope, "log_width", in.Settings["log-width0"]).ValueGraph(in.Eps0.Graph())
	h := b.Q0.Sample(Mul(in.Eps0, Exp(w)))
	logQ := Sub(b.Q0.LogProbWhitened(in.Eps0), MulScalar(w, float64(h.Shape().Dim(-1))))
	logW := Sub(b.LogJoint(h), logQ)
	per := bounds.LogMeanExp(logW)
	return &bounds.Result{PerPoint: per, ELBO: b.ELBO(per), Recon: bounds.WeightedMean(logW, h), LogW: logW}, nil
}

// TestBoundWithOwnParameter: a bound from another package declares a setting and a trainable
// parameter. Its setting is validated by name and value; at log-width0 = 0 it equals IWVI on the
// same noise (1e-12 relative); trained from log-width0 = 0.5 its parameter moves, the bound
// improves, and a checkpoint restores the parameter exactly.
func TestBoundWithOwnParameter(t *testing.T) {
	if err := bounds.Register(wideIWVI{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bounds.Unregister("iwvi-wide") })
	x := toy.Data(30)
	cfg := model.DefaultConfig("iwvi-wide", 2)
	cfg.M, cfg.K = 5, 4
	for _, bad := range []struct {
		settings map[string]float64
		want     string
	}{{map[string]float64{"width": 1}, `bound setting "width": method iwvi-wide has the settings log-width0`},
		{map[string]float64{"log-width0": 5}, "iwvi-wide-log-width0 = 5: want a log factor in [-3, 3]"},
		{map[string]float64{"log-width0": math.NaN()}, "want a finite number"}} {
		c := cfg
		c.BoundSettings = bad.settings
		if _, err := model.New(c, x, nil); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("settings %v: error %v, want one containing %q", bad.settings, err, bad.want)
		}
	}
	m, err := model.New(cfg, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	wide, err := eval.Evaluate(tr, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.Model.Cfg.Method, tr.Model.Method = "iwvi", mustLookup(t, "iwvi")
	iw, err := eval.Evaluate(tr, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(wide.NegELBO - iw.NegELBO); !(d <= 1e-12*math.Abs(iw.NegELBO)) {
		t.Errorf("log-width0 = 0: -ELBO %.15g, IWVI's on the same noise %.15g", wide.NegELBO, iw.NegELBO)
	}

	cfg.BoundSettings = map[string]float64{"log-width0": 0.5}
	if m, err = model.New(cfg, x, nil); err != nil {
		t.Fatal(err)
	}
	tr, err = train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), 60, train.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	w := logWidth(t, tr)
	t.Logf("log width 0.5 -> %.4f; -ELBO %.3f -> %.3f", w, tr.Curve[0], tr.Curve[len(tr.Curve)-1])
	if !(math.Abs(w-0.5) > 1e-3) {
		t.Errorf("log width %g after 60 steps: the bound's parameter did not train", w)
	}
	if !(tr.Curve[len(tr.Curve)-1] < tr.Curve[0]) {
		t.Errorf("-ELBO went from %g to %g: want it lower", tr.Curve[0], tr.Curve[len(tr.Curve)-1])
	}
	path := filepath.Join(t.TempDir(), "wide.ckpt")
	if err := tr.Save(path); err != nil {
		t.Fatal(err)
	}
	m2, err := model.New(cfg, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr2, err := train.New(m2, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.Load(path); err != nil {
		t.Fatal(err)
	}
	if got := logWidth(t, tr2); got != w {
		t.Errorf("log width after Load %v, saved %v", got, w)
	}
}

// logWidth reads wideIWVI's parameter from the trainer's variables.
func logWidth(t *testing.T, tr *train.Trainer) float64 {
	t.Helper()
	v := tr.Ctx.At("bound").At("iwvi-wide").GetVariable("log_width")
	if v == nil {
		t.Fatal("no variable bound/iwvi-wide/log_width")
	}
	return vars.Flat64(v.MustValue())[0]
}
