package baselines

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestMeanImpute: hidden entries get their column's mean over the observed reference entries,
// worked by hand; observed entries are kept.
func TestMeanImpute(t *testing.T) {
	ref := [][]float64{{1, 10}, {3, 99}, {5, 30}}
	refMask := [][]float64{{1, 1}, {1, 0}, {1, 1}}
	x := [][]float64{{7, 0}, {0, 8}}
	mask := [][]float64{{1, 0}, {0, 1}}
	got, err := MeanImpute(x, mask, ref, refMask)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{7, 20}, {3, 8}} // column means 3 and (10 + 30) / 2
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("got %v, want %v", got, want)
			}
		}
	}
	if _, err := MeanImpute(x, mask, ref, [][]float64{{1, 0}, {1, 0}, {1, 0}}); err == nil {
		t.Error("a column with no observed reference entry: want an error")
	}
}

// TestKNNImpute: k = 1 takes the nearest row (by mean squared difference over shared entries) that
// observes the entry, worked by hand; with k = R every candidate counts, so it equals the mean of
// the candidates' values, which MeanImpute gives when every reference row is a candidate.
func TestKNNImpute(t *testing.T) {
	ref := [][]float64{{0, 0, 100}, {1, 1, 200}, {5, 5, 300}, {1, 1.2, 0}}
	refMask := [][]float64{{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}}
	x := [][]float64{{1, 1.1, 0}}
	mask := [][]float64{{1, 1, 0}}
	// Distances to the reference rows: 1.105, 0.005, 16.205, 0.005 (row 3 does not observe column 2).
	got, err := KNNImpute(x, mask, ref, refMask, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if got[0][2] != 200 || got[0][0] != 1 {
		t.Errorf("k = 1: got %v, want 200 from reference row 1", got[0])
	}
	got, err = KNNImpute(x, mask, ref, refMask, 2, false)
	if err != nil || got[0][2] != 150 {
		t.Errorf("k = 2: got %v (%v), want (200 + 100) / 2", got, err)
	}
	all, err := KNNImpute(x, mask, ref, refMask, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	mean, err := MeanImpute(x, mask, ref, refMask)
	if err != nil || math.Abs(all[0][2]-mean[0][2]) > 1e-12 {
		t.Errorf("k = R: %v, column mean %v", all[0][2], mean[0][2])
	}
	// Leave-one-out on the data itself: row 1 is not its own neighbour.
	self, err := KNNImpute(ref, [][]float64{{1, 1, 1}, {1, 1, 0}, {1, 1, 1}, {1, 1, 0}}, ref, refMask, 1, true)
	if err != nil || self[1][2] != 100 {
		t.Errorf("self: row 1 imputed %v (%v), want 100 from row 0", self[1], err)
	}
	if _, err := KNNImpute(x, mask, ref, refMask, 0, false); err == nil {
		t.Error("k = 0: want an error")
	}
}

// TestPCA: the rank-q reconstruction's mean squared error is the sum of the trailing eigenvalues
// of the (1/N) covariance over D (eigenvalues from gonum's EigenSym, independent of stat.PC's
// SVD), and the scores' variances are the leading eigenvalues; to 1e-10 relative.
func TestPCA(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d, q = 200, 6, 2
	x := make([][]float64, n)
	for i := range x {
		u, v := rng.NormFloat64(), rng.NormFloat64()
		x[i] = []float64{3 * u, u + v, 2 * v, 0.1 * rng.NormFloat64(), 5 + u - v, 0.3 * rng.NormFloat64()}
	}
	scores, recon, err := PCA(x, q)
	if err != nil {
		t.Fatal(err)
	}
	cov := mat.NewSymDense(d, nil)
	mean := make([]float64, d)
	for _, r := range x {
		for j := range r {
			mean[j] += r[j] / n
		}
	}
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			s := 0.0
			for _, r := range x {
				s += (r[a] - mean[a]) * (r[b] - mean[b])
			}
			cov.SetSym(a, b, s/n)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(cov, false) {
		t.Fatal("EigenSym failed")
	}
	ev := es.Values(nil)
	sort.Sort(sort.Reverse(sort.Float64Slice(ev)))
	tail := 0.0
	for _, l := range ev[q:] {
		tail += l
	}
	mse := 0.0
	for i := range x {
		for j := range x[i] {
			mse += (x[i][j] - recon[i][j]) * (x[i][j] - recon[i][j]) / (n * d)
		}
	}
	if math.Abs(mse-tail/d) > 1e-10*tail/d {
		t.Errorf("reconstruction MSE %g, want sum of trailing eigenvalues / D = %g", mse, tail/d)
	}
	for k := 0; k < q; k++ {
		v := 0.0
		for i := range scores {
			v += scores[i][k] * scores[i][k] / n
		}
		if math.Abs(v-ev[k]) > 1e-10*ev[k] {
			t.Errorf("score %d variance %g, want eigenvalue %g", k, v, ev[k])
		}
	}
	if _, _, err := PCA(x, d+1); err == nil {
		t.Error("q > D: want an error")
	}
}
