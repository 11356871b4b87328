package paper

import (
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// pairedDifferences returns, for tables run with two or more seeds, a table of VAIS's seed-paired
// differences to each other method at the last snapshot of every dataset: for each of -ELBO, MSE
// and NELL (lower is better for all three), the mean ± 2 s.e. over the seeds of VAIS's value minus
// the other method's on the same seed, and on how many seeds VAIS was lower. Run r of every method
// uses seed r (the same hidden pixels in tables 2 and 3), so the paired differences are a sharper
// comparison than the two rows' error bars. It returns nil when there is nothing to pair (one
// seed, no VAIS, or no other method).
func pairedDifferences(rows []Row) *report.Table {
	last := map[string]int{} // dataset -> its last snapshot
	for _, r := range rows {
		last[r.Dataset] = max(last[r.Dataset], r.Iterations)
	}
	var datasets []string
	at := map[string]map[string]Row{} // dataset -> method -> row at the last snapshot
	for _, r := range rows {
		if r.Iterations != last[r.Dataset] || len(r.PerRun) < 2 {
			continue
		}
		if at[r.Dataset] == nil {
			at[r.Dataset] = map[string]Row{}
			datasets = append(datasets, r.Dataset)
		}
		at[r.Dataset][r.Method] = r
	}
	t := &report.Table{Header: []string{"dataset", "iters", "vs", "Δ -ELBO", "wins", "Δ MSE", "wins", "Δ NELL", "wins"}}
	for _, ds := range datasets {
		vais, ok := at[ds]["vais"]
		if !ok {
			continue
		}
		for _, other := range []string{"iwvi", "mf"} {
			o, ok := at[ds][other]
			if !ok {
				continue
			}
			a, b := commonSeeds(vais.PerRun, o.PerRun)
			if len(a) < 2 {
				continue
			}
			t.Title = "Seed-paired differences at the last snapshot: VAIS minus the other method on the same seed, " +
				"mean ± 2 s.e. over the seeds both reached it on (a diverged training has no pair; negative favours VAIS); " +
				"wins: seeds on which VAIS is lower, of those."
			cells := []string{ds, fmt.Sprint(vais.Iterations), other}
			for _, c := range []struct {
				format string
				value  func(RunResult) float64
			}{
				{"%.3f ± %.3f", func(r RunResult) float64 { return r.NegELBO }},
				{"%.4f ± %.4f", func(r RunResult) float64 { return r.MSE }},
				{"%.3f ± %.3f", func(r RunResult) float64 { return r.NELL }},
			} {
				d := make([]float64, len(a))
				wins := 0
				for i := range d {
					d[i] = c.value(a[i]) - c.value(b[i])
					if d[i] < 0 {
						wins++
					}
				}
				m := meanTwoSE(d)
				cells = append(cells, fmt.Sprintf(c.format, m[0], m[1]), fmt.Sprintf("%d/%d", wins, len(d)))
			}
			t.Rows = append(t.Rows, cells)
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
