package train_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestBoundAboveCeilingStops: a bound that no correct computation can reach stops training with an
// error naming the iteration. Unpreconditioned VAIS still evaluates log q0 through L_n^-1; with
// L_n lower triangular in Q = 12 with diagonal 0.05 and strict lower part 0.5, L^-1 is useless in
// float32 and 0.5 |L^-1 (h - a)|^2 makes the float32 bound astronomically high, far above
// model.BoundCeiling; in float64 the same step is accurate (off by ~1e-5 nats) and stays below it.
func TestBoundAboveCeilingStops(t *testing.T) {
	const n, q, d = 30, 12, 14
	rng := rand.New(rand.NewPCG(31, 31))
	x := vars.Normal(rng, n, d).Value().([][]float64)
	raw := testutil.TriangularRawScale(n, q, 0.05, 0.5)
	for _, dt := range []string{"float64", "float32"} {
		cfg := model.DefaultConfig("vais", q)
		cfg.M, cfg.K, cfg.Batch, cfg.Precondition, cfg.DType = 6, 3, 10, false, dt
		m, err := model.New(cfg, x, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := train.New(m, testutil.Backend())
		if err != nil {
			t.Fatal(err)
		}
		tr.Ctx.At("latent").VariableWithValue("raw_scale", vars.Convert(tensors.FromValue(raw), m.DType()))
		v, err := tr.Step()
		ceiling := m.BoundCeiling()
		want := 0.5*d*math.Log(1/(2*math.Pi*1e-6)) + float64(10*q*(cfg.K+1))
		if math.Abs(ceiling-want) > 1e-9*want {
			t.Errorf("ceiling %g, want (D/2) log(1/(2 pi 1e-6)) + 10 Q (K+1) = %g", ceiling, want)
		}
		switch {
		case dt == "float64" && err != nil:
			t.Errorf("float64: %v", err)
		case dt == "float64" && !(-v < ceiling):
			t.Errorf("float64: bound %g not below the ceiling %g", -v, ceiling)
		case dt == "float32" && (err == nil || !strings.Contains(err.Error(), "diverged at iteration 1:") ||
			!strings.Contains(err.Error(), "lowest any correctly computed bound")):
			t.Errorf("float32: step gave -ELBO/N %g and error %v; want the ceiling error (ceiling %g)", v, err, ceiling)
		}
		t.Logf("%s: -ELBO per point %g, ceiling %g", dt, v, ceiling)
	}
}

// TestNonFiniteUpdateStops: with a learning rate of 1e300 (and float32, where 1e300 is Inf) the
// first Adam update throws the parameters to +-1e300 or Inf; training must stop by iteration 2 with
// an error naming the iteration, never count a step with non-finite results. At lr 0.02 the same
// steps pass, so the checks are no false alarm.
func TestNonFiniteUpdateStops(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	x := vars.Normal(rng, 20, 4).Value().([][]float64)
	for _, dt := range []string{"float64", "float32"} {
		for _, method := range []string{"mf", "iwvi", "vais"} {
			for _, lr := range []float64{0.02, 1e300} {
				cfg := model.DefaultConfig(method, 2)
				cfg.M, cfg.K, cfg.LR, cfg.DType = 5, 2, lr, dt
				m, err := model.New(cfg, x, nil)
				if err != nil {
					t.Fatal(err)
				}
				tr, err := train.New(m, testutil.Backend())
				if err != nil {
					t.Fatal(err)
				}
				err = tr.Run(context.Background(), 2, train.RunOptions{})
				finite := true
				for _, v := range tr.Curve {
					finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
				}
				switch {
				case lr == 0.02 && (err != nil || tr.Iter != 2):
					t.Errorf("%s %s lr %g: %v", dt, method, lr, err)
				case lr == 1e300 && (err == nil || !strings.Contains(err.Error(), "diverged at iteration") || tr.Iter > 1 || !finite):
					t.Errorf("%s %s lr %g: iterations %d, curve %v, error %v; want a divergence error by iteration 2 and only finite values counted",
						dt, method, lr, tr.Iter, tr.Curve, err)
				}
				if lr == 1e300 && err != nil {
					t.Logf("%s %s: %v", dt, method, err)
				}
			}
		}
	}
}
