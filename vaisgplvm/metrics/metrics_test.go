package metrics

import (
	"math"
	"testing"
)

func TestMSEWithMask(t *testing.T) {
	x := [][]float64{{1, 2}, {3, 4}}
	p := [][]float64{{1, 0}, {0, 4}}
	if got, err := MSE(x, p, nil); err != nil || got != (4+9)/4.0 {
		t.Errorf("MSE = %g, want 3.25", got)
	}
	if got, err := MSE(x, p, [][]float64{{1, 0}, {1, 1}}); err != nil || got != 9/3.0 {
		t.Errorf("masked MSE = %g, want 3", got)
	}
}

// TestBadArguments: shapes that differ, no observed entry and no weights give an error or a
// documented NaN, never a panic.
func TestBadArguments(t *testing.T) {
	x := [][]float64{{1, 2}, {3, 4}}
	for name, c := range map[string][3][][]float64{
		"short prediction":  {x, {{1, 2}}, nil},
		"ragged prediction": {x, {{1, 2}, {3}}, nil},
		"short mask":        {x, x, {{1, 1}}},
		"ragged mask":       {x, x, {{1, 1}, {1}}},
		"nothing observed":  {x, x, {{0, 0}, {0, 0}}},
		"nil":               {nil, nil, nil},
	} {
		if v, err := MSE(c[0], c[1], c[2]); err == nil || !math.IsNaN(v) {
			t.Errorf("MSE with a %s: %g, %v; want NaN and an error", name, v, err)
		}
	}
	for _, lw := range [][]float64{nil, {}} {
		if !math.IsNaN(ESS(lw)) || !math.IsNaN(WeightEntropy(lw)) || NormalizedWeights(lw) != nil {
			t.Errorf("no weights %v: ESS %g entropy %g", lw, ESS(lw), WeightEntropy(lw))
		}
	}
	if got := OneNNError([][]float64{{0}, {1}}, []int{1}); !math.IsNaN(got) {
		t.Errorf("labels shorter than the latents: %g, want NaN", got)
	}
}

func TestOneNNError(t *testing.T) {
	h := [][]float64{{0}, {0.1}, {5}, {5.1}, {0.05}}
	if got := OneNNError(h, []int{0, 0, 1, 1, 0}); got != 0 {
		t.Errorf("separable clusters: error %g, want 0", got)
	}
	// Point 1 (0.1, label 1) has nearest neighbour point 4 (0.05, label 0): one error in five.
	// Point 4 is equidistant from points 0 and 1; ties go to the lower index (point 0, label 0).
	if got := OneNNError(h, []int{0, 1, 1, 1, 0}); got != 0.2 {
		t.Errorf("error %g, want 0.2", got)
	}
}

func TestMeanAndTwoSE(t *testing.T) {
	m, s := MeanAndTwoSE([]float64{1, 2, 3, 4})
	// sd = sqrt(5/3), se = sd / 2.
	if math.Abs(m-2.5) > 1e-15 || math.Abs(s-2*math.Sqrt(5.0/3)/2) > 1e-15 {
		t.Errorf("mean %g, 2se %g", m, s)
	}
	if m, s := MeanAndTwoSE([]float64{7}); m != 7 || s != 0 {
		t.Errorf("single value: %g ± %g", m, s)
	}
	// MeanSE: the same mean, one standard error sqrt(5/3) / 2 by hand.
	if m, se := MeanSE([]float64{4, 3, 2, 1}); math.Abs(m-2.5) > 1e-15 || math.Abs(se-math.Sqrt(5.0/3)/2) > 1e-15 {
		t.Errorf("MeanSE: %g ± %g", m, se)
	}
}

func TestESSAndEntropy(t *testing.T) {
	const k = 25
	equal := make([]float64, k)
	for i := range equal {
		equal[i] = -1234.5 // large magnitudes must not overflow
	}
	if got := ESS(equal); math.Abs(got-k) > 1e-9 {
		t.Errorf("ESS of equal weights %g, want %d", got, k)
	}
	if got := WeightEntropy(equal); math.Abs(got-math.Log(k)) > 1e-12 {
		t.Errorf("entropy of equal weights %g, want log %d", got, k)
	}
	oneHot := make([]float64, k)
	for i := range oneHot {
		oneHot[i] = -1e4
	}
	oneHot[3] = 800
	if got := ESS(oneHot); math.Abs(got-1) > 1e-12 {
		t.Errorf("ESS of one-hot weights %g, want 1", got)
	}
	if got := WeightEntropy(oneHot); math.Abs(got) > 1e-12 {
		t.Errorf("entropy of one-hot weights %g, want 0", got)
	}
	// Two equal weights among negligible ones: ESS 2, entropy log 2.
	two := append([]float64(nil), oneHot...)
	two[7] = 800
	if math.Abs(ESS(two)-2) > 1e-12 || math.Abs(WeightEntropy(two)-math.Log(2)) > 1e-12 {
		t.Errorf("two equal weights: ESS %g entropy %g", ESS(two), WeightEntropy(two))
	}
}

// TestOneNNErrorDegenerate: no neighbour (one row) or non-finite latents give NaN, not a panic.
func TestOneNNErrorDegenerate(t *testing.T) {
	nan := math.NaN()
	for name, c := range map[string]struct {
		h      [][]float64
		labels []int
	}{
		"one row":      {[][]float64{{1, 2}}, []int{0}},
		"no rows":      {nil, nil},
		"NaN latents":  {[][]float64{{nan, 1}, {nan, 2}, {nan, 3}}, []int{0, 1, 0}},
		"Inf latents":  {[][]float64{{math.Inf(1)}, {math.Inf(1)}}, []int{0, 1}},
		"short labels": {[][]float64{{1}, {2}}, []int{0}},
	} {
		if e := OneNNError(c.h, c.labels); !math.IsNaN(e) {
			t.Errorf("%s: %g, want NaN", name, e)
		}
	}
	if e := OneNNError([][]float64{{0}, {1}, {5}, {6}}, []int{0, 0, 1, 1}); e != 0 {
		t.Errorf("two clean clusters: error %g, want 0", e)
	}
}

// TestTInterval checks the half-width against Student's t quantile from tables: t(0.975, 4) =
// 2.776445 for five values, and that one value has no interval.
func TestTInterval(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5} // mean 3, sd sqrt(2.5)
	m, h := TInterval(v)
	want := 2.776445 * math.Sqrt(2.5) / math.Sqrt(5)
	if m != 3 || math.Abs(h-want) > 1e-5 {
		t.Fatalf("TInterval = %v ± %v, want 3 ± %v", m, h, want)
	}
	if _, h := TInterval([]float64{7}); !math.IsNaN(h) {
		t.Fatalf("one value: half-width %v, want NaN", h)
	}
}
