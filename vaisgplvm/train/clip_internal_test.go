package train

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// TestGradientClipAgainstReference feeds a sequence of two-variable "gradients" (steady norms, a
// 1000x spike, a zero gradient, a slow rise) through gradientClip.apply, one graph run per step,
// and compares the scaled gradients, the running mean of squared norms and the clipped-step count
// with a float64 loop written from the documented rule. Tolerance 1e-12 relative.
func TestGradientClipAgainstReference(t *testing.T) {
	const kappa = 3.0
	steps := [][2][]float64{
		{{1, 2}, {2}}, {{-1, 1}, {1.5}}, {{2, 0}, {-2}}, {{1000, -2000}, {1500}}, {{0, 0}, {0}},
		{{1, 1}, {1}}, {{4, 4}, {4}}, {{6, 6}, {6}}, {{10, 0}, {0}},
	}
	ctx := mlmodel.NewStore().RootScope()
	exec := mlmodel.MustNewExec(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, a, b *Node) []*Node {
		c := newGradientClip(ctx)
		return c.apply([]*Node{a, b}, kappa)
	})
	mean, count := 0.0, 0
	for i, st := range steps {
		out := exec.MustExec(st[0], st[1])
		norm2 := 0.0
		for _, v := range append(append([]float64(nil), st[0]...), st[1]...) {
			norm2 += v * v
		}
		scale := 1.0
		if mean > 0 && math.Sqrt(norm2) > kappa*math.Sqrt(mean) {
			scale = kappa * math.Sqrt(mean) / math.Sqrt(norm2)
			count++
		}
		if mean > 0 {
			mean = ClipDecay*mean + (1-ClipDecay)*norm2*scale*scale
		} else {
			mean = norm2
		}
		got := append(vars.Flat64(out[0]), vars.Flat64(out[1])...)
		want := append(append([]float64(nil), st[0]...), st[1]...)
		for j := range want {
			want[j] *= scale
			if math.Abs(got[j]-want[j]) > 1e-12*(1+math.Abs(want[j])) {
				t.Errorf("step %d: clipped gradient %v, want %v (scale %g)", i+1, got, want, scale)
				break
			}
		}
		sq, _ := ctx.At(clipScope).GetVariable("sq_norm").Value()
		if m := vars.Flat64(sq)[0]; math.Abs(m-mean) > 1e-12*mean {
			t.Errorf("step %d: running mean of squared norms %g, want %g", i+1, m, mean)
		}
	}
	// Expected clips: the spike (step 4), and steps 8 and 9 (norms 6 sqrt 3 = 10.4 and 10, above 3
	// times a running RMS of 3.14 and 3.27); a rule that never clips, or clips everything, fails.
	if count != 3 {
		t.Fatalf("reference clipped %d steps, want 3 (test sequence changed?)", count)
	}
	got, _ := ctx.At(clipScope).GetVariable("clipped").Value()
	if c := vars.Flat64(got)[0]; c != float64(count) {
		t.Errorf("clipped-step count %g, want %d", c, count)
	}
}
