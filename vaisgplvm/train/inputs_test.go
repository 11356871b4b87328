package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// BenchmarkStepInputs times the host-side part of a training step (Inputs, then the batch and
// mask tensors) at Frey's Table 2 sizes: N 1965, D 560, batch 100, Q 20, VAIS K = 25, 5% of the
// images missing 75% of their pixels. On a GPU this part is not overlapped with the device's work.
func BenchmarkStepInputs(b *testing.B) {
	const n, d = 1965, 560
	rng := rand.New(rand.NewPCG(1, 1))
	x := testutil.NormalRows(rng, n, d, 1)
	mask := make([][]float64, n)
	for i := range mask {
		mask[i] = make([]float64, d)
		for j := range mask[i] {
			mask[i][j] = 1
			if i%20 == 0 && rng.Float64() < 0.75 {
				mask[i][j], x[i][j] = 0, math.NaN()
			}
		}
	}
	cfg := model.DefaultConfig("vais", 20)
	cfg.K, cfg.Batch, cfg.SharedQSqrt = 25, 100, true
	m, err := model.New(cfg, x, mask)
	if err != nil {
		b.Fatal(err)
	}
	t := &Trainer{Model: m}
	for it := 0; b.Loop(); it++ {
		if _, err := t.args(Inputs(m, 1, it)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStepInputsPrefetch: the inputs stepInputs hands Step are those buildInputs draws for the
// same iteration, whether they were prepared in the background by the previous call (iterations
// 0..3 in order), prepared for another iteration and thrown away (a jump back to 1, as after
// loading a checkpoint; a changed seed), or built in place (NoPrefetch). Masked data, so that the
// mask and the NaN cleaning take part.
func TestStepInputsPrefetch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	x := testutil.NormalRows(rng, 40, 5, 1)
	mask := make([][]float64, len(x))
	for i := range mask {
		mask[i] = []float64{1, 1, 1, 1, 1}
		if i%4 == 0 {
			mask[i][2], x[i][2] = 0, math.NaN()
		}
	}
	cfg := model.DefaultConfig("vais", 2)
	cfg.M, cfg.K, cfg.Batch = 6, 3, 10
	m, err := model.New(cfg, x, mask)
	if err != nil {
		t.Fatal(err)
	}
	check := func(tr *Trainer, it int) {
		t.Helper()
		got, err := tr.stepInputs(it)
		if err != nil {
			t.Fatal(err)
		}
		want, err := buildInputs(inputKey{model: m, seed: m.Cfg.Seed, iter: it})
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			g, w := got[i], want[i]
			if gi, ok := g.([]int32); ok {
				if fmt.Sprint(gi) != fmt.Sprint(w) {
					t.Errorf("iteration %d input %d: indices %v, want %v", it, i, gi, w)
				}
				continue
			}
			gf, wf := vars.Flat64(g.(*tensors.Tensor)), vars.Flat64(w.(*tensors.Tensor))
			if d := testutil.MaxAbsDiff(gf, wf); d != 0 || len(gf) == 0 {
				t.Errorf("iteration %d input %d: max difference %g (%d values), want 0", it, i, d, len(gf))
			}
		}
	}
	tr := &Trainer{Model: m}
	for it := range 4 {
		check(tr, it)
		if tr.ahead == nil || tr.ahead.key.iter != it+1 {
			t.Fatalf("after iteration %d: no prefetch of iteration %d", it, it+1)
		}
	}
	check(tr, 1)
	m.Cfg.Seed++
	check(tr, 2)
	tr.NoPrefetch = true
	check(tr, 3)
	if tr.ahead != nil {
		t.Error("NoPrefetch: a prefetch was started")
	}
}
