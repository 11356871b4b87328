package data

import (
	"math"
	"strings"
	"testing"
)

// TestReadPoints: new points are matched to the training columns by header name, whatever their
// order; a missing training column is to be predicted, the label column is ignored, and an unknown
// or repeated name is refused naming it.
func TestReadPoints(t *testing.T) {
	cols := []string{"a", "b", "c"}
	p := writeFile(t, "reordered.csv", "c,kind,a,b\n3,x,1,2\n6,y,4,\n")
	ds, err := ReadPoints(p, cols, "kind", 3)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ds.Columns, ",") != "a,b,c" || ds.X[0][0] != 1 || ds.X[0][1] != 2 || ds.X[0][2] != 3 ||
		ds.X[1][0] != 4 || !math.IsNaN(ds.X[1][1]) || ds.Mask[1][1] != 0 || ds.Mask[1][2] != 1 || ds.Labels != nil {
		t.Errorf("reordered: columns %v X %v mask %v labels %v", ds.Columns, ds.X, ds.Mask, ds.Labels)
	}
	p = writeFile(t, "partial.csv", "b,a\n2,1\n")
	if ds, err := ReadPoints(p, cols, "kind", 3); err != nil || !math.IsNaN(ds.X[0][2]) || ds.Mask[0][2] != 0 || ds.X[0][0] != 1 {
		t.Errorf("a training column absent from the file: %+v, %v", ds, err)
	}
	for _, c := range []struct{ name, body, want string }{
		{"renamed.csv", "a,b,C\n1,2,3\n", `column "C" is not one of the training columns (a, b, c)`},
		{"twice.csv", "a,b,a\n1,2,3\n", `column "a" appears twice`},
		{"labelnotasked.csv", "a,b,c,kind2\n1,2,3,x\n", `"kind2" is not one of the training columns`},
	} {
		if _, err := ReadPoints(writeFile(t, c.name, c.body), cols, "kind", 3); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// Without names (image data) the columns are positional and their number must match.
	p = writeFile(t, "pixels.csv", "p1,p2,p3\n1,2,3\n")
	if _, err := ReadPoints(p, nil, "", 2); err == nil || !strings.Contains(err.Error(), "want 2") {
		t.Errorf("positional with the wrong width: %v", err)
	}
	if ds, err := ReadPoints(p, nil, "", 3); err != nil || ds.X[0][2] != 3 {
		t.Errorf("positional: %+v, %v", ds, err)
	}
}
