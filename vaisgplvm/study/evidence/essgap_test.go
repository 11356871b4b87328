package evidence

import (
	"math"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
)

// TestPairESS: at a trained VAIS toy model (25 points), the ESS of k = 3 weights pairs with gaps
// whose mean for q0's samples equals Decompose's IWVI gap at K = 3 (another code path, other
// draws) within 3 combined standard errors; every ESS is in [1, k]; the chain's own weights come
// first; with k = 1000 samples of q0 the mean gap is within 3 s.e. + 0.02 of zero (importance
// sampling reaches the evidence). Too few points and k < 2 are refused.
func TestPairESS(t *testing.T) {
	tr := trained(t, 2, 25)
	res, bs := decomposed(t, tr)
	pairs, err := PairESS(tr, res, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 2 || pairs[0].Weights != "own" || pairs[1].Weights != "q0" {
		t.Fatalf("pairs %+v: want own then q0", pairs)
	}
	for _, p := range pairs {
		for i, e := range p.ESS {
			if !(e >= 1-1e-12 && e <= 3+1e-12) {
				t.Errorf("%s: point %d ESS %g outside [1, 3]", p.Weights, i, e)
			}
		}
		t.Logf("%s: ESS %.3f ± %.3f, gap %.4f ± %.4f, Kendall tau %.3f (null sd %.3f), gap by ESS quartile %.3f",
			p.Weights, p.MeanESS, p.MeanESSSE, p.MeanGap, p.MeanGapSE, p.Kendall, p.KendallNullSD, p.GapByESSQuartile)
	}
	iw := bs[1] // q0 with K = 3 importance samples
	q0 := pairs[1]
	if se := math.Hypot(*iw.GapSE, q0.MeanGapSE); math.Abs(*iw.Gap-q0.MeanGap) > 3*se {
		t.Errorf("q0 samples: mean gap %.4f, Decompose's IWVI gap %.4f (3 s.e. %.4f)", q0.MeanGap, *iw.Gap, 3*se)
	}
	big, err := PairESS(tr, res, 1000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if g := big[1]; math.Abs(g.MeanGap) > 3*math.Hypot(g.MeanGapSE, res.SE)+0.02 {
		t.Errorf("1000 samples of q0: mean gap %.4f ± %.4f, want 0 within 3 s.e. + 0.02", g.MeanGap, g.MeanGapSE)
	}
	few := *res
	few.Points, few.LogZ = res.Points[:5], res.LogZ[:5]
	for _, c := range []struct {
		ev *Result
		k  int
	}{{res, 1}, {&few, 3}} {
		if _, err := PairESS(tr, c.ev, c.k, 1); err == nil {
			t.Errorf("k = %d on %d points accepted", c.k, len(c.ev.Points))
		}
	}
}

// TestPairRanks: on 8 points whose ESS falls as their gap rises, Kendall's tau is -1, the null
// standard deviation is sqrt(2 (2 n + 5) / (9 n (n - 1))) = 0.2843 for n = 8, and the quartile
// means are the hand-computed gaps of the two lowest-ESS points, and so on.
func TestPairRanks(t *testing.T) {
	ev := &Result{Points: []int{0, 1, 2, 3, 4, 5, 6, 7}, LogZ: make([]float64, 8)}
	w := &eval.WeightStats{PerPointESS: []float64{8, 7, 6, 5, 4, 3, 2, 1}, PerPointBound: []float64{-1, -2, -3, -4, -5, -6, -7, -8}}
	g := pair("own", 8, ev, w)
	if math.Abs(g.Kendall+1) > 1e-12 || math.Abs(g.KendallNullSD-math.Sqrt(42.0/504)) > 1e-12 {
		t.Errorf("Kendall tau %g (want -1), null sd %g (want %g)", g.Kendall, g.KendallNullSD, math.Sqrt(42.0/504))
	}
	if want := [4]float64{7.5, 5.5, 3.5, 1.5}; g.GapByESSQuartile != want {
		t.Errorf("gap by ESS quartile %v, want %v", g.GapByESSQuartile, want)
	}
	if g.MeanGap != 4.5 || g.MeanESS != 4.5 {
		t.Errorf("means: gap %g, ESS %g (want 4.5, 4.5)", g.MeanGap, g.MeanESS)
	}
}
