package cmf

import (
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// Table renders the experiment: per family, the training and held-out bounds, the held-out
// importance-weighted bounds, the decoder's AIS log-likelihood on the first held-out points beside
// the bound on the same points, and the seconds spent. Values are nats per point (log densities:
// higher is better) ± their Monte Carlo standard errors; the title gives the settings.
func (r *ExperimentResult) Table() report.Table {
	c := r.Config
	t := report.Table{Title: fmt.Sprintf("GP-LVM-CMF on %s: %d training and %d held-out points, %s decoder (%d hidden), latent dim %d",
		r.Dataset, r.Train, r.Test, c.Likelihood, c.Hidden, c.LatentDim)}
	if containsFamily(r.Families, "cmf") {
		t.Title += fmt.Sprintf(", GP input dim %d, M = %d, term B %s", c.InputDim, c.M, c.TermB)
	}
	t.Title += fmt.Sprintf("; %d steps of %d points, lr %g, seed %d; held-out locals fitted %d steps. Nats per point (higher is better) ± MC s.e.; "+
		"AIS: %d temperatures x %d runs.", r.Options.Iters, c.Batch, c.LR, c.Seed, r.Options.FitIters, r.Options.AIS.Temps, r.Options.AIS.Runs)
	t.Header = []string{"family", "train bound", "held-out bound"}
	if len(r.Families) > 0 {
		for _, e := range r.Families[0].IW {
			t.Header = append(t.Header, fmt.Sprintf("IW K=%d", e.K))
		}
	}
	t.Header = append(t.Header, fmt.Sprintf("log p(y) AIS (%d held-out)", r.Options.AISPoints), "bound, same points", "s train / fit / eval")
	for _, f := range r.Families {
		row := []string{f.Family, pm(f.TrainBound), pm(f.TestBound)}
		for _, e := range f.IW {
			row = append(row, pm(e.Estimate))
		}
		ll, same := "-", "-"
		if r.Options.AISPoints > 0 {
			ll, same = pm(f.LogLik), fmt.Sprintf("%.2f ± %.2f", f.TestBoundAIS, f.TestBoundAISSE)
		}
		t.Rows = append(t.Rows, append(row, ll, same, fmt.Sprintf("%.0f / %.0f / %.0f", f.TrainSeconds, f.FitSeconds, f.EvalSeconds)))
	}
	return t
}

// Markdown is Table as Markdown text, followed by the warnings, one per line.
func (r *ExperimentResult) Markdown() string {
	md := r.Table().Text()
	for _, w := range r.Warnings() {
		md += "\nWarning: " + w + "\n"
	}
	return md
}

// Tables returns Table as the one table of the experiment (nb.ShowResult shows it and Warnings).
func (r *ExperimentResult) Tables() []report.Table { return []report.Table{r.Table()} }

func pm(e Estimate) string { return fmt.Sprintf("%.2f ± %.2f", e.PerPoint, e.SE) }

func containsFamily(fs []FamilyResult, name string) bool {
	for _, f := range fs {
		if f.Family == name {
			return true
		}
	}
	return false
}
