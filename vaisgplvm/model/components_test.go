package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// valueMF is the registered MF bound under a name of its own that is not registered: a bound
// passed as a value.
type valueMF struct{ bounds.Method }

func (valueMF) Name() string { return "mf-as-a-value" }

// TestNewWithComponents: a model made with its bound and kernel as values (model.Components)
// takes their names into its Config, builds and trains (the bound falls over 40 steps), and
// evaluates the same as the registered MF with the same kernel (the value only renames it, so
// with one seed the first step's -ELBO is equal to 1e-12); the name stays unregistered, so
// Config.Validate, which the registries back, refuses it; a kernel constructor's error is a
// Kernel setting error.
func TestNewWithComponents(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	x := testutil.NormalRows(rng, 30, 4, 1)
	mf, err := bounds.Lookup("mf")
	if err != nil {
		t.Fatal(err)
	}
	matern := func(c kernels.Config) (kernels.Kernel, error) { return kernels.New("matern32", c) }
	cfg := model.DefaultConfig("mf", 2)
	cfg.M, cfg.Batch = 6, 0
	first := func(m *model.Model) (*train.Trainer, float64) {
		tr, err := train.New(m, testutil.Backend())
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Run(context.Background(), 40, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		return tr, tr.Curve[0]
	}
	m, err := model.NewWith(cfg, x, nil, model.Components{Bound: valueMF{mf}, Kernel: matern})
	if err != nil {
		t.Fatal(err)
	}
	if m.Cfg.Method != "mf-as-a-value" || m.Method.Name() != "mf-as-a-value" || m.Cfg.Kernel != "matern32" {
		t.Fatalf("Config names %q, %q; method %q", m.Cfg.Method, m.Cfg.Kernel, m.Method.Name())
	}
	tr, v := first(m)
	if !(tr.Curve[len(tr.Curve)-1] < v) {
		t.Errorf("-ELBO per point %v to %v: did not fall", v, tr.Curve[len(tr.Curve)-1])
	}
	ref := cfg
	ref.Kernel = "matern32"
	rm, err := model.New(ref, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, w := first(rm); math.Abs(w-v) > 1e-12*math.Abs(w) {
		t.Errorf("first step's -ELBO %.15g, the registered MF's %.15g", v, w)
	}
	if err := m.Cfg.Validate(); err == nil {
		t.Error("Validate accepted the unregistered name of a bound given as a value")
	}
	bad := func(kernels.Config) (kernels.Kernel, error) { return kernels.New("no-such-kernel", kernels.Config{}) }
	if _, err := model.NewWith(cfg, x, nil, model.Components{Kernel: bad}); err == nil {
		t.Error("a kernel constructor's error was not returned")
	}
}
