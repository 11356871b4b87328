package paper

import (
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// pairedDifferences returns, for tables run with two or more seeds, a table of each annealed
// method's seed-paired differences (Pair) to each method that is not annealed, at the last snapshot
// of every dataset: for each of -ELBO, MSE and NELL (lower is better for all three), the mean ± 2
// s.e. over the seeds of the annealed method's value minus the other's on the same seed, and on
// how many seeds the annealed method was lower. Run r of every method uses seed r (the same hidden
// pixels in tables 2 and 3), so the paired differences are a sharper comparison than the two rows'
// error bars. It returns nil when there is nothing to pair (one seed, no annealed method, or no
// other method).
func pairedDifferences(rows []Row) *report.Table {
	last := map[string]int{} // dataset -> its last snapshot
	for _, r := range rows {
		last[r.Dataset] = max(last[r.Dataset], r.Iterations)
	}
	var at []Row // the rows at their dataset's last snapshot, in table order
	for _, r := range rows {
		if r.Iterations == last[r.Dataset] {
			at = append(at, r)
		}
	}
	t := &report.Table{
		Title: "Seed-paired differences at the last snapshot: each annealed method minus each other method on the same seed, " +
			"mean ± 2 s.e. over the seeds both reached it on (a diverged training has no pair; negative favours the annealed method); " +
			"wins: seeds on which the annealed method is lower, of those.",
		Header: []string{"dataset", "iters", "method", "vs", "Δ -ELBO", "wins", "Δ MSE", "wins", "Δ NELL", "wins"},
	}
	for _, a := range at {
		if !annealed(a.Method) {
			continue
		}
		for _, b := range at {
			if b.Dataset != a.Dataset || annealed(b.Method) {
				continue
			}
			if p, ok := Pair(a, b); ok {
				t.Rows = append(t.Rows, append([]string{p.Dataset, fmt.Sprint(p.Iterations), p.A, p.B}, p.cells()...))
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// commonSeeds returns the runs of a and of b on the seeds both have, paired in a's order.
func commonSeeds(a, b []RunResult) (pa, pb []RunResult) {
	bySeed := map[uint64]RunResult{}
	for _, r := range b {
		bySeed[r.Seed] = r
	}
	for _, r := range a {
		if o, ok := bySeed[r.Seed]; ok {
			pa, pb = append(pa, r), append(pb, o)
		}
	}
	return pa, pb
}
