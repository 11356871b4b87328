package train_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	_, buf, newTrainer := savedCheckpoint(f, "vais", 8)
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

// FuzzCheckpointBitFlip (issue 50, class 3a) flips one bit of a valid checkpoint at a fuzzed
// offset: Load either refuses the file or restores exactly the saved iteration, curve and
// variables (a flip that only renames a field of gob's type description loses nothing). Before
// checkpoints carried a checksum, a flipped bit in a lengthscale was accepted with a shifted value.
// CI runs it briefly (.ci/run: go test -fuzz FuzzCheckpointBitFlip).
func FuzzCheckpointBitFlip(f *testing.F) {
	tr, buf, newTrainer := savedCheckpoint(f, "iwvi", 9)
	want := snapshotVars(f, tr)
	for _, at := range []uint{0, 100, uint(len(buf) - 1)} {
		f.Add(at, uint8(7))
	}
	for i := 1; i < 32; i++ { // spread over the file: most land in a variable's values
		f.Add(uint(i*len(buf)/32), uint8(i%8))
	}
	// Found by CI's fuzzing: bit 1 of byte 1012 of the file before the header, in
	// gob's description of the checkpoint's fields: the fields were skipped, the content checksum
	// with them, and the file loaded as an empty checkpoint of iteration 0.
	for _, at := range []uint{1012, 1012 + 21 + 32} {
		f.Add(at, uint8(1))
	}
	f.Fuzz(func(t *testing.T, at uint, bit uint8) {
		b := bytes.Clone(buf)
		b[at%uint(len(b))] ^= 1 << (bit % 8)
		p := filepath.Join(t.TempDir(), "ck.gob")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got := newTrainer()
		if err := got.Load(p); err != nil {
			return
		}
		if got.Iter != tr.Iter || !slices.Equal(got.Curve, tr.Curve) {
			t.Fatalf("flipped bit %d of byte %d: loaded iteration %d, curve %v; saved %d, %v", bit%8, at%uint(len(b)), got.Iter, got.Curve, tr.Iter, tr.Curve)
		}
		for name, v := range snapshotVars(t, got) {
			if !slices.Equal(v, want[name]) {
				t.Fatalf("flipped bit %d of byte %d: variable %s loaded as %v, saved %v", bit%8, at%uint(len(b)), name, v, want[name])
			}
		}
	})
}

// snapshotVars returns every variable of the trainer's context as float64 values, by scope and name.
func snapshotVars(tb testing.TB, tr *train.Trainer) map[string][]float64 {
	tb.Helper()
	out := map[string][]float64{}
	p, err := tr.Params()
	if err != nil {
		tb.Fatal(err)
	}
	out["lengthscales"] = p.Lengthscales
	out["noise"] = []float64{p.NoiseVariance}
	for i, row := range p.LatentMean {
		out["a"+strconv.Itoa(i)] = row
	}
	for i, row := range p.Z {
		out["z"+strconv.Itoa(i)] = row
	}
	return out
}

// savedCheckpoint trains a small model of method (12 points of 3 columns drawn with seed, Q 2, M 4,
// K 2) for 2 steps and returns it, its checkpoint's bytes and a maker of fresh trainers of the
// same model.
func savedCheckpoint(f *testing.F, method string, seed uint64) (*train.Trainer, []byte, func() *train.Trainer) {
	rng := rand.New(rand.NewPCG(seed, seed))
	x := vars.Normal(rng, 12, 3).Value().([][]float64)
	cfg := model.DefaultConfig(method, 2)
	cfg.M, cfg.K = 4, 2
	newTrainer := func() *train.Trainer {
		m, err := model.New(cfg, x, nil)
		if err != nil {
			f.Fatal(err)
		}
		tr, err := train.New(m, testutil.Backend())
		if err != nil {
			f.Fatal(err)
		}
		return tr
	}
	tr := newTrainer()
	if err := tr.Run(context.Background(), 2, train.RunOptions{}); err != nil {
		f.Fatal(err)
	}
	good := filepath.Join(f.TempDir(), "good.gob")
	if err := tr.Save(good); err != nil {
		f.Fatal(err)
	}
	buf, err := os.ReadFile(good)
	if err != nil {
		f.Fatal(err)
	}
	return tr, buf, newTrainer
}
