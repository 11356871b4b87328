package experiment_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
)

// TestCheckpointTrained: a table's trainings saved through Observer.Trained load back with the
// data each one saw (Table 2's hidden pixels of its own seed) and evaluate to the -ELBO the
// finished trainer gave, draw for draw.
func TestCheckpointTrained(t *testing.T) {
	dir := t.TempDir()
	save := experiment.CheckpointTrained(dir, nil)
	type seen struct {
		data   string  // data.ContentSHA256 of the model's X and mask
		negELB float64 // Evaluate(2)'s -ELBO per point at the end of training
	}
	var mu sync.Mutex
	want := map[string]seen{}
	o := &paper.ImageOptions{Trainings: paper.Trainings{Datasets: []string{"frey"}, Jobs: 1}}
	o.Options = paper.Options{Methods: []string{"mf"}, Iters: 3, Runs: 2,
		OpenBackend: func(int, int) (backends.Backend, error) { return testutil.Backend(), nil },
		Configure:   func(c *model.Config) error { c.M, c.Batch = 4, 20; return nil },
		Observer: paper.ObserverFuncs{TrainedFunc: func(tr paper.Trained) error {
			if err := save(experiment.Trained(tr)); err != nil {
				return err
			}
			ev, err := eval.Evaluate(tr.Trainer, 2, nil)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			want[fmt.Sprintf("%s-seed%d", tr.Method, tr.Seed)] = seen{data.ContentSHA256(tr.Trainer.Model.X, tr.Trainer.Model.Mask), ev.NegELBO}
			return nil
		}}}
	if _, err := paper.RunTable(context.Background(), 2, o); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "frey-mf-seed*-*.checkpoint.gob"))
	if err != nil || len(files) != 2 || len(want) != 2 {
		t.Fatalf("checkpoints %v (%v), %d trainings seen; want one per seed, 2", files, err, len(want))
	}
	open := func(model.Config) (backends.Backend, error) { return testutil.Backend(), nil }
	seeds := map[string]bool{}
	for _, f := range files {
		tr, td, err := experiment.LoadCheckpoint(f, open, "")
		if err != nil {
			t.Fatal(err)
		}
		seed := filepath.Base(f)[len("frey-mf-"):][:len("seed1")]
		w, ok := want["mf-"+seed]
		if !ok || seeds[seed] {
			t.Fatalf("%s: no training or two of %s", f, seed)
		}
		seeds[seed] = true
		if got := data.ContentSHA256(tr.Model.X, tr.Model.Mask); got != w.data {
			t.Errorf("%s: the loaded model's data differ from what the training saw (content sha256 %.12s, want %.12s)", f, got, w.data)
		}
		if len(td.Damaged) == 0 {
			t.Errorf("%s: the loaded data have no damaged images; Table 2 hides pixels", f)
		}
		ev, err := eval.Evaluate(tr, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ev.NegELBO != w.negELB {
			t.Errorf("%s: loaded -ELBO %v, the finished training's %v; want them equal", f, ev.NegELBO, w.negELB)
		}
	}
}
