package train_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// FuzzLoadCheckpoint feeds damaged checkpoints to Trainer.Load: any input is either loaded (and
// then a step runs) or refused with an error; never a panic. The seed corpus is a real checkpoint
// of a small VAIS model (saved after 2 steps), its truncations and single-byte changes of it.
// CI runs it briefly (.ci/run: go test -fuzz FuzzLoadCheckpoint -fuzztime 5000x).
func FuzzLoadCheckpoint(f *testing.F) {
	rng := rand.New(rand.NewPCG(8, 8))
	x := vars.Normal(rng, 12, 3).Value().([][]float64)
	cfg := model.DefaultConfig("vais", 2)
	cfg.M, cfg.K = 4, 2
	newTrainer := func() *train.Trainer {
		m, err := model.New(cfg, x, nil)
		if err != nil {
			f.Fatal(err)
		}
		return train.New(m, testutil.Backend())
	}
	tr := newTrainer()
	if err := tr.Run(2, nil, 0, nil); err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	good := filepath.Join(dir, "good.gob")
	if err := tr.Save(good); err != nil {
		f.Fatal(err)
	}
	buf, err := os.ReadFile(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(buf)
	for _, cut := range []int{0, 10, len(buf) / 2, len(buf) - 1} {
		f.Add(buf[:cut])
	}
	for _, at := range []int{len(buf) / 3, len(buf) / 2, 2 * len(buf) / 3, len(buf) - 9} {
		b := bytes.Clone(buf)
		b[at] ^= 0x5a
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p := filepath.Join(t.TempDir(), "ck.gob")
		if err := os.WriteFile(p, in, 0o644); err != nil {
			t.Fatal(err)
		}
		tr := newTrainer()
		if err := tr.Load(p); err != nil {
			return
		}
		if tr.Iter < 0 || len(tr.Curve) != tr.Iter {
			t.Fatalf("loaded iteration %d with %d curve values", tr.Iter, len(tr.Curve))
		}
	})
}
