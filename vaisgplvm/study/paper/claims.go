package paper

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Claim is one ordering the paper reports, checked against ours: which methods come out lower (or
// higher) on one metric of one dataset, in the paper's table and in our run.
type Claim struct {
	Subject string `json:"subject"` // e.g. "oilflow -ELBO"
	Paper   string `json:"paper"`   // the paper's ordering with its values, e.g. "VAIS < IWVI < MF (-6.82 < -4.13 < -3.07) at 3000 iterations"
	Ours    string `json:"ours"`    // ours, with means over the seeds
	Agree   bool   `json:"agree"`   // the two orderings are the same
	// SameBest says the same method comes first in both (true whenever Agree is).
	SameBest bool   `json:"same_best"`
	Words    string `json:"words"` // the comparison in a sentence
}

// ordering orders names by values (ascending when lower is better, else descending) and formats
// them as "A < B < C (1.00 < 2.00 < 3.00)" with format for the values, "=" between equal values.
func ordering(names []string, values []float64, lowerBetter bool, format string) (order []int, text string) {
	order = make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return better(values[order[a]], values[order[b]], lowerBetter) })
	rel := " < "
	if !lowerBetter {
		rel = " > "
	}
	var ns, vs strings.Builder
	for n, i := range order {
		if n > 0 {
			r := rel
			if values[i] == values[order[n-1]] {
				r = " = "
			}
			ns.WriteString(r)
			vs.WriteString(r)
		}
		ns.WriteString(strings.ToUpper(names[i]))
		fmt.Fprintf(&vs, format, values[i])
	}
	return order, ns.String() + " (" + vs.String() + ")"
}

// better reports whether a is strictly better than b.
func better(a, b float64, lowerBetter bool) bool {
	if lowerBetter {
		return a < b
	}
	return a > b
}

// orderClaim compares the paper's ordering of names on a metric with ours. The orderings agree
// when every pair of methods that the paper orders strictly is ordered the same way in ours (a tie
// in the paper allows either order); SameBest when one method is best (or tied best) in both.
func orderClaim(subject string, names []string, paper, ours []float64, lowerBetter bool, format, paperAt, oursAt string) Claim {
	po, pt := ordering(names, paper, lowerBetter, format)
	oo, ot := ordering(names, ours, lowerBetter, format)
	c := Claim{Subject: subject, Paper: pt + paperAt, Ours: ot + oursAt, Agree: true}
	for i := range names {
		if paper[i] == paper[po[0]] && ours[i] == ours[oo[0]] {
			c.SameBest = true // best (or tied best) in both
		}
		for j := range names {
			if better(paper[i], paper[j], lowerBetter) && !better(ours[i], ours[j], lowerBetter) {
				c.Agree = false
			}
		}
	}
	best := "lowest"
	if !lowerBetter {
		best = "highest"
	}
	pb, ob := strings.ToUpper(names[po[0]]), strings.ToUpper(names[oo[0]])
	switch {
	case c.Agree:
		c.Words = fmt.Sprintf("%s: the orderings agree (%s %s in ours)", subject, ob, best)
	case c.SameBest:
		c.Words = fmt.Sprintf("%s: %s is %s in both, the others are ordered differently", subject, ob, best)
	default:
		c.Words = fmt.Sprintf("%s: the orderings differ (%s %s in the paper, %s in ours)", subject, pb, best, ob)
	}
	return c
}

// claims checks the paper's orderings in Tables 1-3 against a result: per dataset and metric, the
// methods the paper prints (uha and the other additions left out) at its last printed iteration
// count against ours at our last snapshot.
func claims(r *Result) []Claim {
	out := []Claim{}
	last := map[string]int{}
	for _, row := range r.Rows {
		last[row.Dataset] = max(last[row.Dataset], row.Iterations)
	}
	var datasets []string
	byCell := map[string][]Row{}
	for _, row := range r.Rows {
		if row.Iterations != last[row.Dataset] {
			continue
		}
		if _, ok := byCell[row.Dataset]; !ok {
			datasets = append(datasets, row.Dataset)
		}
		byCell[row.Dataset] = append(byCell[row.Dataset], row)
	}
	for _, ds := range datasets {
		paperIters := 3000
		if ds == "mnist" {
			paperIters = 2000
		}
		var names []string
		var rows []Row // the methods the paper prints (not uha, smc, mcd)
		var paperRows []PaperRow
		for _, row := range byCell[ds] {
			if p, ok := Paper(ds, row.Method, paperIters); ok {
				names, rows, paperRows = append(names, row.Method), append(rows, row), append(paperRows, p)
			}
		}
		if len(names) < 2 {
			continue
		}
		paperAt := fmt.Sprintf(" at %d iterations, 10 runs", paperIters)
		oursAt := fmt.Sprintf(" at %d iterations, mean of %s", rows[0].Iterations, seeds(rows[0].Runs))
		if slices.ContainsFunc(rows, func(r Row) bool { return len(r.DivergedSeeds) > 0 }) { // the runs differ only by divergences
			fewest := slices.MinFunc(rows, func(a, b Row) int { return a.Runs - b.Runs })
			most := slices.MaxFunc(rows, func(a, b Row) int { return a.Runs - b.Runs })
			oursAt = fmt.Sprintf(" at %d iterations, mean of each method's %d-%d seeds (some diverged)", rows[0].Iterations, fewest.Runs, most.Runs)
		}
		if r.Table == 3 {
			var p, o []float64
			var pe, oe []float64
			for i, row := range rows {
				v := PaperTable3[names[i]]
				p, o = append(p, v.ESS), append(o, row.ESS[0])
				pe, oe = append(pe, v.Entropy), append(oe, row.Entropy[0])
			}
			out = append(out, orderClaim(ds+" ESS", names, p, o, false, "%.1f", " (K = 25)", oursAt),
				orderClaim(ds+" weight entropy", names, pe, oe, false, "%.2f", " (K = 25)", oursAt))
			continue
		}
		for _, m := range []struct {
			name   string
			format string
			paper  func(PaperRow) float64
			ours   func(Row) float64
		}{
			{"-ELBO", "%.2f", func(p PaperRow) float64 { return p.NegELBO.Mean }, func(r Row) float64 { return r.NegELBO[0] }},
			{"MSE", "%.4g", func(p PaperRow) float64 { return p.MSE.Mean }, func(r Row) float64 { return r.MSE[0] }},
			{"NELL", "%.2f", func(p PaperRow) float64 { return p.NELL.Mean }, func(r Row) float64 { return r.NELL[0] }},
		} {
			var p, o []float64
			for i, row := range rows {
				p, o = append(p, m.paper(paperRows[i])), append(o, m.ours(row))
			}
			out = append(out, orderClaim(ds+" "+m.name, names, p, o, true, m.format, paperAt, oursAt))
		}
	}
	return out
}
