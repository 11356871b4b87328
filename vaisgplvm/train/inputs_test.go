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
	for it := 0; b.Loop(); it++ {
		if _, err := Inputs(m, 1, it).Args(m.DType()); err != nil {
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

// TestBatchPlanAndGraphCache: a model without missing entries gets no mask input and a bound
// without a chain no chain noise; a masked model's batch carries the mask of its first rows only.
// ChainPath and Params build each graph once: called again they reuse it (the cache does not grow)
// and give the same values (package eval's TestGraphsReused does the same for its evaluations).
func TestBatchPlanAndGraphCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	x := testutil.NormalRows(rng, 30, 4, 1)
	for _, c := range []struct {
		method      string
		masked      bool
		args        int
		mask, chain bool
	}{{"mf", false, 3, false, false}, {"iwvi", true, 4, true, false}, {"vais", false, 4, false, true}, {"vais", true, 5, true, true}} {
		var mask [][]float64
		data := x
		if c.masked {
			mask = make([][]float64, len(x))
			data = make([][]float64, len(x))
			for i := range x {
				mask[i] = []float64{1, 1, 1, 1}
				data[i] = append([]float64(nil), x[i]...)
				if i%3 == 0 {
					mask[i][1], data[i][1] = 0, math.NaN()
				}
			}
		}
		cfg := model.DefaultConfig(c.method, 2)
		cfg.M, cfg.K, cfg.Batch = 5, 3, 10
		m, err := model.New(cfg, data, mask)
		if err != nil {
			t.Fatal(err)
		}
		bt := Inputs(m, 1, 0)
		args, err := bt.Args(m.DType())
		if err != nil {
			t.Fatal(err)
		}
		if len(args) != c.args || (bt.Mask != nil) != c.mask || (bt.Chain != nil) != c.chain {
			t.Errorf("%s masked %v: %d graph inputs, mask %v, chain %v; want %d, %v, %v", c.method, c.masked,
				len(args), bt.Mask != nil, bt.Chain != nil, c.args, c.mask, c.chain)
		}
		for i := len(bt.Mask); i < len(bt.Idx); i++ {
			if j := bt.Idx[i]; c.masked && j%3 == 0 {
				t.Errorf("%s: point %d has a missing entry but is past the batch's %d mask rows", c.method, j, len(bt.Mask))
			}
		}
		tr, err := New(m, testutil.Backend())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
		calls := func() []float64 {
			p, err := tr.Params()
			if err != nil {
				t.Fatal(err)
			}
			out := []float64{p.NoiseVariance, p.LatentMean[0][0]}
			if c.chain {
				_, logW, err := tr.ChainPath(3, 5)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, logW)
			}
			return out
		}
		first := calls()
		n := len(tr.cache.execs)
		second := calls()
		if len(tr.cache.execs) != n || fmt.Sprint(first) != fmt.Sprint(second) {
			t.Errorf("%s: second calls: %d cached graphs (first %d), values %v (first %v); want the same", c.method,
				len(tr.cache.execs), n, second, first)
		}
	}
}
