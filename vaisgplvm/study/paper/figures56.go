package paper

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/plots"
)

// Figures draws Table 5 per dataset, ours beside the paper's: the held-out MSE of VAIS relative to
// the standard GPLVM's (VAIS / standard; below 1 favours VAIS) and the held-out NELL difference
// (VAIS - standard, in each one's own units: nats per held-out point for ours; below 0 favours
// VAIS). Ratios and differences are compared because the paper's scales are not stated. Errors: no
// dataset with both methods.
func (r *Result5) Figures() (mse, nell *plot.Plot, err error) {
	var groups []string
	var oursMSE, paperMSE, oursNELL, paperNELL []float64
	for i := 0; i+1 < len(r.Rows); i++ {
		s, v := r.Rows[i], r.Rows[i+1]
		if s.Dataset != v.Dataset || s.Method != "standard" || v.Method != "vais" || s.Paper == nil || v.Paper == nil {
			continue
		}
		groups = append(groups, s.Dataset)
		oursMSE, paperMSE = append(oursMSE, v.MSE[0]/s.MSE[0]), append(paperMSE, v.Paper.MSE.Mean/s.Paper.MSE.Mean)
		oursNELL, paperNELL = append(oursNELL, v.NELL[0]-s.NELL[0]), append(paperNELL, v.Paper.NLL.Mean-s.Paper.NLL.Mean)
	}
	if len(groups) == 0 {
		return nil, nil, fmt.Errorf("table 5 figures: no dataset has both the standard GPLVM and VAIS")
	}
	runs := fmt.Sprintf("ours (%s)", seeds(r.Rows[0].Runs))
	mse, err = plots.GroupedBarsScaled(plots.Ratio, "Held-out MSE, VAIS / standard GPLVM (below 1 favours VAIS)", "MSE ratio (log scale)", groups,
		plots.BarSeries{Name: runs, Values: oursMSE}, plots.BarSeries{Name: "paper (10 runs)", Values: paperMSE})
	if err != nil {
		return nil, nil, err
	}
	nell, err = plots.GroupedBarsScaled(plots.SymLog, "Held-out NELL, VAIS - standard GPLVM, nats per point (oil flow, wine) or per image (frey, mnist); below 0 favours VAIS",
		"NELL difference (symmetric log scale)", groups,
		plots.BarSeries{Name: runs, Values: oursNELL}, plots.BarSeries{Name: "paper (10 runs)", Values: paperNELL})
	return mse, nell, err
}

// Figure draws Table 6: seconds per Frey epoch against K for each method, ours on this machine
// beside the paper's A100, and any extra series (e.g. a GPU run of ours: X the K values, Y seconds
// per epoch), on a log axis. Errors: no row with K > 0.
func (r *Result6) Figure(extra ...plots.Series) (*plot.Plot, error) {
	var series []plots.Series
	for _, m := range []string{"iwvi", "vais"} {
		var ks, secs []float64
		for _, row := range r.Rows {
			if row.Method == m && row.K > 0 {
				ks, secs = append(ks, float64(row.K)), append(secs, row.EpochSecs)
			}
		}
		if ks != nil {
			series = append(series, plots.Series{Name: m + ", this machine", X: ks, Y: secs})
		}
	}
	if series == nil {
		return nil, fmt.Errorf("table 6 figure: no IWVI or VAIS row")
	}
	for _, m := range []string{"iwvi", "vais"} {
		var ks []int
		for k := range PaperTable6[m] {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		s := plots.Series{Name: m + ", paper A100"}
		for _, k := range ks {
			s.X, s.Y = append(s.X, float64(k)), append(s.Y, PaperTable6[m][k])
		}
		series = append(series, s)
	}
	series = append(series, extra...)
	return plots.Curves(plots.CurveOptions{Title: "Seconds per Frey epoch against K", XLabel: "K (samples / annealing steps)",
		YLabel: "seconds per epoch", Markers: true, LogY: true}, series...)
}
