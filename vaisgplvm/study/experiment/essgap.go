package experiment

import (
	"fmt"
	"strconv"
	"strings"

	"gonum.org/v1/plot"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/plots"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// ESSGapOutputs are the files WriteESSGap writes.
var ESSGapOutputs = []string{"ess_gap.csv", "ess_gap.png", "ess_hist.png"}

// WriteESSGap writes, for a summary with an ESS pairing (EvidenceOptions.ESSK), ess_gap.csv (per
// point: its row, log Z_n and its s.e., and per kind of weights the ESS and the gap) and, with
// figures, ess_gap.png (each point's gap against its ESS) and ess_hist.png (the distribution of the ESS over the points, as ECDFs).
// It writes nothing without a pairing; dir is not committed.
func WriteESSGap(dir *rundir.Dir, sum *EvidenceSummary, figures bool) error {
	if dir == nil || sum == nil {
		return fmt.Errorf("WriteESSGap: nil directory or summary")
	}
	if len(sum.ESSGap) == 0 {
		return nil
	}
	var csv strings.Builder
	csv.WriteString("point,log_z,log_z_se")
	for _, g := range sum.ESSGap {
		fmt.Fprintf(&csv, ",ess_%s,gap_%s", g.Weights, g.Weights)
	}
	csv.WriteString("\n")
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for i, p := range sum.Result.Points {
		csv.WriteString(strconv.Itoa(p) + "," + f(sum.LogZ[i]) + "," + f(sum.LogZSE[i]))
		for _, g := range sum.ESSGap {
			csv.WriteString("," + f(g.ESS[i]) + "," + f(g.Gap[i]))
		}
		csv.WriteString("\n")
	}
	if err := dir.WriteFile("ess_gap.csv", []byte(csv.String())); err != nil {
		return err
	}
	if !figures {
		return nil
	}
	var pairs []plots.Series
	var hists []plots.Sample
	for _, g := range sum.ESSGap {
		name := fmt.Sprintf("%s, tau %.2f", essWeightsName(g.Weights, sum.Method), g.Kendall)
		pairs = append(pairs, plots.Series{Name: name, X: g.ESS, Y: g.Gap})
		hists = append(hists, plots.Sample{Name: essWeightsName(g.Weights, sum.Method), Values: g.ESS})
	}
	scatter, err := plots.Curves(plots.CurveOptions{Title: fmt.Sprintf("Gap to log Z_n against the ESS of %d weights, %d points (tau: Kendall's)", sum.ESSGap[0].K, len(sum.Result.Points)),
		XLabel: "ESS", YLabel: "log Z_n - bound with K weights (nats)", Scatter: true}, pairs...)
	if err != nil {
		return err
	}
	hist, err := plots.ECDFs("ESS per point", "ESS", hists...)
	if err != nil {
		return err
	}
	for i, p := range []*plot.Plot{scatter, hist} {
		buf, err := plots.PNG(p, 0, 0)
		if err != nil {
			return err
		}
		if err := dir.WriteFile(ESSGapOutputs[i+1], buf); err != nil {
			return err
		}
	}
	return nil
}

// essWeightsName says whose weights an evidence.ESSGap kind are.
func essWeightsName(kind, method string) string {
	if kind == "own" {
		return method + "'s own"
	}
	return "q0 samples"
}
