package paper

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// ConvergedRun is one `train --converge` run on record: a folder DATASET-RUN-seedS (as
// scripts/converged.sh writes under records/converged) holding its metrics.json.
type ConvergedRun struct {
	// Dataset and Run name the folder: Run is the method with any tag ("vais-fixedeta").
	Dataset string `json:"dataset"`
	Run     string `json:"run"`
	Seed    int    `json:"seed"`
	// NegELBO is the fit's own -ELBO per point at its end (nats per point; the full-batch bound the
	// optimiser saw), MCNegELBO the model's Monte Carlo bound after training.
	NegELBO   float64 `json:"neg_elbo_per_point"`
	MCNegELBO float64 `json:"mc_neg_elbo_per_point"`
	// Converged reports whether the run stopped by its convergence rule, not by its cap;
	// StoppedBy says what stopped it ("converged", "max seconds", ...) and FinalChange is the
	// rule's last measured change (nats per point over the rule's window).
	Converged   bool    `json:"converged"`
	StoppedBy   string  `json:"stopped_by,omitempty"`
	FinalChange float64 `json:"final_change,omitempty"`
	// Iterations and Seconds are the fit's optimiser steps and wall seconds.
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
	// MSE is the reconstruction MSE per entry in data units squared.
	MSE float64 `json:"mse"`
	// FirstWindow is the mean -ELBO per point of the fit's first FirstWindowIters iterations
	// (curve.csv; at most EqualCostWindow), and FirstWindowSeconds their share of Seconds (at the
	// run's mean seconds per iteration): the bound a run reaches at that cost. Nil without a curve.
	FirstWindow        *float64 `json:"first_window_neg_elbo_per_point,omitempty"`
	FirstWindowIters   int      `json:"first_window_iterations,omitempty"`
	FirstWindowSeconds *float64 `json:"first_window_seconds,omitempty"`
	// Batch is the run's mini-batch size (0: full batch). A full-batch run other than MF continued
	// from MF's converged fit; a mini-batch run (Frey, MNIST) fitted from its own start.
	Batch int `json:"batch,omitempty"`
	// HiddenMSE is the MSE of the hidden pixels under the model's predictive mixture (Table 2's
	// task; nil without hidden pixels), KNNMSE and PPCAMSE those of k-NN and PPCA imputation with
	// k and q validated on the same seed's mask (PPCAMSE and PPCAQ only from a run made with
	// --validate-ppca).
	HiddenMSE *float64 `json:"hidden_pixel_mse,omitempty"`
	KNNMSE    *float64 `json:"validated_knn_mse,omitempty"`
	PPCAMSE   *float64 `json:"validated_ppca_mse,omitempty"`
	PPCAQ     int      `json:"validated_ppca_q,omitempty"`

	curve []float64 // the fit's -ELBO per point per iteration (curve.csv)
}

// EqualCostWindow is the number of a fit's first iterations whose mean -ELBO EqualCostTable sets
// against the others' converged values: one window of converge.AdamRule's default.
const EqualCostWindow = 200

var convergedDir = regexp.MustCompile(`^([a-z0-9]+)-(.+)-seed([0-9]+)$`)

// ReadConverged returns the converged runs stored under dir, one per folder DATASET-RUN-seedS with a
// metrics.json, in folder order. Errors: dir cannot be read, a metrics.json cannot be read or parsed
// or has no convergence record, or dir holds no run.
func ReadConverged(dir string) ([]ConvergedRun, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("paper: converged runs: %w", err)
	}
	var runs []ConvergedRun
	for _, e := range entries {
		m := convergedDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		r, err := readConvergedRun(filepath.Join(dir, e.Name(), "metrics.json"))
		if err != nil {
			return nil, err
		}
		r.Dataset, r.Run = m[1], m[2]
		r.Seed, _ = strconv.Atoi(m[3])
		if err := r.readFirstWindow(filepath.Join(dir, e.Name(), "curve.csv")); err != nil {
			return nil, err
		}
		if err := r.readBaselines(filepath.Join(dir, e.Name(), BaselinesFile)); err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("paper: converged runs: %s holds no DATASET-RUN-seedS folder", dir)
	}
	return runs, nil
}

// hiddenBaselines are the validated baselines of a metrics.json's (or a BaselinesFile's)
// "hidden_pixels_baselines".
type hiddenBaselines struct {
	KNN     *float64 `json:"validated_knn_mse"`
	PPCA    *float64 `json:"validated_ppca_mse"`
	PPCAFit *struct {
		Q int `json:"q"`
	} `json:"validated_ppca"`
}

// apply sets r's validated k-NN and PPCA figures from b (PPCA's only when b has its fit).
func (b *hiddenBaselines) apply(r *ConvergedRun) {
	r.KNNMSE = b.KNN
	if b.PPCAFit != nil {
		r.PPCAMSE, r.PPCAQ = b.PPCA, b.PPCAFit.Q
	}
}

func readConvergedRun(path string) (ConvergedRun, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ConvergedRun{}, fmt.Errorf("paper: converged runs: %w", err)
	}
	var rec struct {
		Convergence *converge.Result `json:"convergence"` // as train writes it
		Metrics     struct {
			NegELBO float64 `json:"neg_elbo_per_point"`
			MSE     float64 `json:"mse"`
		} `json:"metrics"`
		Config struct {
			Batch int `json:"batch"`
		} `json:"config"`
		Hidden *struct {
			MSE float64 `json:"mse_missing_predictive"`
		} `json:"hidden_pixels"`
		Baselines *hiddenBaselines `json:"hidden_pixels_baselines"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return ConvergedRun{}, fmt.Errorf("paper: converged runs: %s: %w", path, err)
	}
	c := rec.Convergence
	if c == nil {
		return ConvergedRun{}, fmt.Errorf("paper: converged runs: %s has no convergence record (not a --converge run)", path)
	}
	r := ConvergedRun{NegELBO: c.NegELBO, MCNegELBO: rec.Metrics.NegELBO, Converged: c.Converged,
		StoppedBy: c.StoppedBy, Iterations: c.Iterations, Seconds: c.Seconds, MSE: rec.Metrics.MSE, Batch: rec.Config.Batch}
	if c.Change != nil {
		r.FinalChange = *c.Change
	}
	if rec.Hidden != nil {
		r.HiddenMSE = &rec.Hidden.MSE
	}
	if rec.Baselines != nil {
		rec.Baselines.apply(&r)
	}
	return r, nil
}

// BaselinesFile, beside a converged run's metrics.json, holds the hidden pixels' baselines of a
// later run of the same fit (the same command with --validate-ppca, so that the baselines are
// those of the same seed's mask): its "hidden_pixels_baselines" replace metrics.json's, its
// "provenance" says what made them, and its "neg_elbo_per_point" must equal the run's own (the
// fits are deterministic by seed), else ReadConverged refuses the folder. The run's seconds stay
// metrics.json's.
const BaselinesFile = "baselines.json"

// readBaselines applies the BaselinesFile at path, when there is one, to r.
func (r *ConvergedRun) readBaselines(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("paper: converged runs: %w", err)
	}
	var rec struct {
		NegELBO   *float64         `json:"neg_elbo_per_point"`
		Baselines *hiddenBaselines `json:"hidden_pixels_baselines"`
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.NegELBO == nil || rec.Baselines == nil {
		return fmt.Errorf("paper: converged runs: %s: want neg_elbo_per_point and hidden_pixels_baselines (%v)", path, err)
	}
	if *rec.NegELBO != r.NegELBO {
		return fmt.Errorf("paper: converged runs: %s is of a fit that ended at -ELBO %v per point, not this run's %v", path, *rec.NegELBO, r.NegELBO)
	}
	r.KNNMSE, r.PPCAMSE, r.PPCAQ = nil, nil, 0 // replaced, not merged
	rec.Baselines.apply(r)
	return nil
}

// readFirstWindow reads the curve at path and sets FirstWindow and its seconds from it (nothing
// when there is no file).
func (r *ConvergedRun) readFirstWindow(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("paper: converged runs: %w", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		return fmt.Errorf("paper: converged runs: %s: %v (want a header and one row per iteration)", path, err)
	}
	for _, row := range rows[1:] {
		x, err := strconv.ParseFloat(row[len(row)-1], 64)
		if err != nil {
			return fmt.Errorf("paper: converged runs: %s: %w", path, err)
		}
		r.curve = append(r.curve, x)
	}
	v := r.curve[:min(len(r.curve), EqualCostWindow)]
	mean, secs := stat.Mean(v, nil), r.Seconds*float64(len(v))/float64(max(r.Iterations, len(rows)-1))
	r.FirstWindow, r.FirstWindowIters, r.FirstWindowSeconds = &mean, len(v), &secs
	return nil
}

// EqualCostTable sets each run's first EqualCostWindow iterations against every other run's
// converged value, per dataset and seed: for runs that all start from the same fit (the full-batch
// bounds other than MF continue from MF's; MF's runs, tagged or not, and mini-batch runs are left
// out: EqualSecondsTable
// compares those), a run whose first window is already
// below another's converged -ELBO is the tighter at every equal time after that start. A cell
// "k/n" counts the common seeds on which the row's first window is below the column's end; runs
// that continue other MF fits (pairedMF: "vais-plain" from "mf-plain", "vais" from "mf") are not
// compared ("-").
func EqualCostTable(title string, runs []ConvergedRun) report.Table {
	var names []string
	byRun := map[string]map[int]ConvergedRun{}
	mf, _ := mfFits(runs)
	start := map[string]string{} // run name -> the tag of the MF fit it continues (pairedMF)
	for _, r := range runs {
		if isMF(r.Run) || r.FirstWindow == nil || r.Batch > 0 {
			continue
		}
		if byRun[r.Run] == nil {
			names = append(names, r.Run)
			byRun[r.Run] = map[int]ConvergedRun{}
			k, _ := pairedMF(r, mf)
			start[r.Run] = k.tag
		}
		byRun[r.Run][r.Seed] = r
	}
	t := report.Table{Title: title, Header: []string{"run", "first window: -ELBO per point", "its median seconds"}}
	for _, n := range names {
		t.Header = append(t.Header, "below "+n+"'s end")
	}
	for _, a := range names {
		var first, secs []float64
		for _, seed := range slices.Sorted(maps.Keys(byRun[a])) {
			first, secs = append(first, *byRun[a][seed].FirstWindow), append(secs, *byRun[a][seed].FirstWindowSeconds)
		}
		row := []string{a, tCell(first), fmt.Sprintf("%.0f", median(secs))}
		for _, b := range names {
			if start[a] != start[b] { // continued from other MF fits: their ends are not comparable
				row = append(row, "-")
				continue
			}
			row = append(row, belowCell(a, b, byRun[a], byRun[b], func(ra, rb ConvergedRun) bool { return *ra.FirstWindow < rb.NegELBO }))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// EqualSecondsTable compares runs that fitted from their own starts (mini-batch runs, Batch > 0)
// at equal seconds: on each seed, every run's mean -ELBO per point over the EqualCostWindow
// iterations up to the time at which MF's fit on that seed converged (its Seconds; iterations
// reached at the run's mean seconds per iteration), and each against the others at that time. A
// cell "k/n" counts the common seeds on which the row's value is below the column's. Runs without
// a curve, variants of a method (a tagged run name: another rule or setting), and seeds without an
// MF run are left out. Each run's seconds are its own, measured under whatever else ran then.
func EqualSecondsTable(title string, runs []ConvergedRun) report.Table {
	budget := map[int]float64{} // seed -> MF's seconds
	for _, r := range runs {
		if r.Run == "mf" && r.Batch > 0 {
			budget[r.Seed] = r.Seconds
		}
	}
	var names []string
	at := map[string]map[int]float64{}
	for _, r := range runs {
		t, ok := budget[r.Seed]
		if r.Batch == 0 || !ok || len(r.curve) == 0 || r.Iterations == 0 || tagOf(r.Run) != "" {
			continue
		}
		if at[r.Run] == nil {
			names = append(names, r.Run)
			at[r.Run] = map[int]float64{}
		}
		it := min(len(r.curve), int(math.Round(t/(r.Seconds/float64(r.Iterations)))))
		at[r.Run][r.Seed] = stat.Mean(r.curve[max(0, it-EqualCostWindow):max(it, 1)], nil)
	}
	t := report.Table{Title: title, Header: []string{"run", "-ELBO per point at MF's converged seconds", "MF's seconds (median)"}}
	for _, n := range names {
		t.Header = append(t.Header, "below "+n+"'s")
	}
	secs := slices.Collect(maps.Values(budget))
	for _, a := range names {
		var v []float64
		for _, seed := range slices.Sorted(maps.Keys(at[a])) {
			v = append(v, at[a][seed])
		}
		row := []string{a, tCell(v), fmt.Sprintf("%.0f", median(secs))}
		for _, b := range names {
			row = append(row, belowCell(a, b, at[a], at[b], func(va, vb float64) bool { return va < vb }))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// belowCell counts the seeds that runs a and b (by seed) have in common and those on which a's is
// below b's: "k/n", or "-" for a run against itself or no common seed.
func belowCell[V any](a, b string, as, bs map[int]V, below func(a, b V) bool) string {
	k, n := 0, 0
	for seed, va := range as {
		if vb, ok := bs[seed]; ok && a != b {
			n++
			if below(va, vb) {
				k++
			}
		}
	}
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", k, n)
}

// ImputationTable scores the hidden pixels (Table 2's task) of runs that have them: per run name
// the mean MSE over the seeds (± 95% t-interval) and its difference from validated k-NN's and
// validated PPCA's on the same seed (their masks are the seed's) with the seeds on which the run is
// lower, then the two baselines themselves (PPCA's chosen q per seed). Runs without hidden pixels
// are left out.
func ImputationTable(title string, runs []ConvergedRun) report.Table {
	t := report.Table{Title: title, Header: []string{"run", "seeds", "hidden-pixel MSE", "minus validated k-NN's, same seed",
		"minus validated PPCA's, same seed"}}
	knn, ppca, qs := map[int]float64{}, map[int]float64{}, map[int]int{}
	var names []string
	by := map[string][]ConvergedRun{}
	for _, r := range runs {
		if r.HiddenMSE == nil {
			continue
		}
		if r.KNNMSE != nil {
			knn[r.Seed] = *r.KNNMSE
		}
		if r.PPCAMSE != nil {
			ppca[r.Seed], qs[r.Seed] = *r.PPCAMSE, r.PPCAQ
		}
		if by[r.Run] == nil {
			names = append(names, r.Run)
		}
		by[r.Run] = append(by[r.Run], r)
	}
	diff := func(g []ConvergedRun, base map[int]float64) string {
		var d []float64
		lower := 0
		for _, r := range g {
			if b, ok := base[r.Seed]; ok {
				d = append(d, *r.HiddenMSE-b)
				if *r.HiddenMSE < b {
					lower++
				}
			}
		}
		if len(d) == 0 {
			return "-"
		}
		return fmt.Sprintf("%s (%d/%d lower)", mseCell(d), lower, len(d))
	}
	for _, n := range names {
		var v []float64
		var seeds []string
		for _, r := range by[n] {
			v, seeds = append(v, *r.HiddenMSE), append(seeds, strconv.Itoa(r.Seed))
		}
		t.Rows = append(t.Rows, []string{n, strings.Join(seeds, ","), mseCell(v), diff(by[n], knn), diff(by[n], ppca)})
	}
	for _, b := range []struct {
		name string
		mse  map[int]float64
	}{{"validated k-NN", knn}, {"validated PPCA", ppca}} {
		if len(b.mse) == 0 {
			continue
		}
		var v []float64
		var seeds, chosen []string
		for _, seed := range slices.Sorted(maps.Keys(b.mse)) {
			v, seeds = append(v, b.mse[seed]), append(seeds, strconv.Itoa(seed))
			if q, ok := qs[seed]; ok && b.name == "validated PPCA" {
				chosen = append(chosen, strconv.Itoa(q))
			}
		}
		name := b.name
		if len(chosen) > 0 {
			name += " (q " + strings.Join(chosen, ",") + ")"
		}
		t.Rows = append(t.Rows, []string{name, strings.Join(seeds, ","), mseCell(v), "-", "-"})
	}
	return t
}

// mseCell is tCell for values of the size of a pixel MSE on the [0, 1] scale.
func mseCell(v []float64) string {
	m, h := metrics.TInterval(v)
	if math.IsNaN(h) {
		return fmt.Sprintf("%.5f", m)
	}
	return fmt.Sprintf("%.5f ± %.5f", m, h)
}

// ConvergedTable summarises runs per dataset and run name: the seeds, the fit's -ELBO per point as
// mean ± the 95% t-interval's half-width over the seeds (the value alone for one seed), the Monte
// Carlo bound likewise, the fit's -ELBO minus MF's on the same dataset and seed (pairedMF: MF with
// the run's tag where there is one, else run "mf") with the
// seeds on which it is lower (tighter), the same for the Monte Carlo bounds (on all N points after
// the fit: the comparison for mini-batch fits, whose own -ELBO is a mean over noisy batches), how
// many seeds converged by their rule (naming the others, what stopped them and their last change),
// the median seconds
// and the mean MSE. Seeds differ more from each other than the bounds do on one seed, so the paired
// column is the comparison.
func ConvergedTable(title string, runs []ConvergedRun) report.Table {
	t := report.Table{Title: title, Header: []string{"dataset", "run", "seeds", "-ELBO per point (fit)",
		"-ELBO per point (Monte Carlo)", "minus MF's, same seed", "minus MF's (Monte Carlo), same seed", "converged", "median seconds", "MSE"}}
	type key struct{ ds, run string }
	mf, mfMC := mfFits(runs)
	var keys []key
	groups := map[key][]ConvergedRun{}
	for _, r := range runs {
		k := key{r.Dataset, r.Run}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range keys {
		g := groups[k]
		var fit, mc, secs, mse, paired, pairedMC []float64
		seeds, conv, not := "", 0, ""
		for i, r := range g {
			fit, mc, secs, mse = append(fit, r.NegELBO), append(mc, r.MCNegELBO), append(secs, r.Seconds), append(mse, r.MSE)
			if i > 0 {
				seeds += ","
			}
			seeds += strconv.Itoa(r.Seed)
			if r.Converged {
				conv++
			} else {
				not += notConverged(r)
			}
			if mk, ok := pairedMF(r, mf); ok {
				paired = append(paired, r.NegELBO-mf[mk])
				pairedMC = append(pairedMC, r.MCNegELBO-mfMC[mk])
			}
		}
		t.Rows = append(t.Rows, []string{k.ds, k.run, seeds, tCell(fit), tCell(mc), pairedCell(paired), pairedCell(pairedMC),
			fmt.Sprintf("%d of %d%s", conv, len(g), not), fmt.Sprintf("%.0f", median(secs)),
			fmt.Sprintf("%.2g", stat.Mean(mse, nil))})
	}
	return t
}

// notConverged names an unconverged run's seed, what stopped it and the rule's last change, for
// ConvergedTable's "converged" cell ("; not seed 3: max seconds, last change 0.00012"); only the
// seed for runs recorded without those.
func notConverged(r ConvergedRun) string {
	if r.StoppedBy == "" {
		return fmt.Sprintf("; not seed %d", r.Seed)
	}
	return fmt.Sprintf("; not seed %d: %s, last change %.2g", r.Seed, r.StoppedBy, r.FinalChange)
}

// mfKey names one MF fit: its dataset, seed and tag ("plain" of "mf-plain"; "" for "mf").
type mfKey struct {
	dataset string
	seed    int
	tag     string
}

// mfFits returns the MF fits among runs (plain or tagged), their -ELBO and Monte Carlo -ELBO by
// dataset, seed and tag: the keys pairedMF returns.
func mfFits(runs []ConvergedRun) (fit, mc map[mfKey]float64) {
	fit, mc = map[mfKey]float64{}, map[mfKey]float64{}
	for _, r := range runs {
		if isMF(r.Run) {
			k := mfKey{r.Dataset, r.Seed, tagOf(r.Run)}
			fit[k], mc[k] = r.NegELBO, r.MCNegELBO
		}
	}
	return fit, mc
}

// isMF reports whether the run name is MF's, plain or tagged ("mf", "mf-40min"): a fit from the
// model's start, not a continuation from MF's fit.
func isMF(run string) bool { return run == "mf" || strings.HasPrefix(run, "mf-") }

// tagOf returns what follows a run name's method ("h8" of "vais-h8"; "" for "vais").
func tagOf(run string) string {
	_, tag, _ := strings.Cut(run, "-")
	return tag
}

// pairedMF returns the MF fit that r is compared with: MF with r's tag on the same dataset and
// seed when there is one (the same rule or setting), else MF with the tag's leading parts
// ("vais-plain-adapteta" with "mf-plain": a variant continued from that MF fit), else plain MF;
// MF variants are compared with plain MF, plain MF with nothing (ok false).
func pairedMF(r ConvergedRun, mf map[mfKey]float64) (k mfKey, ok bool) {
	if r.Run == "mf" {
		return mfKey{}, false
	}
	if !strings.HasPrefix(r.Run, "mf-") {
		for tag := tagOf(r.Run); tag != ""; tag = tag[:max(strings.LastIndex(tag, "-"), 0)] {
			k := mfKey{r.Dataset, r.Seed, tag}
			if _, ok := mf[k]; ok {
				return k, true
			}
		}
	}
	k = mfKey{r.Dataset, r.Seed, ""}
	_, ok = mf[k]
	return k, ok
}

// pairedCell is a paired difference's tCell with the count of negative (tighter) ones.
func pairedCell(d []float64) string {
	if len(d) == 0 {
		return "-"
	}
	lower := 0
	for _, v := range d {
		if v < 0 {
			lower++
		}
	}
	return fmt.Sprintf("%s (%d/%d tighter)", tCell(d), lower, len(d))
}

func tCell(v []float64) string {
	m, h := metrics.TInterval(v)
	if math.IsNaN(h) {
		return fmt.Sprintf("%.3f", m)
	}
	return fmt.Sprintf("%.3f ± %.3f", m, h)
}

// median returns the middle of v, or the mean of the two middle values for an even count.
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ConvergedSummary renders the converged runs under dir as records/converged keeps them:
// Markdown with one ConvergedTable per dataset, and JSON holding every run (by seed, with
// converged) and each table's rows. Errors: those of ReadConverged.
func ConvergedSummary(dir string) (markdown string, js []byte, err error) {
	return ConvergedSummaryWith(dir, "# The converged runs, summarised\n\nGenerated from the folders here by `VAISGPLVM_UPDATE_DOCS=1 go test ./vaisgplvm/study/paper -run TestConvergedSummary`\n"+
		"(scripts/converged.sh runs it after each run); the test fails when this file or table.json is stale. How the runs were made: README.md.\n\n")
}

// ConvergedSummaryWith is ConvergedSummary with intro, Markdown, before the tables.
func ConvergedSummaryWith(dir, intro string) (markdown string, js []byte, err error) {
	runs, err := ReadConverged(dir)
	if err != nil {
		return "", nil, err
	}
	var datasets []string
	for _, r := range runs {
		if !slices.Contains(datasets, r.Dataset) {
			datasets = append(datasets, r.Dataset)
		}
	}
	var tables, all []report.Table
	for _, ds := range datasets {
		var sub []ConvergedRun
		fullBatch, miniBatch, hidden := false, false, false
		for _, r := range runs {
			if r.Dataset == ds {
				sub = append(sub, r)
				fullBatch = fullBatch || (r.Batch == 0 && r.Run != "mf")
				miniBatch = miniBatch || r.Batch > 0
				hidden = hidden || r.HiddenMSE != nil
			}
		}
		main := ConvergedTable(ds+": each bound at its own optimum (-ELBO in nats per point, mean ± 95% t-interval over the seeds)", sub)
		tables, all = append(tables, main), append(all, main)
		if fullBatch {
			all = append(all, EqualCostTable(fmt.Sprintf("%s at equal cost: each continuation's first %d iterations from MF's fit against the others' converged -ELBO (seeds on which it is already lower)", ds, EqualCostWindow), sub))
		}
		if miniBatch {
			all = append(all, EqualSecondsTable(fmt.Sprintf("%s at equal seconds: each bound, fitted from its own start, when MF's fit on the same seed converged (mean -ELBO per point over the %d iterations up to then; seeds on which it is lower)", ds, EqualCostWindow), sub))
		}
		if hidden {
			all = append(all, ImputationTable(ds+": the hidden pixels at convergence (MSE on the [0, 1] scale, mean ± 95% t-interval; the baselines' k and q validated per seed)", sub))
		}
	}
	md := intro + report.Markdown(all)
	rows := map[string][][]string{}
	for i, ds := range datasets {
		rows[ds] = tables[i].Rows
	}
	js, err = json.MarshalIndent(struct {
		Header []string              `json:"header"`
		Rows   map[string][][]string `json:"rows"`
		Runs   []ConvergedRun        `json:"runs"`
	}{tables[0].Header, rows, runs}, "", "  ")
	if err != nil {
		return "", nil, fmt.Errorf("paper: converged summary: %w", err)
	}
	return md, append(js, '\n'), nil
}
