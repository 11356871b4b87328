package cmf

import (
	"fmt"
	"strings"
)

// Markdown renders the experiment as a table: per family, the training and held-out bounds, the
// held-out importance-weighted bounds, the decoder's AIS log-likelihood on the first held-out
// points beside the bound on the same points, and the seconds spent. Values are nats per point
// (log densities: higher is better) ± their Monte Carlo standard errors.
func (r *ExperimentResult) Markdown() string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "GP-LVM-CMF on %s: %d training and %d held-out points, %s decoder (%d hidden), latent dim %d",
		r.Dataset, r.Train, r.Test, c.Likelihood, c.Hidden, c.LatentDim)
	if containsFamily(r.Families, "cmf") {
		fmt.Fprintf(&b, ", GP input dim %d, M = %d, term B %s", c.InputDim, c.M, c.TermB)
	}
	fmt.Fprintf(&b, "; %d steps of %d points, lr %g, seed %d. Nats per point (higher is better) ± MC s.e.\n\n",
		r.Options.Iters, c.Batch, c.LR, c.Seed)
	head := []string{"family", "train bound", "held-out bound"}
	if len(r.Families) > 0 {
		for _, e := range r.Families[0].IW {
			head = append(head, fmt.Sprintf("IW K=%d", e.K))
		}
	}
	head = append(head, fmt.Sprintf("log p(y) AIS (%d held-out)", r.Options.AISPoints), "bound, same points", "s train / fit / eval")
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat("---|", len(head)) + "\n")
	for _, f := range r.Families {
		row := []string{f.Family, pm(f.TrainBound), pm(f.TestBound)}
		for _, e := range f.IW {
			row = append(row, pm(e.Estimate))
		}
		ll, same := "-", "-"
		if r.Options.AISPoints > 0 {
			ll, same = pm(f.LogLik), fmt.Sprintf("%.2f", f.TestBoundAIS)
		}
		row = append(row, ll, same, fmt.Sprintf("%.0f / %.0f / %.0f", f.TrainSeconds, f.FitSeconds, f.EvalSeconds))
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	return b.String()
}

func pm(e Estimate) string { return fmt.Sprintf("%.2f ± %.2f", e.PerPoint, e.SE) }

func containsFamily(fs []FamilyResult, name string) bool {
	for _, f := range fs {
		if f.Family == name {
			return true
		}
	}
	return false
}
