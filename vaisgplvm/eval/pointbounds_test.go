package eval_test

import (
	"context"
	"math"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestPointBounds: for MF, IWVI and VAIS after a few steps on mini-batches, each draw's point
// terms add up, with KL(q(u) || p(u)), to Evaluate's -ELBO of that draw: the mean over two draws
// is Evaluate(2)'s -ELBO and their spread its Monte Carlo s.e. (1e-9 relative), the KL is
// Evaluate's KL(q(u))/N times N; the terms differ between points and between draws (IWVI, VAIS).
func TestPointBounds(t *testing.T) {
	for _, method := range []string{"mf", "iwvi", "vais"} {
		tr := toy.Trainer(t, method, func(c *model.Config) { c.Samples = 2 })
		if err := tr.Run(context.Background(), 4, train.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		ev, err := eval.Evaluate(tr, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := eval.NewPointBounds(tr, 2)
		if err != nil {
			t.Fatal(err)
		}
		n := tr.Model.N
		if len(pb.L) != 2 || len(pb.L[0]) != n {
			t.Fatalf("%s: %d draws of %d terms, want 2 of %d", method, len(pb.L), len(pb.L[0]), n)
		}
		a, b := pb.NegELBO(0), pb.NegELBO(1)
		tol := 1e-9 * math.Abs(ev.NegELBO)
		if mean := (a + b) / 2; math.Abs(mean-ev.NegELBO) > tol {
			t.Errorf("%s: mean of the draws' -ELBO from the point terms %.12g, Evaluate's %.12g", method, mean, ev.NegELBO)
		}
		if method != "mf" && math.Abs(math.Abs(a-b)/2-*ev.NegELBOSE) > tol {
			t.Errorf("%s: the draws' spread |a - b| / 2 = %.6g, Evaluate's s.e. %.6g", method, math.Abs(a-b)/2, *ev.NegELBOSE)
		}
		if math.Abs(pb.KLU/float64(n)-ev.KLUPerPoint) > 1e-9*max(1, pb.KLU) {
			t.Errorf("%s: KL(q(u))/N %.12g, Evaluate's %.12g", method, pb.KLU/float64(n), ev.KLUPerPoint)
		}
		if pb.L[0][0] == pb.L[0][1] || (method != "mf" && pb.L[0][0] == pb.L[1][0]) {
			t.Errorf("%s: point terms %v / %v: want them to differ between points and draws", method, pb.L[0][:2], pb.L[1][:2])
		}
	}
	if _, err := eval.NewPointBounds(toy.Trainer(t, "mf", nil), 0); err == nil {
		t.Error("0 draws: want an error")
	}
}
