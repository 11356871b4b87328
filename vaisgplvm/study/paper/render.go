package paper

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/baselines"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
)

// pm formats a mean ± 2 s.e. pair over runs seeds with the verb format (e.g. "%.3f"): the mean
// alone for one seed, which has no spread.
func pm(format string, v [2]float64, runs int) string {
	if runs < 2 {
		return fmt.Sprintf(format, v[0])
	}
	return fmt.Sprintf(format+" ± "+format, v[0], v[1])
}

// pmOpt is pm for an optional pair: "-" when absent.
func pmOpt(format string, v *[2]float64, runs int) string {
	if v == nil {
		return "-"
	}
	return pm(format, *v, runs)
}

// seeds says "1 seed" or "n seeds".
func seeds(n int) string {
	if n == 1 {
		return "1 seed"
	}
	return fmt.Sprintf("%d seeds", n)
}

// paperCell formats a printed value as the paper prints it, "mean (2 s.e.)", or "-".
func paperCell(v *Value) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%g (%g)", v.Mean, v.TwoSE)
}

// riseCaption explains the convergence column of Tables 1-3.
const riseCaption = "rise (moving): how much the bound still climbed over the last fifth of the iterations up to the row " +
	"(its mean over that fifth of the training steps minus its mean over the fifth before, nats per point, mean ± 2 s.e. over the seeds), " +
	"and how many seeds' curves are still moving (a rise beyond two of its own standard errors); " +
	"\"j falling back\" counts those of them whose bound got worse (a rise below minus two standard errors)."

// riseCell formats a row's convergence column: "rise (k/n)", "rise (k/n, j falling back)" when
// some moving curves' bounds got worse, or "-" without curves.
func riseCell(row Row) string {
	if row.FinalRise == nil || row.StillMoving == nil {
		return "-"
	}
	cell := fmt.Sprintf("%s (%d/%d", pm("%.3f", *row.FinalRise, row.Runs), *row.StillMoving, row.Runs)
	if row.FallingBack != nil && *row.FallingBack > 0 {
		cell += fmt.Sprintf(", %d falling back", *row.FallingBack)
	}
	return cell + ")"
}

// provenanceKeys are the settings that say how a result was made, not what it is: the caption
// leaves them out and madeWith prints them on a line of their own.
var provenanceKeys = []string{"command", "commit", "machine", "wall_seconds", "training_seconds", "trainings_stored"}

// madeWith returns the line saying how a result with settings s was made ("" when s says nothing).
func madeWith(s map[string]any) string {
	if s["command"] == nil {
		return ""
	}
	line := fmt.Sprintf("Made with `%v` at commit %v on %v", s["command"], s["commit"], s["machine"])
	if w, ok := s["wall_seconds"]; ok {
		line += fmt.Sprintf("; %v s of wall time in this run, %v s of training and evaluation in all (concurrent trainings counted each)", w, s["training_seconds"])
	}
	if st, ok := s["trainings_stored"]; ok {
		line += fmt.Sprintf("; trainings: %v", st)
	}
	return line + "."
}

// settingsText lists settings as "key=value" pairs in key order, without the provenance keys.
func settingsText(s map[string]any) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		if !slices.Contains(provenanceKeys, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, s[k])
	}
	return strings.Join(parts, ", ")
}

// paperScale is the note on scales shared by the tables' captions.
const paperScale = "Paper columns: the paper's printed mean (2 s.e.) over 10 runs for the same dataset, method and " +
	"iteration count (- where it prints none); the paper does not state its data or metric scales, so compare orderings."

// mixtureCaption explains the mixture columns of Tables 1-3.
const mixtureCaption = "mixture MSE and NELL: the same scores under the posterior predictive, the self-normalised " +
	"mixture over the reconstruction's particles (IWVI's K samples, the annealed bounds' chain ends; MF: its q0 mean), " +
	"instead of the prediction at their weighted-mean latent (MSE, NELL; the paper's reconstruction); - for trainings " +
	"stored before the mixture was computed."

const exactCaption = "exact MSE and NELL: the mixture's scores with the exact GP conditional on the fully observed " +
	"images at their latents (the trained kernel and noise; every image enters the prediction, as in k-NN) in place of " +
	"the sparse GP's M inducing variables; - for trainings stored before it was computed."

const refitCaption = "refit MSE and NELL: the same with the kernel variance, a factor on the lengthscales and the " +
	"noise variance refitted by the exact marginal likelihood of up to 1000 fully observed images at their latents, and the " +
	"hidden pixels' noise variance (NELL's) chosen on 10% of those images damaged as the data's are, their latents fitted " +
	"from the pixels left (infer.ValidatedExact)."

// Tables returns the result as tables: the main table with the paper's values beside ours, the
// seed-paired differences (with two or more seeds) and the paper's claims checked.
func (r *Result) Tables() []report.Table {
	main := report.Table{}
	switch r.Table {
	case 3:
		main.Title = fmt.Sprintf("Table 3 (%s). ESS = 1/sum_k w_k^2 and entropy -sum_k w_k log w_k of the K normalised "+
			"weights per damaged image (IWVI: K samples of q0; VAIS: K independent annealed chains), averaged over the "+
			"damaged images (ln 25 = 3.22 for 25 equal weights); -ELBO (with its Monte Carlo s.e.), MSE and NELL as in Table 2; mean ± 2 s.e. over "+
			"the seeds. The paper prints one ESS and entropy per method (its trained models, no standard errors), shown beside our last "+
			"snapshot.", settingsText(r.Settings))
		main.Title += " " + riseCaption
		main.Header = []string{"dataset", "method", "iters", "ESS", "paper ESS", "weight entropy", "paper entropy", "-ELBO", "MC s.e.", "MSE", "NELL", "mixture MSE", "mixture NELL", "exact MSE", "exact NELL", "refit MSE", "refit NELL", "rise (moving)"}
		last := map[string]int{}
		for _, row := range r.Rows {
			last[row.Dataset] = max(last[row.Dataset], row.Iterations)
		}
		for _, row := range r.Rows {
			p, pe := "-", "-"
			if v, ok := PaperTable3[row.Method]; ok && row.Dataset == "frey" && row.Iterations == last[row.Dataset] {
				p, pe = fmt.Sprint(v.ESS), fmt.Sprint(v.Entropy)
			}
			cells := []string{row.Dataset, methodCell(row.Method, row.Runs, row.DivergedSeeds), fmt.Sprint(row.Iterations),
				pmOpt("%.2f", row.ESS, row.Runs), p, pmOpt("%.3f", row.Entropy, row.Runs), pe,
				pm("%.3f", row.NegELBO, row.Runs), fmt.Sprintf("%.3f", row.NegELBOSE), pm("%.4f", row.MSE, row.Runs), pm("%.3f", row.NELL, row.Runs)}
			main.Rows = append(main.Rows, append(append(cells, row.ImputedSummary.cells(row.Runs)...), riseCell(row)))
		}
	default:
		if r.Table == 2 {
			main.Title = fmt.Sprintf("Table 2 (%s). -ELBO in nats per image (all images, observed pixels); MSE over the "+
				"hidden pixels in squared pixel units of the chosen scale; NELL in nats per damaged image, over its hidden "+
				"pixels; 1-NN error of the latents (MNIST: 1 vs 7); mean ± 2 s.e. over the seeds; MC s.e.: the Monte Carlo "+
				"standard error of the -ELBO column from its evaluation's noise draws; KL(q(u))/N: the part of -ELBO that "+
				"q(u) costs, per image. %s", settingsText(r.Settings), paperScale)
		} else {
			main.Title = fmt.Sprintf("Table 1 (%s). -ELBO and NELL in nats per data point, MSE per entry in data units "+
				"squared; mean ± 2 s.e. over the seeds; MC s.e.: the Monte Carlo standard error of the -ELBO column from its "+
				"evaluation's noise draws; KL(q(u))/N: the part of -ELBO that q(u) costs, per point. %s", settingsText(r.Settings), paperScale)
		}
		main.Title += " " + riseCaption
		main.Header = []string{"dataset", "method", "iters", "-ELBO", "MC s.e.", "KL(q(u))/N", "paper -ELBO", "MSE", "paper MSE", "NELL", "paper NELL", "mixture MSE", "mixture NELL", "exact MSE", "exact NELL", "refit MSE", "refit NELL", "1-NN error", "s/iter", "rise (moving)"}
		for _, row := range r.Rows {
			var pe, pmse, pn *Value
			if p := row.Paper; p != nil {
				pe, pmse, pn = &p.NegELBO, &p.MSE, &p.NELL
			}
			cells := []string{row.Dataset, methodCell(row.Method, row.Runs, row.DivergedSeeds), fmt.Sprint(row.Iterations),
				pm("%.3f", row.NegELBO, row.Runs), fmt.Sprintf("%.3f", row.NegELBOSE), pm("%.3f", row.KLU, row.Runs), paperCell(pe), pm("%.4f", row.MSE, row.Runs), paperCell(pmse),
				pm("%.3f", row.NELL, row.Runs), paperCell(pn)}
			main.Rows = append(main.Rows, append(append(cells, row.ImputedSummary.cells(row.Runs)...),
				pmOpt("%.3f", row.OneNNError, row.Runs), fmt.Sprintf("%.3f", row.SecPerIter), riseCell(row)))
		}
		if !hasPaperRows(r.Rows) { // your own data: no paper columns, and no caption about them
			main = withoutColumns(main, "paper -ELBO", "paper MSE", "paper NELL")
			main.Title = strings.Replace(main.Title, paperScale, "", 1)
		}
	}
	if !slices.ContainsFunc(r.Rows, func(row Row) bool { return row.PredMSE != nil }) { // stored before the mixture existed
		main = withoutColumns(main, "mixture MSE", "mixture NELL")
	} else {
		main.Title += " " + mixtureCaption
	}
	if !slices.ContainsFunc(r.Rows, func(row Row) bool { return row.ExactMSE != nil }) { // table 1, or stored before it existed
		main = withoutColumns(main, "exact MSE", "exact NELL")
	} else {
		main.Title += " " + exactCaption
	}
	if !slices.ContainsFunc(r.Rows, func(row Row) bool { return row.RefitMSE != nil }) {
		main = withoutColumns(main, "refit MSE", "refit NELL")
	} else {
		main.Title += " " + refitCaption
	}
	out := []report.Table{main}
	if d := divergedTable(r.Diverged); d != nil {
		out = append(out, *d)
	}
	what := "1-NN error of the data itself and of PCA scores with 2 components and with the GPLVM's Q; PCA's reconstruction MSE from those components over the observed entries."
	if r.Table == 2 {
		what = fmt.Sprintf("MSE of the hidden pixels imputed by their column's mean over the observed pixels, or by the mean of the %d images "+
			"nearest over the pixels both observe (leave-one-out), or of the k nearest with k chosen per seed from %v on %.0f%% of the "+
			"fully observed images damaged as the data's damaged ones are; and PPCA with the GPLVM's Q fitted by EM with the "+
			"missing entries left out, imputing the posterior mean and scoring NELL as the GPLVMs do (expected log-likelihood of "+
			"the hidden pixels under q(z), nats per damaged image); mean ± 2 s.e. over the seeds' hidden pixels. Compare with the "+
			"MSE and NELL columns.", protocol.KNN, baselines.KNNKs, 100*baselines.ValidationShare)
	}
	if b := baselineTable(r.Baselines, what); b != nil {
		out = append(out, *b)
	}
	if r.Table != 3 {
		if p := pairedDifferences(r.Rows); p != nil {
			out = append(out, *p)
		}
	} else {
		out = append(out, essDefinitionsTable(r.Rows))
	}
	return withClaims(out, r.Claims, r.Settings)
}

// protocolNote says which protocol a table's claims reflect: its iterations and seeds against the
// paper's 3000 and 10.
func protocolNote(s map[string]any) string {
	it, runs := s["iters"], s["runs"]
	if it == nil || runs == nil {
		return ""
	}
	if it == 3000 && runs == 10 {
		return "These claims reflect the paper's protocol (3000 iterations, 10 seeds)."
	}
	if s["paper"] == true && it == 3000 {
		return fmt.Sprintf("These claims reflect the paper's protocol on %v of its 10 seeds.", runs)
	}
	n := fmt.Sprintf("%v seeds", runs)
	if r, ok := runs.(int); ok {
		n = seeds(r)
	}
	return fmt.Sprintf("These claims reflect this run's protocol (%v iterations, %s), not the paper's (3000, 10): "+
		"records/ holds the runs at the paper's.", it, n)
}

// claimsTable renders checked claims, nil when there are none.
func claimsTable(claims []Claim) *report.Table {
	if len(claims) == 0 {
		return nil
	}
	t := &report.Table{Title: "The paper's orderings against ours (lower is better for -ELBO, MSE, NELL, NLL and time; higher for ESS and entropy).",
		Header: []string{"claim", "paper", "ours", "agree"}}
	for _, c := range claims {
		agree := "no"
		switch {
		case c.Agree:
			agree = "yes"
		case c.SameBest:
			agree = "same best, rest differ"
		}
		t.Rows = append(t.Rows, []string{c.Subject, c.Paper, c.Ours, agree})
	}
	return t
}

// withClaims appends the table of claims, when there are any, to tables, its title saying which
// protocol they reflect (protocolNote of the run's settings; nil: none).
func withClaims(tables []report.Table, claims []Claim, settings map[string]any) []report.Table {
	if c := claimsTable(claims); c != nil {
		if note := protocolNote(settings); note != "" {
			c.Title += " " + note
		}
		tables = append(tables, *c)
	}
	return tables
}

// Markdown renders the result's tables (Tables) as Markdown.
func (r *Result) Markdown() string { return withMadeWith(report.Markdown(r.Tables()), r.Settings) }

// withMadeWith appends madeWith's line to a table's Markdown.
func withMadeWith(md string, s map[string]any) string {
	if line := madeWith(s); line != "" {
		return md + "\n" + line + "\n"
	}
	return md
}

// essDefinitionsTable renders Table 3's ESS under every definition of eval.ESSBreakdown.
func essDefinitionsTable(rows []Row) report.Table {
	t := report.Table{Title: "Table 3's ESS under each definition the paper may have used (it does not say): the method's own K " +
		"weights per damaged image (our ESS column); K importance samples of the trained q0, the same for every method; per-pixel " +
		"weights p(x_nd | h) p(h) / q0(h) of K samples of q0, averaged over the observed pixels; one annealed chain's K incremental " +
		"weights. Mean over the damaged images, mean ± 2 s.e. over the seeds; the paper's 20.3 (VAIS) and 4.1 (IWVI) beside.",
		Header: []string{"dataset", "method", "iters", "own weights", "q0 samples", "per pixel", "chain increments", "paper ESS"}}
	for _, row := range rows {
		d := row.ESSDefinitions
		if d == nil {
			continue
		}
		p := "-"
		if v, ok := PaperTable3[row.Method]; ok && row.Dataset == "frey" {
			p = fmt.Sprint(v.ESS)
		}
		t.Rows = append(t.Rows, []string{row.Dataset, row.Method, fmt.Sprint(row.Iterations), pmOpt("%.2f", d.Particles, row.Runs),
			pm("%.2f", d.Q0Samples, row.Runs), pm("%.2f", d.PerPixel, row.Runs), pmOpt("%.2f", d.Increments, row.Runs), p})
	}
	return t
}

// hasPaperRows reports whether any row's dataset is one the paper prints values for (at any
// iteration count): false for your own data.
func hasPaperRows(rows []Row) bool {
	for _, r := range rows {
		for k := range paperTable12 {
			if k.dataset == r.Dataset {
				return true
			}
		}
	}
	return false
}

// withoutColumns returns t without the columns whose headers are named.
func withoutColumns(t report.Table, names ...string) report.Table {
	var keep []int
	out := report.Table{Title: t.Title}
	for i, h := range t.Header {
		if !slices.Contains(names, h) {
			keep = append(keep, i)
			out.Header = append(out.Header, h)
		}
	}
	for _, row := range t.Rows {
		var r []string
		for _, i := range keep {
			r = append(r, row[i])
		}
		out.Rows = append(out.Rows, r)
	}
	return out
}
