package paper

import (
	"bytes"
	"encoding/gob"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// FuzzStoredTrainingBitFlip flips one bit anywhere in a sealed stored training: readStored must
// refuse it (never return a training), and return the training intact when nothing is flipped.
func FuzzStoredTrainingBitFlip(f *testing.F) {
	s := storedJob{Format: storeFormat, Key: "0123456789abcdef0123456789abcdef", Secs: 0.125, Wall: 3.5,
		Curve: []float64{10, 8, 7.5, 7.25}, Evals: []*eval.Evaluation{{NegELBO: -3.25, NegPointBound: -5}}, Backend: "Go Backend"}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&s); err != nil {
		f.Fatal(err)
	}
	sealed := rundir.Seal(sealJob, b.Bytes())
	for _, pos := range []uint{0, 10, 30, 90, uint(len(sealed)) / 2, uint(len(sealed)) - 1} {
		f.Add(pos, uint8(0), true)
	}
	f.Add(uint(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, pos uint, bit uint8, flip bool) {
		buf := bytes.Clone(sealed)
		if flip {
			buf[pos%uint(len(buf))] ^= 1 << (bit % 8)
		}
		path := filepath.Join(t.TempDir(), "job.gob")
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readStored(path)
		switch {
		case flip && (err == nil || got != nil):
			t.Fatalf("bit %d of byte %d flipped: read back (%v)", bit%8, pos%uint(len(buf)), err)
		case !flip && (err != nil || got == nil || got.Key != s.Key || got.Secs != s.Secs || len(got.Curve) != 4):
			t.Fatalf("the intact file: %+v, %v", got, err)
		}
	})
}
