// Package toy holds the small data sets and trainers that the tests of several packages share (a
// test fixture, not part of the library): a noisy 1-D curve in 4 dimensions, its 16-dimensional
// linear image, masks that hide some entries, and trainers on them.
package toy

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Data is n points [n, 4] on a noisy 1-D curve in 4 dimensions (seeded: the same on every call).
func Data(n int) [][]float64 {
	rng := rand.New(rand.NewPCG(5, 5))
	x := make([][]float64, n)
	for i := range x {
		t := rng.Float64()*4 - 2
		x[i] = []float64{math.Sin(t), math.Cos(t), t, t * t / 4}
		for j := range x[i] {
			x[i][j] += 0.05 * rng.NormFloat64()
		}
	}
	return x
}

// Wide maps x [N, 4] to 16 dimensions through a fixed random linear map plus an offset and
// noise: more outputs than a few inducing points (a NaN entry of x adds nothing).
func Wide(x [][]float64) [][]float64 {
	rng := rand.New(rand.NewPCG(10, 10))
	const d = 16
	w := testutil.NormalRows(rng, len(x[0]), d, 1)
	out := make([][]float64, len(x))
	for n, r := range x {
		out[n] = make([]float64, d)
		for j := range out[n] {
			v := 0.5 + 0.05*rng.NormFloat64()
			for i, xi := range r {
				if !math.IsNaN(xi) {
					v += xi * w[i][j]
				}
			}
			out[n][j] = v
		}
	}
	return out
}

// WideMask hides a third of the entries of every 4th point of x (points 1, 5, 9, ...).
func WideMask(x [][]float64) [][]float64 {
	mask := make([][]float64, len(x))
	for i := range mask {
		mask[i] = make([]float64, len(x[i]))
		for j := range mask[i] {
			mask[i][j] = 1
			if i%4 == 1 && (j+i)%3 == 0 {
				mask[i][j] = 0
			}
		}
	}
	return mask
}

// WithNaN returns a copy of x with NaN at the entries mask hides.
func WithNaN(x, mask [][]float64) [][]float64 {
	out := make([][]float64, len(x))
	for i := range x {
		out[i] = append([]float64(nil), x[i]...)
		for j, v := range mask[i] {
			if v == 0 {
				out[i][j] = math.NaN()
			}
		}
	}
	return out
}

// Hidden returns Data(30) with entries 1 and 3 of every fifth row hidden: the truth, the data
// with NaN where hidden, and the mask.
func Hidden() (truth, x, mask [][]float64) {
	truth = Data(30)
	x, mask = make([][]float64, len(truth)), make([][]float64, len(truth))
	for i := range truth {
		x[i] = append([]float64(nil), truth[i]...)
		mask[i] = []float64{1, 1, 1, 1}
		if i%5 == 0 {
			mask[i] = []float64{1, 0, 1, 0}
			x[i][1], x[i][3] = math.NaN(), math.NaN()
		}
	}
	return truth, x, mask
}

// Trainer is an untrained trainer of method on Data(30): Q 2, M 6, K 3, batches of 10, adjusted by
// mutate when not nil.
func Trainer(t testing.TB, method string, mutate func(*model.Config)) *train.Trainer {
	t.Helper()
	cfg := model.DefaultConfig(method, 2)
	cfg.M, cfg.K, cfg.Batch = 6, 3, 10
	if mutate != nil {
		mutate(&cfg)
	}
	m, err := model.New(cfg, Data(30), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Fit is a trainer of the model cfg on x [N, D] (mask [N, D] or nil), trained for iters
// iterations.
func Fit(t testing.TB, cfg model.Config, x, mask [][]float64, iters int) *train.Trainer {
	t.Helper()
	tr, err := train.Fit(context.Background(), cfg, x, mask, testutil.Backend(), iters, train.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Trained is a trainer of method with K k on Hidden's data, trained full batch for iters
// iterations (Q 2, M 6), and the truth of its hidden entries.
func Trained(t testing.TB, method string, k, iters int) (*train.Trainer, [][]float64) {
	t.Helper()
	truth, x, mask := Hidden()
	cfg := model.DefaultConfig(method, 2)
	cfg.M, cfg.K, cfg.Batch = 6, k, 0
	return Fit(t, cfg, x, mask, iters), truth
}
