package latent

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestPCABadInput: every input a caller can pass that PCA cannot use is an error naming the
// problem, never a panic.
func TestPCABadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		x    [][]float64
		q    int
		want string
	}{
		{"nil", nil, 1, "no rows"},
		{"no columns", [][]float64{{}, {}}, 1, "no columns"},
		{"ragged", [][]float64{{1, 2}, {3}}, 1, "row 2"},
		{"NaN", [][]float64{{1, math.NaN()}, {3, 4}}, 1, "not finite"},
		{"Inf", [][]float64{{1, math.Inf(1)}, {3, 4}}, 1, "not finite"},
		{"q 0", [][]float64{{1, 2}, {3, 4}}, 0, "0 < q"},
		{"q > D", [][]float64{{1, 2}, {3, 4}}, 3, "0 < q"},
	} {
		_, err := PCA(c.x, c.q)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestPCAExtremeScales: data near the float64 limits (1e300 and 1e-300 times a standard sample)
// gives, promptly, the scores of the standard sample (PCA's scores are standardised, so they do
// not depend on one common factor) to 1e-9. Before the data was brought to |x| <= 1, gonum's SVD
// never returned on the 1e300 case.
func TestPCAExtremeScales(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([][]float64, 30)
	for i := range x {
		x[i] = []float64{rng.NormFloat64(), rng.NormFloat64() * 2, rng.NormFloat64() * 0.5, rng.NormFloat64()}
	}
	want, err := PCA(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []float64{1.7e308 / 10, 1e300, 1e-300} {
		y := make([][]float64, len(x))
		for i, r := range x {
			y[i] = make([]float64, len(r))
			for j, v := range r {
				y[i][j] = v * f
			}
		}
		done := make(chan struct{})
		var got [][]float64
		go func() {
			got, err = PCA(y, 2)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("PCA of the data times %g did not return in 20 s", f)
		}
		if err != nil {
			t.Fatalf("x %g: %v", f, err)
		}
		for i := range want {
			for k := range want[i] {
				// The sign of a principal component is arbitrary: compare magnitudes per column sign.
				if math.Abs(math.Abs(got[i][k])-math.Abs(want[i][k])) > 1e-9 {
					t.Fatalf("x %g: score [%d][%d] %g, want ±%g", f, i, k, got[i][k], want[i][k])
				}
			}
		}
	}
}
