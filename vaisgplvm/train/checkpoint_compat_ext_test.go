package train_test

import (
	"context"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/toy"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestLoadCheckpointBeforeConfigSplit: a checkpoint written before model.Config was split into
// its model, bound and training parts (testdata: VAIS, Q 2, M 4, K 3, 2 chains, clip 5, Adam
// beta2 0.99, seed 7, 4 full-batch iterations on toy.Data(12), data tag "toy12") still loads, with
// its settings, iteration and curve, and training continues from it.
func TestLoadCheckpointBeforeConfigSplit(t *testing.T) {
	const path = "testdata/checkpoint-before-config-split.gob"
	cfg, tag, err := train.ReadCheckpointInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	want := model.DefaultConfig("vais", 2)
	want.M, want.K, want.Batch, want.Seed = 4, 3, 0, 7
	want.ClipGrad, want.AdamBeta2, want.Samples = 5, 0.99, 2
	if !cfg.Equal(want) || tag != "toy12" {
		t.Fatalf("read %+v (data %q), want %+v (toy12)", cfg, tag, want)
	}
	m, err := model.New(cfg, toy.Data(12), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	tr.DataTag = "toy12"
	if err := tr.Load(path); err != nil {
		t.Fatal(err)
	}
	if tr.Iter != 4 || len(tr.Curve) != 4 {
		t.Fatalf("iteration %d, curve %v: want 4", tr.Iter, tr.Curve)
	}
	if err := tr.Run(context.Background(), 6, train.RunOptions{}); err != nil {
		t.Fatalf("continuing from the old checkpoint: %v", err)
	}
}
