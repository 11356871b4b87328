package data

import (
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
