package eval_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// vaisTrainer is a VAIS trainer on 20 points (Q 2, M 5, K 3, batches of 10) after one step.
func vaisTrainer(t *testing.T) *train.Trainer {
	x := testutil.NormalRows(rand.New(rand.NewPCG(6, 6)), 20, 3, 1)
	cfg := model.DefaultConfig("vais", 2)
	cfg.M, cfg.K, cfg.Batch = 5, 3, 10
	m, err := model.New(cfg, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestGraphsReused: Evaluate and Weights build their graphs once: called again they reuse them
// (the trainer's graph cache does not grow) and give the same values.
func TestGraphsReused(t *testing.T) {
	tr := vaisTrainer(t)
	calls := func() string {
		ev, err := eval.Evaluate(tr, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		w, err := eval.Weights(tr, []int{0, 1, 2}, 4, 9)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ev.NegELBO, ev.NELL, w.ESS)
	}
	first := calls()
	n := tr.CachedGraphs()
	second := calls()
	if n == 0 || tr.CachedGraphs() != n || first != second {
		t.Errorf("second calls: %d cached graphs (first %d), values %s (first %s); want the same, and some graphs", tr.CachedGraphs(), n, second, first)
	}
}

// TestGraphCacheFollowsInPlaceChanges: a model changed in place (here its step sizes scaled, as a
// hand-tuning notebook would) gets fresh graphs: Weights then equals that of a separate copy of
// the changed model, not the cached graph's.
func TestGraphCacheFollowsInPlaceChanges(t *testing.T) {
	tr := vaisTrainer(t)
	idx := []int{0, 1, 2, 3}
	before, err := eval.Weights(tr, idx, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr.Model.Step.Scale = 3 // in place
	after, err := eval.Weights(tr, idx, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	fresh := *tr
	mm := *tr.Model
	fresh.Model = &mm // another model: graphs of its own
	want, err := eval.Weights(&fresh, idx, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after.MeanLogAccept) != fmt.Sprint(want.MeanLogAccept) || fmt.Sprint(after.MeanLogAccept) == fmt.Sprint(before.MeanLogAccept) {
		t.Errorf("mean log acceptance before %v, after scaling eta in place %v, a fresh copy %v", before.MeanLogAccept, after.MeanLogAccept, want.MeanLogAccept)
	}
}
