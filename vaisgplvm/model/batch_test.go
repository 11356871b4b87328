package model_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

func randomData(n, d int, seed uint64) [][]float64 {
	return testutil.NormalRows(rand.New(rand.NewPCG(seed, 1)), n, d, 1)
}

// TestArrangeBatch: with the projected fit on masked data (D 80 > M 5, VAIS, shared q(u) root),
// the points with missing entries come first in their order, then the others in theirs, and the
// mask rows are their count rounded up to 8; with D < M, or with too many damaged points for it
// to pay, the batch is kept as is with the whole mask; without a mask, r = 0.
func TestArrangeBatch(t *testing.T) {
	const n, d = 60, 80
	x := randomData(n, d, 3)
	mask := make([][]float64, n)
	damaged := map[int32]bool{}
	for i := range mask {
		mask[i] = make([]float64, d)
		for j := range mask[i] {
			mask[i][j] = 1
		}
		if i%7 == 3 {
			mask[i][i%d] = 0
			damaged[int32(i)] = true
		}
	}
	cfg := model.DefaultConfig("vais", 2)
	cfg.M, cfg.K, cfg.Batch, cfg.SharedQSqrt = 5, 5, 40, true
	m, err := model.New(cfg, x, mask)
	if err != nil {
		t.Fatal(err)
	}
	idx := make([]int32, 40)
	for i := range idx {
		idx[i] = int32(59 - i) // 59 .. 20: damaged 59, 52, 45, 38, 31, 24 (6 points)
	}
	in := slices.Clone(idx)
	got, r := m.ArrangeBatch(idx)
	if !slices.Equal(idx, in) {
		t.Errorf("ArrangeBatch changed its argument")
	}
	want := []int32{59, 52, 45, 38, 31, 24}
	for _, j := range in {
		if !damaged[j] {
			want = append(want, j)
		}
	}
	if r != 8 || !slices.Equal(got, want) {
		t.Errorf("arranged %v r %d, want %v r 8", got, r, want)
	}

	// Every point damaged: the masked rows' means cost more than the projection saves.
	all := make([][]float64, n)
	for i := range all {
		all[i] = slices.Clone(mask[3])
	}
	if m2, err := model.New(cfg, x, all); err != nil {
		t.Fatal(err)
	} else if got, r := m2.ArrangeBatch(in); r != 40 || !slices.Equal(got, in) {
		t.Errorf("all damaged: r %d (want 40, the whole mask), order changed %v", r, !slices.Equal(got, in))
	}

	// D < M: never projected.
	narrow := randomData(n, 4, 4)
	nm := make([][]float64, n)
	for i := range nm {
		nm[i] = []float64{1, 1, 1, float64(i % 2)}
	}
	cfg.M = 8
	if m3, err := model.New(cfg, narrow, nm); err != nil {
		t.Fatal(err)
	} else if got, r := m3.ArrangeBatch(in); r != 40 || !slices.Equal(got, in) {
		t.Errorf("D < M: r %d (want 40), order changed %v", r, !slices.Equal(got, in))
	}

	// No mask.
	cfg.M = 5
	if m4, err := model.New(cfg, x, nil); err != nil {
		t.Fatal(err)
	} else if got, r := m4.ArrangeBatch(in); r != 0 || !slices.Equal(got, in) {
		t.Errorf("no mask: r %d (want 0), order changed %v", r, !slices.Equal(got, in))
	}
}
