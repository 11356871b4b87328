package train_test

import (
	"math"
	"slices"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
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
	x := toyData(30)
	m, err := model.New(cfg, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := train.New(m, testutil.Backend())
	if err := tr.Run(40, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !(tr.Curve[len(tr.Curve)-1] < tr.Curve[0]) {
		t.Errorf("-ELBO went from %g to %g: want it lower", tr.Curve[0], tr.Curve[len(tr.Curve)-1])
	}
	mc, err := tr.Evaluate(200, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The same parameters under the built-in MF: swap the method and evaluate.
	tr.Model.Cfg.Method, tr.Model.Method = "mf", mustLookup(t, "mf")
	closed, err := tr.Evaluate(200, nil)
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
