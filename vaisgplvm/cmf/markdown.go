package cmf

import (
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// Table renders the experiment: per family, the training and held-out bounds, the held-out
// importance-weighted bounds, the decoder's AIS log-likelihood on the first held-out points beside
// the bound on the same points, how much the training curve still rose over its last tenth of
// steps (CurveRise: near zero, the family had flattened), and the seconds spent. Values are nats per point (log densities:
// higher is better) ± their Monte Carlo standard errors; the title gives the settings.
func (r *ExperimentResult) Table() report.Table {
	c := r.Config
	t := report.Table{Title: fmt.Sprintf("GP-LVM-CMF on %s: %d training and %d held-out points, %s decoder (%d hidden), latent dim %d",
		r.Dataset, r.Train, r.Test, c.Likelihood, c.Hidden, c.LatentDim)}
	if containsFamily(r.Families, "cmf") {
		t.Title += fmt.Sprintf(", GP input dim %d, M = %d, %s bound, term B %s", c.InputDim, c.M, c.Bound, c.TermB)
		if c.PointVar {
			t.Title += ", per-point variances"
		}
		if r.Options.WarmStart {
			t.Title += ", warm-started from mean-field"
		}
		if r.Options.FreezeDecoder {
			t.Title += " with its decoder frozen at mean-field's"
		}
	}
	t.Title += fmt.Sprintf("; %d steps of %d points, lr %g, seed %d; held-out locals fitted %d steps. Nats per point (higher is better) ± MC s.e.; "+
		"AIS: %d temperatures x %d runs.", r.Options.Iters, c.Batch, c.LR, c.Seed, r.Options.FitIters, r.Options.AIS.Temps, r.Options.AIS.Runs)
	t.Header = []string{"family", "train bound", "held-out bound"}
	if len(r.Families) > 0 {
		for _, e := range r.Families[0].IW {
			t.Header = append(t.Header, fmt.Sprintf("IW K=%d", e.K))
		}
	}
	t.Header = append(t.Header, fmt.Sprintf("log p(y) AIS (%d held-out)", r.Options.AISPoints), "bound, same points", "rise, last tenth of steps", "s train / fit / eval")
	for _, f := range r.Families {
		row := []string{f.Family, pm(f.TrainBound), pm(f.TestBound)}
		for _, e := range f.IW {
			row = append(row, pm(e.Estimate))
		}
		ll, same := "-", "-"
		if r.Options.AISPoints > 0 {
			ll, same = pm(f.LogLik), fmt.Sprintf("%.2f ± %.2f", f.TestBoundAIS, f.TestBoundAISSE)
		}
		rise := "-"
		if f.Rise != nil {
			rise = fmt.Sprintf("%+.2f ± %.2f", f.Rise.PerPoint, f.Rise.SE)
		}
		t.Rows = append(t.Rows, append(row, ll, same, rise, fmt.Sprintf("%.0f / %.0f / %.0f", f.TrainSeconds, f.FitSeconds, f.EvalSeconds)))
	}
	return t
}

// Markdown is Table as Markdown text, followed by the warnings, one per line.
func (r *ExperimentResult) Markdown() string {
	md := r.Table().Text() + "\n" + r.TermsTable().Text()
	for _, w := range r.Warnings() {
		md += "\nWarning: " + w + "\n"
	}
	return md
}

// TermsTable renders each family's held-out bound split into its terms A - B - C, and for cmf its
// GP summary: the kernel variance (how much spread the GP adds to q(z)), s^2 and |kappa~|.
func (r *ExperimentResult) TermsTable() report.Table {
	t := report.Table{Title: "Held-out bound = A - B - C per point: A = E log p(y | z), B = E KL(q(z | .) || p(z)), C = E[log q(X) - log r(X | z)] " +
		"(cmf's auxiliary term; 0 for the baselines), ± MC s.e.; cmf's trained GP: kernel variance k_ii, s^2 of q(z | .) (the mean with per-point variances), " +
		"RMS of the whitened q(u) mean kappa~.",
		Header: []string{"family", "A", "B", "C", "kernel variance", "s^2", "kappa~ RMS"}}
	for _, k := range r.Options.MarginalKs {
		t.Header = append(t.Header, fmt.Sprintf("marginal L_K, K=%d", k))
	}
	if len(r.Options.MarginalKs) > 0 {
		t.Title += " Marginal L_K: cmf's held-out bound with log q(z) bounded by K samples of r(X | z) (L_0 is the bound; L_K rises to the ELBO of the marginal q(z) " +
			"as K grows: the rise is what r(X | z) costs)."
	}
	for _, f := range r.Families {
		row := []string{f.Family, "-", "-", "-", "-", "-", "-"}
		for i := range r.Options.MarginalKs {
			if i < len(f.Marginal) {
				row = append(row, pm(f.Marginal[i].Estimate))
			} else {
				row = append(row, "-")
			}
		}
		if e := f.TestTerms; e != nil {
			row[1], row[2], row[3] = pm(e.A), pm(e.B), pm(e.C)
		}
		if g := f.GP; g != nil {
			row[4], row[5], row[6] = fmt.Sprintf("%.3g", g.KernelVariance), fmt.Sprintf("%.3g", g.ZVariance), fmt.Sprintf("%.3g", g.KappaRMS)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// Tables returns the experiment's tables, Table then TermsTable (nb.ShowResult shows them and
// Warnings).
func (r *ExperimentResult) Tables() []report.Table { return []report.Table{r.Table(), r.TermsTable()} }

func pm(e Estimate) string { return fmt.Sprintf("%.2f ± %.2f", e.PerPoint, e.SE) }

func containsFamily(fs []FamilyResult, name string) bool {
	for _, f := range fs {
		if f.Family == name {
			return true
		}
	}
	return false
}
