package paper

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// TestPairedDifferences checks the seed-paired table against differences worked by hand: VAIS
// -ELBO 1, 2, 3 against IWVI 2, 2, 5 gives differences -1, 0, -2: mean -1, sd 1, 2 s.e. 2/sqrt 3
// = 1.155, VAIS lower on 2 of 3 seeds (a tie is not a win).
func TestPairedDifferences(t *testing.T) {
	runs := func(elbo ...float64) []RunResult {
		out := make([]RunResult, len(elbo))
		for i, e := range elbo {
			out[i] = RunResult{Seed: uint64(i + 1), NegELBO: e, MSE: 0.5, NELL: e * 10}
		}
		return out
	}
	rows := []Row{
		{Dataset: "oilflow", Method: "iwvi", Iterations: 10, PerRun: runs(9, 9, 9)}, // not the last snapshot
		{Dataset: "oilflow", Method: "iwvi", Iterations: 30, PerRun: runs(2, 2, 5)},
		{Dataset: "oilflow", Method: "vais", Iterations: 30, PerRun: runs(1, 2, 3)},
		{Dataset: "oilflow", Method: "mf", Iterations: 30, PerRun: runs(1, 2, 3)},
		// uha 3, 4, 5 against IWVI 2, 2, 5: differences 1, 2, 0: mean 1, sd 1, uha lower on none.
		// Against VAIS (also annealed): no line.
		{Dataset: "oilflow", Method: "uha", Iterations: 30, PerRun: runs(3, 4, 5)},
	}
	tab := pairedDifferences(rows)
	if tab == nil {
		t.Fatal("three seeds: want a paired table, got none")
	}
	got := tab.Text()
	for _, want := range []string{
		"| oilflow | 30 | vais | iwvi | -1.000 ± 1.155 | 2/3 | 0.0000 ± 0.0000 | 0/3 | -10.000 ± 11.547 | 2/3 |",
		"| oilflow | 30 | vais | mf | 0.000 ± 0.000 | 0/3 | 0.0000 ± 0.0000 | 0/3 | 0.000 ± 0.000 | 0/3 |",
		"| oilflow | 30 | uha | iwvi | 1.000 ± 1.155 | 0/3 | 0.0000 ± 0.0000 | 0/3 | 10.000 ± 11.547 | 0/3 |",
		"| oilflow | 30 | uha | mf | 2.000 ± 0.000 | 0/3 | 0.0000 ± 0.0000 | 0/3 | 20.000 ± 0.000 | 0/3 |",
		"over the seeds both reached it on",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("paired table lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "| oilflow |") != 4 {
		t.Errorf("want one line per annealed method and other method at the last snapshot:\n%s", got)
	}
	one := []Row{
		{Dataset: "wine", Method: "iwvi", Iterations: 30, PerRun: runs(2)},
		{Dataset: "wine", Method: "vais", Iterations: 30, PerRun: runs(1)},
	}
	if tab := pairedDifferences(one); tab != nil {
		t.Errorf("one seed: want no paired table, got %q", tab.Text())
	}
	shifted := []Row{
		{Dataset: "wine", Method: "iwvi", Iterations: 30, PerRun: runs(2, 3)},
		{Dataset: "wine", Method: "vais", Iterations: 30, PerRun: []RunResult{{Seed: 2}, {Seed: 3}}},
	}
	if tab := pairedDifferences(shifted); tab != nil {
		t.Errorf("one seed in common: want no paired table, got %q", tab.Text())
	}
	// VAIS's seed 2 diverged: the pairs are seeds 1 and 3, differences 1 - 2 and 3 - 5: mean -1.5,
	// sd 0.707, 2 s.e. 1.000, VAIS lower on 2 of 2.
	gap := []Row{
		{Dataset: "wine", Method: "iwvi", Iterations: 30, PerRun: runs(2, 2, 5)},
		{Dataset: "wine", Method: "vais", Iterations: 30, PerRun: []RunResult{{Seed: 1, NegELBO: 1}, {Seed: 3, NegELBO: 3}}},
	}
	if tab := pairedDifferences(gap); tab == nil || !strings.Contains(tab.Text(), "| wine | 30 | vais | iwvi | -1.500 ± 1.000 | 2/2 |") {
		t.Errorf("a diverged seed: want the pairs of seeds 1 and 3, got %v", tab)
	}
}

// TestOwnDataHasNoPaperColumns: Table 1 on a dataset the paper does not print drops the paper's
// columns and the caption about them; on oilflow they stay, even at iteration counts the paper
// prints nothing for.
func TestOwnDataHasNoPaperColumns(t *testing.T) {
	row := func(ds string) Row {
		return Row{Dataset: ds, Method: "vais", Iterations: 30, Runs: 1, NegELBO: [2]float64{1, 0}, PerRun: []RunResult{{Seed: 1}}}
	}
	for _, c := range []struct {
		dataset string
		paper   bool
	}{{"mine", false}, {"oilflow", true}} {
		md := (&Result{Table: 1, Rows: []Row{row(c.dataset)}, Settings: map[string]any{}}).Markdown()
		if got := strings.Contains(md, "paper -ELBO"); got != c.paper || strings.Contains(md, paperScale) != c.paper {
			t.Errorf("%s: paper columns %v, want %v:\n%s", c.dataset, got, c.paper, md)
		}
	}
}

// TestPairTables pairs rows of two tables written to disk and read back, against differences
// worked by hand: table a's VAIS -ELBO 1, 2, 3 on seeds 1-3 against table b's IWVI 2, 2, 5 on
// seeds 2-4 pairs seeds 2 and 3 only (2 - 2 = 0 and 3 - 5 = -2): mean -1, sd 1.414, 2 s.e. 2,
// VAIS lower on 1 of 2.
func TestPairTables(t *testing.T) {
	seeds := func(first uint64, elbo ...float64) []RunResult {
		out := make([]RunResult, len(elbo))
		for i, e := range elbo {
			out[i] = RunResult{Seed: first + uint64(i), NegELBO: e, MSE: e / 100, NELL: -e}
		}
		return out
	}
	a := &Result{Table: 2, Settings: map[string]any{"k": 25}, Rows: []Row{
		{Dataset: "frey", Method: "iwvi", Iterations: 30, PerRun: seeds(1, 0, 0, 0)},
		{Dataset: "frey", Method: "vais", Iterations: 30, SecPerIter: 0.5, PerRun: seeds(1, 1, 2, 3)},
	}}
	b := &Result{Table: 2, Settings: map[string]any{"k": 80}, Rows: []Row{
		{Dataset: "frey", Method: "iwvi", Iterations: 30, SecPerIter: 0.4, PerRun: seeds(2, 2, 5, 9)},
	}}
	dir := t.TempDir()
	for name, r := range map[string]*Result{"a": a, "b": b} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		buf, _ := json.Marshal(r)
		if err := os.WriteFile(filepath.Join(dir, name, "table2.json"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ra, err := ReadResult(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := ReadResult(filepath.Join(dir, "b", "table2.json"))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := PairTables(ra, "vais", "vais K 25", rb, "", "iwvi K 80", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Seeds != 2 || ps[0].NegELBO != [2]float64{-1, 2} || ps[0].Lower != [3]int{1, 1, 0} ||
		ps[0].SecPerIter != [2]float64{0.5, 0.4} {
		t.Fatalf("pairings: got %+v, want one over 2 seeds, -ELBO -1 ± 2, A lower on 1/2 for -ELBO and MSE and 0/2 for NELL (its differences 0 and +2), s/iter 0.5 and 0.4", ps)
	}
	if got := PairingTable(ps).Text(); !strings.Contains(got, "| frey | 30 | vais K 25 | iwvi K 80 | -1.000 ± 2.000 | 1/2 | -0.0100 ± 0.0200 | 1/2 | 1.000 ± 2.000 | 0/2 | 0.500 | 0.400 |") {
		t.Errorf("pairing table:\n%s", got)
	}
	var oe *option.Error
	for name, err := range map[string]error{
		"no method named":  second(PairTables(ra, "", "a", rb, "", "b", 0)),
		"a missing method": second(PairTables(ra, "uha", "a", rb, "", "b", 0)),
		"no common iters":  second(PairTables(ra, "vais", "a", rb, "", "b", 60)),
	} {
		if !errors.As(err, &oe) {
			t.Errorf("%s: want an *option.Error, got %v", name, err)
		}
	}
	if _, err := ReadResult(dir); err == nil || !strings.Contains(err.Error(), "found 0") {
		t.Errorf("a directory without a table: got %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
