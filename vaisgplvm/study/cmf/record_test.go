package cmf

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestPairedTableRecord reads the default command's three seeds on record and checks the paired
// differences against values computed here from the files' numbers, and the t-interval's width
// for three seeds (t(0.975, 2) = 4.302653).
func TestPairedTableRecord(t *testing.T) {
	var runs []*ExperimentResult
	for s := 1; s <= 3; s++ {
		r, err := ReadResult(filepath.Join("..", "..", "..", "records", "cmf-frey-default", fmt.Sprintf("seed%d", s), "cmf.json"))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	tab, err := PairedTable("t", runs, "cmf", "meanfield")
	if err != nil {
		t.Fatal(err)
	}
	var d []float64
	for _, r := range runs {
		d = append(d, r.family("cmf").TestBound.PerPoint-r.family("meanfield").TestBound.PerPoint)
	}
	mean := (d[0] + d[1] + d[2]) / 3
	var ss float64
	for _, v := range d {
		ss += (v - mean) * (v - mean)
	}
	half := 4.302653 * math.Sqrt(ss/2) / math.Sqrt(3)
	want := fmt.Sprintf("%+.1f ± %.1f", mean, half)
	if got := tab.Rows[0][2]; !strings.HasPrefix(got, want) {
		t.Fatalf("held-out bound cell %q, want it to start %q", got, want)
	}
	if tab.Rows[0][1] != "1,2,3" || tab.Header[3] != "IW K=1000" {
		t.Fatalf("seeds %q, header %q", tab.Rows[0][1], tab.Header[3])
	}
	// The amortised family's AIS did not converge on any of the three seeds (their warnings).
	am, err := PairedTable("t", runs, "cmf", "amortised")
	if err != nil {
		t.Fatal(err)
	}
	if got := am.Rows[0][4]; got != "- (AIS did not converge on 3 of 3 seeds)" {
		t.Fatalf("log p(y) cell against amortised %q", got)
	}
	if _, err := PairedTable("t", runs, "cmf", "nope"); err == nil {
		t.Fatal("a family that is not there gave no error")
	}
}
