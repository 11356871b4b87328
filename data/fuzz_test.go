package data

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadTable feeds arbitrary files to ReadTable (your own data): each is either read, with
// every observed value finite, a mask that agrees with the NaNs and rows of equal length, or
// refused with an error; never a panic. Seed corpus: testdata/fuzz/FuzzReadTable plus the cases
// below. CI runs it briefly (go test -fuzz FuzzReadTable -fuzztime 20s).
func FuzzReadTable(f *testing.F) {
	for _, s := range []string{
		"a,b,kind\n1,2,x\n3,4,y\n",
		"\ufeffa;b\r\n1;2\r\n;4\r\n",
		"a\tb\n1\tNA\n?\t2\n",
		"\"a\",\"b\"\n\"1\",\"2\"\n",
		"a,b\n1,2,3\n",
		"a,b\n1e400,2\n",
		"",
	} {
		f.Add([]byte(s), "kind")
		f.Add([]byte(s), "")
	}
	f.Fuzz(func(t *testing.T, in []byte, label string) {
		p := filepath.Join(t.TempDir(), "in.csv")
		if err := os.WriteFile(p, in, 0o644); err != nil {
			t.Fatal(err)
		}
		ds, err := ReadTable(p, TableOptions{LabelColumn: label})
		if err != nil {
			return
		}
		n, d := ds.Dims()
		if n == 0 || d == 0 || len(ds.Columns) != d {
			t.Fatalf("read %dx%d with %d column names", n, d, len(ds.Columns))
		}
		for i, r := range ds.X {
			if len(r) != d {
				t.Fatalf("row %d has %d values, want %d", i, len(r), d)
			}
			for j, v := range r {
				missing := ds.Mask != nil && ds.Mask[i][j] == 0
				if math.IsNaN(v) != missing || math.IsInf(v, 0) {
					t.Fatalf("entry (%d, %d) = %g with mask %v", i, j, v, ds.Mask != nil && ds.Mask[i][j] == 1)
				}
			}
		}
		if label != "" && len(ds.Labels) != n {
			t.Fatalf("%d labels for %d rows", len(ds.Labels), n)
		}
	})
}

// floatsFrom decodes in as float64 values, 8 bytes each (little-endian bits: any value, NaN and
// ±Inf included), into rows of width w; with ragged set, every third row loses its last value.
func floatsFrom(in []byte, w int, ragged bool) [][]float64 {
	var x [][]float64
	var row []float64
	for i := 0; i+8 <= len(in); i += 8 {
		row = append(row, math.Float64frombits(binary.LittleEndian.Uint64(in[i:])))
		if len(row) == w {
			if ragged && len(x)%3 == 2 {
				row = row[:w-1]
			}
			x, row = append(x, row), nil
		}
	}
	return x
}

// FuzzStandardize: any matrix a caller can pass (empty, ragged, NaN, ±Inf, values near the float64
// limits) gives either an error or a result of the same shape whose entries are finite where the
// input's are, NaN where the input's are NaN; never a panic.
func FuzzStandardize(f *testing.F) {
	enc := func(v ...float64) []byte {
		b := make([]byte, 0, 8*len(v))
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	f.Add(enc(1, 2, 3, 4, 5, 6), uint8(2), false)
	f.Add(enc(1.7e308, -1.7e308, 1e-320, 0, math.NaN(), 3), uint8(2), false)
	f.Add(enc(1.79e308, 1.79e308, -1.79e308), uint8(0), false) // x - mean and the std overflow (CI found it)
	f.Add(enc(1, math.Inf(1), 3, 4), uint8(1), false)
	f.Add(enc(1, 2, 3, 4, 5, 6, 7, 8, 9), uint8(3), true)
	f.Add([]byte{}, uint8(0), false)
	f.Fuzz(func(t *testing.T, in []byte, width uint8, ragged bool) {
		w := 1 + int(width%6)
		x := floatsFrom(in, w, ragged && w > 1)
		out, mean, std, err := Standardize(x)
		if err != nil {
			return
		}
		if len(out) != len(x) || len(mean) != w || len(std) != w {
			t.Fatalf("shapes: out %d rows for %d, mean %d, std %d, width %d", len(out), len(x), len(mean), len(std), w)
		}
		for j := range w {
			if math.IsInf(std[j], 0) || math.IsNaN(std[j]) || math.IsInf(mean[j], 0) || math.IsNaN(mean[j]) {
				t.Fatalf("column %d: mean %g, std %g with a nil error (issue 50: +Inf for a ±1.7e308 column)", j, mean[j], std[j])
			}
		}
		for i := range x {
			for j, v := range x[i] {
				switch {
				case math.IsNaN(v) != math.IsNaN(out[i][j]):
					t.Fatalf("x[%d][%d] = %g standardised to %g", i, j, v, out[i][j])
				case !math.IsNaN(v) && math.IsInf(out[i][j], 0):
					t.Fatalf("x[%d][%d] = %g standardised to %g (mean %g, std %g)", i, j, v, out[i][j], mean[j], std[j])
				}
			}
		}
	})
}
