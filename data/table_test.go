package data

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadTable(t *testing.T) {
	p := writeFile(t, "cells.csv", "g1,type,g2,g3\n1.5,a,,2\n-2,b,NA,3e-1\n0, a ,4,?\n7,c,8,9\n")
	ds, err := ReadTable(p, TableOptions{LabelColumn: "type"})
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	want := [][]float64{{1.5, nan, 2}, {-2, nan, 0.3}, {0, 4, nan}, {7, 8, 9}}
	wantMask := [][]float64{{1, 0, 1}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}}
	for i := range want {
		for j := range want[i] {
			got, w := ds.X[i][j], want[i][j]
			if (math.IsNaN(w) != math.IsNaN(got)) || (!math.IsNaN(w) && got != w) || ds.Mask[i][j] != wantMask[i][j] {
				t.Errorf("[%d][%d]: X %v mask %v, want %v mask %v", i, j, got, ds.Mask[i][j], w, wantMask[i][j])
			}
		}
	}
	if ds.Missing() != 3 {
		t.Errorf("Missing() = %d, want 3", ds.Missing())
	}
	if ds.Name != "cells" || !slices.Equal(ds.Columns, []string{"g1", "g2", "g3"}) ||
		!slices.Equal(ds.Labels, []int{0, 1, 0, 2}) || !slices.Equal(ds.LabelNames, []string{"a", "b", "c"}) {
		t.Errorf("name %q columns %v labels %v names %v", ds.Name, ds.Columns, ds.Labels, ds.LabelNames)
	}

	// Semicolons and tabs are detected; integer labels stay; a complete file has no mask.
	for _, sep := range []string{";", "\t"} {
		body := strings.ReplaceAll("x,y,class\n1,2,3\n4,5,7\n", ",", sep)
		ds, err := ReadTable(writeFile(t, "t.txt", body), TableOptions{LabelColumn: "class"})
		if err != nil || ds.Mask != nil || !slices.Equal(ds.Labels, []int{3, 7}) || ds.LabelNames != nil ||
			ds.X[1][1] != 5 || len(ds.X[0]) != 2 {
			t.Errorf("separator %q: %+v, %v", sep, ds, err)
		}
	}
	if ds, err := ReadTable(writeFile(t, "one.csv", "x\n1\n2\n"), TableOptions{}); err != nil || len(ds.X) != 2 || ds.X[1][0] != 2 {
		t.Errorf("one column: %+v, %v", ds, err)
	}
	// A spreadsheet's byte-order mark and CRLF line ends; the label is the first column.
	if ds, err := ReadTable(writeFile(t, "excel.csv", "\ufeffkind,a\r\nx,1\r\ny,2\r\n"), TableOptions{LabelColumn: "kind"}); err != nil ||
		!slices.Equal(ds.LabelNames, []string{"x", "y"}) || ds.X[1][0] != 2 {
		t.Errorf("byte-order mark: %+v, %v", ds, err)
	}
	// New points may leave a whole column unobserved (to predict it) when asked.
	p = writeFile(t, "new.csv", "a,b\n1,\n2,NaN\n")
	if ds, err := ReadTable(p, TableOptions{Columns: 2, AllowUnobservedColumns: true}); err != nil || ds.Mask[1][1] != 0 || ds.Mask[1][0] != 1 {
		t.Errorf("unobserved column allowed: %+v, %v", ds, err)
	}
	if _, err := ReadTable(p, TableOptions{Columns: 3, AllowUnobservedColumns: true}); err == nil || !strings.Contains(err.Error(), "has 2 feature columns, want 3") {
		t.Errorf("column count: error %v", err)
	}
}

func TestReadTableErrors(t *testing.T) {
	for _, c := range []struct{ name, body, label, want string }{
		{"label.csv", "a,b\n1,2\n", "kind", `no column named "kind"`},
		{"nolabel.csv", "a,b\n1,\n", "b", "label (column \"b\") is missing"},
		{"inf.csv", "a,b\n1,Inf\n", "", "line 2 column 2 (b): \"Inf\" is not a finite number"},
		{"text.csv", "a,b\n1,2\nx,3\n", "", "line 3 column 1 (a)"},
		{"short.csv", "a,b\n1,2\n3\n", "", "fields per row"},
		{"emptyrow.csv", "a,b\n1,2\n,NA\n", "", "line 3: no observed value"},
		{"empty.csv", "", "", "is empty"},
		{"emptycol.csv", "a,b\n1,\n2,?\n", "", "column 2 (b) has no observed value"},
		{"norows.csv", "a,b\n", "", "no data rows"},
		{"onlylabel.csv", "a\n1\n", "a", "no feature columns"},
		{"classes.csv", "a,kind\n1,B\n", "", "--labels kind"},
		{"utf16.csv", "\xff\xfea\x00,\x00b\x00\n\x001\x00,\x002\x00\n\x00", "", "UTF-16"},
		{"utf16be.csv", "\xfe\xff\x00a\x00,\x00b\x00\n\x001\x00,\x002\n", "", "save it as UTF-8"},
	} {
		_, err := ReadTable(writeFile(t, c.name, c.body), TableOptions{LabelColumn: c.label})
		if err == nil || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v should name the file and say %q", c.name, err, c.want)
		}
	}
	if _, err := ReadTable(filepath.Join(t.TempDir(), "absent.csv"), TableOptions{}); err == nil || !strings.Contains(err.Error(), "absent.csv") {
		t.Errorf("absent file: error %v", err)
	}
}

// TestStandardizeMissing: NaN entries are left out of the column statistics and stay NaN; the
// observed entries get the mean and unbiased standard deviation of the observed values (computed
// here by hand).
func TestStandardizeMissing(t *testing.T) {
	nan := math.NaN()
	x := [][]float64{{1, nan}, {nan, 4}, {5, nan}, {3, nan}}
	out, mean, std, err := Standardize(x)
	if err != nil {
		t.Fatal(err)
	}
	if mean[0] != 3 || std[0] != 2 || mean[1] != 4 || std[1] != 1 {
		t.Errorf("mean %v std %v, want [3 4] [2 1]", mean, std)
	}
	if out[0][0] != -1 || out[2][0] != 1 || out[1][1] != 0 || !math.IsNaN(out[1][0]) || !math.IsNaN(out[0][1]) {
		t.Errorf("out %v", out)
	}
}
