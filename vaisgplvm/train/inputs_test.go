package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
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
