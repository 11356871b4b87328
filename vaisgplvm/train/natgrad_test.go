package train_test

import (
	"context"
	"math"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// quVars returns q(u)'s variables as flat values: q_mu and q_sqrt.
func quVars(t *testing.T, tr *train.Trainer) (mu, sqrt []float64) {
	t.Helper()
	in := tr.Ctx.At("inducing")
	return vars.Flat64(in.GetVariable("q_mu").MustValue()), vars.Flat64(in.GetVariable("q_sqrt").MustValue())
}

// relChange returns |a - b| / |b| over whole vectors.
func relChange(a, b []float64) float64 {
	var d, n float64
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
		n += b[i] * b[i]
	}
	return math.Sqrt(d / n)
}

// TestNaturalGradientQU: MF, full batch, q0 with a spread of 1e-8 (its draws are its means) and
// every other parameter held by a learning rate of 1e-12, so that each step's bound is the same
// Gaussian-conjugate function of q(u). With NatGrad 1 the first step moves q(u) from the prior to
// that bound's optimum (q_mu from 0; -ELBO down) and the second step leaves it there (relative
// change < 1e-6): a fixed point. With NatGrad 0.5 the second step still moves it (> 1e-2), and
// with Adam alone (NatGrad 0) q(u) barely moves at that learning rate. SharedQSqrt is refused.
func TestNaturalGradientQU(t *testing.T) {
	run := func(gamma float64) (first, second []float64, curve []float64) {
		tr := toy.Trainer(t, "mf", func(c *model.Config) { c.Batch, c.Scale0, c.LR, c.NatGrad = 0, 1e-8, 1e-12, gamma })
		if err := tr.Run(context.Background(), 1, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		mu1, s1 := quVars(t, tr)
		if err := tr.Run(context.Background(), 2, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		mu2, s2 := quVars(t, tr)
		return append(mu1, s1...), append(mu2, s2...), tr.Curve
	}
	first, second, curve := run(1)
	var norm float64
	for _, v := range first[:6*4] { // q_mu [M 6, D 4], which starts at 0
		norm += v * v
	}
	if norm < 1e-2 {
		t.Fatalf("NatGrad 1 left q_mu at its start (|q_mu|^2 = %g)", norm)
	}
	t.Logf("NatGrad 1: -ELBO per point %.4f then %.4f; second step's relative change %.3g", curve[0], curve[1], relChange(second, first))
	if c := relChange(second, first); c > 1e-6 {
		t.Errorf("NatGrad 1: the second step moved q(u) by %.3g (relative): not the optimum of the first", c)
	}
	if !(curve[1] < curve[0]-0.5) {
		t.Errorf("NatGrad 1: -ELBO per point %v: the step to the optimal q(u) should lower it by far", curve)
	}
	first, second, _ = run(0.5)
	t.Logf("NatGrad 0.5: second step's relative change %.3g", relChange(second, first))
	if c := relChange(second, first); c < 1e-2 {
		t.Errorf("NatGrad 0.5: the second step moved q(u) by only %.3g: half steps should still be moving", c)
	}
	first, second, _ = run(0)
	if c := relChange(second, first); c > 1e-6 {
		t.Errorf("Adam at lr 1e-12 moved q(u) by %.3g", c)
	}
	cfg := model.DefaultConfig("mf", 2)
	cfg.NatGrad, cfg.SharedQSqrt = 0.5, true
	if err := cfg.Validate(); err == nil {
		t.Error("NatGrad with SharedQSqrt: no error")
	}
}
