package vars

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestMatrixMatchesFromAnyValue checks Matrix against GoMLX's own (reflective) conversion
// followed by Convert: same shape and bit-identical values, NaN and infinities included.
func TestMatrixMatchesFromAnyValue(t *testing.T) {
	rows := [][]float64{
		{1, -2.5, math.NaN(), 1e-300},
		{math.Inf(1), 0, 3.1415926535897931, -7},
		{1e30, math.Inf(-1), -0.0, 2.0 / 3},
	}
	for _, dt := range []dtypes.DType{dtypes.Float64, dtypes.Float32} {
		got, err := Matrix(rows, dt)
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		want := Convert(tensors.MustFromAnyValue(rows), dt)
		if !got.Shape().Equal(want.Shape()) {
			t.Fatalf("%s: shape %s, want %s", dt, got.Shape(), want.Shape())
		}
		g, w := Flat64(got), Flat64(want)
		for i := range w {
			if math.Float64bits(g[i]) != math.Float64bits(w[i]) {
				t.Errorf("%s: value %d = %v, want %v", dt, i, g[i], w[i])
			}
		}
	}
}

func TestMatrixErrors(t *testing.T) {
	if _, err := Matrix([][]float64{{1, 2}, {3}}, dtypes.Float64); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("ragged rows: err = %v, want one naming row 1", err)
	}
	if _, err := Matrix([][]float64{{1}}, dtypes.Int32); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("int32: err = %v, want 'not supported'", err)
	}
}

// BenchmarkMatrix times one Frey mini-batch ([100, 560]) with Matrix and with FromAnyValue.
func BenchmarkMatrix(b *testing.B) {
	rows := make([][]float64, 100)
	for i := range rows {
		rows[i] = make([]float64, 560)
	}
	b.Run("Matrix", func(b *testing.B) {
		for b.Loop() {
			if _, err := Matrix(rows, dtypes.Float64); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("FromAnyValue", func(b *testing.B) {
		for b.Loop() {
			_ = tensors.MustFromAnyValue(rows)
		}
	})
}
