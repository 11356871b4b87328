package evidence

import (
	"math"
	"testing"
)

// TestResampledAndLearnedBackward: at a trained toy VAIS checkpoint, the resampled chains and the
// chain with a fitted backward kernel stay below the evidence; the backward kernel before fitting
// is the trained chain to rounding, fitting it does not loosen the bound beyond noise, and the
// trainer is left as it was. IWVI is reported at the resampled chains' evaluations.
func TestResampledAndLearnedBackward(t *testing.T) {
	tr := trained(t, 2, 25)
	res, bs := decomposed(t, tr)
	chain := bs[2]
	rs, err := Resampled(tr, res, 20, []int{4}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Name != "smc" || rs[1].Name != "iwvi" {
		t.Fatalf("resampled: %+v, want smc and IWVI at its evaluations", rs)
	}
	lb, err := LearnedBackward(tr, res, 20, 40)
	if err != nil {
		t.Fatal(err)
	}
	if len(lb) != 2 || math.Abs(lb[0].NegELBO-chain.NegELBO) > 1e-9*math.Abs(chain.NegELBO) {
		t.Fatalf("learned backward before fitting %+v, want the trained chain's -ELBO %.12g", lb, chain.NegELBO)
	}
	if se := math.Hypot(lb[0].SE, lb[1].SE); lb[1].NegELBO > lb[0].NegELBO+4*se {
		t.Errorf("fitting the backward kernel loosened the bound: %.4f after, %.4f before (s.e. %.4f)", lb[1].NegELBO, lb[0].NegELBO, se)
	}
	for _, b := range append(rs, lb...) {
		checkBelowEvidence(t, res, b)
	}
	if again, err := Decompose(tr, res, 20); err != nil || again[2].NegELBO != chain.NegELBO {
		t.Errorf("the trained chain after the candidates: %+v (%v), want %.12g", again, err, chain.NegELBO)
	}
	if _, err := Resampled(tr, res, 20, []int{1}, 0.5); err == nil {
		t.Error("one chain to resample: want an error")
	}
	if _, err := LearnedBackward(tr, res, 20, 0); err == nil {
		t.Error("0 fitting steps: want an error")
	}
}
