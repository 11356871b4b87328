package paper

import (
	"strings"
	"testing"
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
	}
	tab := pairedDifferences(rows)
	if tab == nil {
		t.Fatal("three seeds: want a paired table, got none")
	}
	got := tab.Text()
	for _, want := range []string{
		"| oilflow | 30 | iwvi | -1.000 ± 1.155 | 2/3 | 0.0000 ± 0.0000 | 0/3 | -10.000 ± 11.547 | 2/3 |",
		"| oilflow | 30 | mf | 0.000 ± 0.000 | 0/3 | 0.0000 ± 0.0000 | 0/3 | 0.000 ± 0.000 | 0/3 |",
		"over the seeds both reached it on",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("paired table lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "| oilflow |") != 2 {
		t.Errorf("want one line per other method at the last snapshot:\n%s", got)
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
	if tab := pairedDifferences(gap); tab == nil || !strings.Contains(tab.Text(), "| wine | 30 | iwvi | -1.500 ± 1.000 | 2/2 |") {
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
