package cmf

import (
	"fmt"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// Table renders the experiment: per family, the training and held-out bounds, the held-out
// importance-weighted bounds, the decoder's AIS log-likelihood on the first held-out points beside
// the bound on the same points, how much the training curve still rose over its last fifth of
// steps (CurveRise: near zero, the family had flattened), and the seconds spent. Values are nats per point (log densities:
// higher is better) ± their Monte Carlo standard errors; the title gives the settings.
func (r *ExperimentResult) Table() report.Table {
	c := r.Config
	t := report.Table{Title: fmt.Sprintf("GP-LVM-CMF on %s: %d training and %d held-out points, %s decoder (%d hidden), latent dim %d",
		r.Dataset, r.Train, r.Test, c.Likelihood, c.Hidden, c.LatentDim)}
	if r.family("cmf") != nil {
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
	lr := fmt.Sprintf("lr %g", c.LR)
	if r.Sweep != nil {
		lr = "lr per family (the sweep's choice: " + r.chosenLRs() + ")"
	}
	t.Title += fmt.Sprintf("; %d steps of %d points, %s, seed %d; held-out locals fitted %d steps. Nats per point (higher is better) ± MC s.e.; "+
		"AIS: %d temperatures x %d runs.", r.Options.Iters, c.Batch, lr, c.Seed, r.Options.FitIters, r.Options.AIS.Temps, r.Options.AIS.Runs)
	t.Header = []string{"family", "train bound", "held-out bound"}
	if len(r.Families) > 0 {
		for _, e := range r.Families[0].IW {
			t.Header = append(t.Header, fmt.Sprintf("IW K=%d", e.K))
		}
	}
	t.Header = append(t.Header, fmt.Sprintf("log p(y) AIS (%d held-out)", r.Options.AISPoints), "bound, same points", "rise, last fifth of steps", "s train / fit / eval")
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

// SweepTable renders the learning-rate sweep (ExperimentOptions.LRs): per family and rate, the
// validation bound, the training curve's rise over its last fifth, the seconds, and which rate was
// chosen. It has no rows without a sweep.
func (r *ExperimentResult) SweepTable() report.Table {
	o := r.Options
	t := report.Table{Title: fmt.Sprintf("Learning-rate sweep: each family trained %d steps at each rate on the training points less %.0f%% held out for validation, "+
		"validation locals fitted %d steps; the rate with the highest validation bound is chosen (*). Nats per point ± MC s.e.", o.SweepIters, 100*o.Validation, o.FitIters),
		Header: []string{"family", "lr", "validation bound", "rise, last fifth of steps", "s", "chosen"}}
	for _, s := range r.Sweep {
		bound, rise := pm(s.Validation), "-"
		if s.Diverged != "" {
			bound = "diverged"
		}
		if s.Rise != nil {
			rise = fmt.Sprintf("%+.2f ± %.2f", s.Rise.PerPoint, s.Rise.SE)
		}
		t.Rows = append(t.Rows, []string{s.Family, fmt.Sprintf("%.3g", s.LR), bound, rise, fmt.Sprintf("%.0f", s.Seconds), map[bool]string{true: "*"}[s.Chosen]})
	}
	return t
}

// chosenLRs names each family's chosen rate, "family lr, ...".
func (r *ExperimentResult) chosenLRs() string {
	var out []string
	for _, s := range r.Sweep {
		if s.Chosen {
			out = append(out, fmt.Sprintf("%s %.3g", s.Family, s.LR))
		}
	}
	return strings.Join(out, ", ")
}

// Markdown is Table as Markdown text, then TermsTable and SweepTable (with a sweep), followed by
// the warnings, one per line.
func (r *ExperimentResult) Markdown() string {
	md := r.Table().Text() + "\n" + r.TermsTable().Text()
	if r.Sweep != nil {
		md += "\n" + r.SweepTable().Text()
	}
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

// Tables returns the experiment's tables, Table, TermsTable and SweepTable (with a sweep)
// (nb.ShowResult shows them and Warnings).
func (r *ExperimentResult) Tables() []report.Table {
	if r.Sweep != nil {
		return []report.Table{r.Table(), r.TermsTable(), r.SweepTable()}
	}
	return []report.Table{r.Table(), r.TermsTable()}
}

func pm(e Estimate) string { return fmt.Sprintf("%.2f ± %.2f", e.PerPoint, e.SE) }
