package train

import (
	"context"
	"encoding/gob"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// TestLoadRefusesIncompleteCheckpoint: a checkpoint missing any one variable the model needs (the
// inducing inputs Z, q(u)'s mean, a kernel parameter, Adam's moments ...), or holding one of the
// wrong shape, is refused naming that variable, for every method; the complete one loads.
func TestLoadRefusesIncompleteCheckpoint(t *testing.T) {
	for _, method := range []string{"mf", "iwvi", "vais"} {
		newTrainer := smallTrainers(t, method, 3, func(c *model.Config) { c.Batch = 6 })
		tr := newTrainer()
		if err := tr.Run(context.Background(), 2, RunOptions{}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		good := filepath.Join(dir, "good.gob")
		if err := tr.Save(good); err != nil {
			t.Fatal(err)
		}
		if err := newTrainer().Load(good); err != nil {
			t.Fatalf("%s: the complete checkpoint: %v", method, err)
		}
		read, err := readCheckpoint(good)
		if err != nil {
			t.Fatal(err)
		}
		ck := *read
		names := map[string]bool{}
		for i, sv := range ck.Vars {
			name := sv.Scope + "/" + sv.Name
			names[sv.Name] = true
			for _, damage := range []string{"missing", "reshaped"} {
				bad := ck
				bad.Vars = slices.Delete(slices.Clone(ck.Vars), i, i+1)
				if damage == "reshaped" {
					if len(sv.Dims) == 0 || sv.Dims[0] < 2 || len(sv.I64) > 0 {
						continue
					}
					r := sv
					r.Dims = slices.Clone(sv.Dims)
					r.Dims[0]--
					r.F64 = sv.F64[:len(sv.F64)/sv.Dims[0]*r.Dims[0]]
					bad.Vars = slices.Insert(bad.Vars, i, r)
				}
				var err error
				if bad.Checksum, err = bad.sum(); err != nil { // a well-formed checkpoint that lacks the variable
					t.Fatal(err)
				}
				p := filepath.Join(dir, "bad.gob")
				f, err := os.Create(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := gob.NewEncoder(f).Encode(&bad); err != nil {
					t.Fatal(err)
				}
				f.Close()
				err = newTrainer().Load(p)
				if err == nil || !strings.Contains(err.Error(), sv.Name) {
					t.Errorf("%s: checkpoint with %s %s: %v, want an error naming it", method, damage, name, err)
				}
			}
		}
		if !names["z"] || !names["q_mu"] {
			t.Errorf("%s: the checkpoint lacks Z or q(u)'s mean: %v", method, names)
		}
	}
}

// TestLoadRefusesMixedDType (issue 50, class 5): a float64 checkpoint holding one variable stored
// as float32 (with a matching checksum) is refused naming the variable and both types; before,
// GoMLX's "requested to reuse variable" panic message surfaced.
func TestLoadRefusesMixedDType(t *testing.T) {
	newTrainer := smallTrainers(t, "mf", 4)
	tr := newTrainer()
	if err := tr.Run(context.Background(), 2, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ck.gob")
	if err := tr.Save(p); err != nil {
		t.Fatal(err)
	}
	ck, err := readCheckpoint(p)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ck.Vars, func(v savedVar) bool { return v.DType == "Float64" })
	ck.Vars[i].DType = "Float32"
	if ck.Checksum, err = ck.sum(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := gob.NewEncoder(f).Encode(ck); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err = newTrainer().Load(p)
	if err == nil || !strings.Contains(err.Error(), ck.Vars[i].Name) || !strings.Contains(err.Error(), "Float32 in a checkpoint of a Float64 model") {
		t.Errorf("a float32 variable in a float64 checkpoint: %v, want an error naming it", err)
	}
}

// TestChecksumIsOfContent: the checksum depends on the checkpoint's content only: a nil and an
// empty slice (gob decodes an empty one as nil) give the same sum, a changed value another.
func TestChecksumIsOfContent(t *testing.T) {
	a := checkpoint{ConfigVersion: 1, DataTag: "oilflow", Iter: 1, Curve: []float64{2.5},
		Vars: []savedVar{{Scope: "/", Name: "x", Dims: []int{}, DType: "Float64", F64: []float64{1}, I64: []int64{}}}}
	b := a
	b.Vars = []savedVar{{Scope: "/", Name: "x", DType: "Float64", F64: []float64{1}}}
	sa, _ := a.sum()
	sb, _ := b.sum()
	if !slices.Equal(sa, sb) {
		t.Error("nil and empty slices give different checksums")
	}
	b.Vars[0].F64 = []float64{math.Nextafter(1, 2)}
	if sc, _ := b.sum(); slices.Equal(sa, sc) {
		t.Error("a value one ulp away gives the same checksum")
	}
}

// smallTrainers returns a maker of fresh trainers of one small model of method (12 points of 3
// columns drawn with seed, Q 2, M 4, K 2; mutate adjusts the configuration).
func smallTrainers(t *testing.T, method string, seed uint64, mutate ...func(*model.Config)) func() *Trainer {
	rng := rand.New(rand.NewPCG(seed, seed))
	x := vars.Normal(rng, 12, 3).Value().([][]float64)
	cfg := model.DefaultConfig(method, 2)
	cfg.M, cfg.K = 4, 2
	for _, f := range mutate {
		f(&cfg)
	}
	return func() *Trainer {
		m, err := model.New(cfg, x, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := New(m, testutil.Backend())
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
}
