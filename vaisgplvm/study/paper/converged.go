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

	"gonum.org/v1/gonum/stat"

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
	// Converged reports whether the run stopped by its convergence rule, not by its cap.
	Converged bool `json:"converged"`
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
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("paper: converged runs: %s holds no DATASET-RUN-seedS folder", dir)
	}
	return runs, nil
}

func readConvergedRun(path string) (ConvergedRun, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ConvergedRun{}, fmt.Errorf("paper: converged runs: %w", err)
	}
	var rec struct {
		Convergence *struct {
			NegELBO    float64 `json:"neg_elbo_per_point"`
			Converged  bool    `json:"converged"`
			Iterations int     `json:"iterations"`
			Seconds    float64 `json:"seconds"`
		} `json:"convergence"`
		Metrics struct {
			NegELBO float64 `json:"neg_elbo_per_point"`
			MSE     float64 `json:"mse"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return ConvergedRun{}, fmt.Errorf("paper: converged runs: %s: %w", path, err)
	}
	c := rec.Convergence
	if c == nil {
		return ConvergedRun{}, fmt.Errorf("paper: converged runs: %s has no convergence record (not a --converge run)", path)
	}
	return ConvergedRun{NegELBO: c.NegELBO, MCNegELBO: rec.Metrics.NegELBO, Converged: c.Converged,
		Iterations: c.Iterations, Seconds: c.Seconds, MSE: rec.Metrics.MSE}, nil
}

// readFirstWindow sets FirstWindow and its seconds from the curve at path (nothing when there is
// no file).
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
	var v []float64
	for _, row := range rows[1:min(len(rows), EqualCostWindow+1)] {
		x, err := strconv.ParseFloat(row[len(row)-1], 64)
		if err != nil {
			return fmt.Errorf("paper: converged runs: %s: %w", path, err)
		}
		v = append(v, x)
	}
	mean, secs := stat.Mean(v, nil), r.Seconds*float64(len(v))/float64(max(r.Iterations, len(rows)-1))
	r.FirstWindow, r.FirstWindowIters, r.FirstWindowSeconds = &mean, len(v), &secs
	return nil
}

// EqualCostTable sets each run's first EqualCostWindow iterations against every other run's
// converged value, per dataset and seed: for runs that all start from the same fit (the bounds
// other than MF continue from MF's; MF itself is left out), a run whose first window is already
// below another's converged -ELBO is the tighter at every equal time after that start. A cell
// "k/n" counts the common seeds on which the row's first window is below the column's end.
func EqualCostTable(title string, runs []ConvergedRun) report.Table {
	var names []string
	byRun := map[string]map[int]ConvergedRun{}
	for _, r := range runs {
		if r.Run == "mf" || r.FirstWindow == nil {
			continue
		}
		if byRun[r.Run] == nil {
			names = append(names, r.Run)
			byRun[r.Run] = map[int]ConvergedRun{}
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
			below, n := 0, 0
			for seed, ra := range byRun[a] {
				if rb, ok := byRun[b][seed]; ok && a != b {
					n++
					if *ra.FirstWindow < rb.NegELBO {
						below++
					}
				}
			}
			row = append(row, map[bool]string{true: "-", false: fmt.Sprintf("%d/%d", below, n)}[n == 0])
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// ConvergedTable summarises runs per dataset and run name: the seeds, the fit's -ELBO per point as
// mean ± the 95% t-interval's half-width over the seeds (the value alone for one seed), the Monte
// Carlo bound likewise, the fit's -ELBO minus MF's (run "mf") on the same dataset and seed with the
// seeds on which it is lower (tighter), how many seeds converged by their rule, the median seconds
// and the mean MSE. Seeds differ more from each other than the bounds do on one seed, so the paired
// column is the comparison.
func ConvergedTable(title string, runs []ConvergedRun) report.Table {
	t := report.Table{Title: title, Header: []string{"dataset", "run", "seeds", "-ELBO per point (fit)",
		"-ELBO per point (Monte Carlo)", "minus MF's, same seed", "converged", "median seconds", "MSE"}}
	type key struct{ ds, run string }
	mf := map[string]float64{} // dataset and seed -> MF's -ELBO
	for _, r := range runs {
		if r.Run == "mf" {
			mf[fmt.Sprint(r.Dataset, "/", r.Seed)] = r.NegELBO
		}
	}
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
		var fit, mc, secs, mse, paired []float64
		seeds, conv := "", 0
		for i, r := range g {
			fit, mc, secs, mse = append(fit, r.NegELBO), append(mc, r.MCNegELBO), append(secs, r.Seconds), append(mse, r.MSE)
			if i > 0 {
				seeds += ","
			}
			seeds += strconv.Itoa(r.Seed)
			if r.Converged {
				conv++
			}
			if m, ok := mf[fmt.Sprint(r.Dataset, "/", r.Seed)]; ok && r.Run != "mf" {
				paired = append(paired, r.NegELBO-m)
			}
		}
		t.Rows = append(t.Rows, []string{k.ds, k.run, seeds, tCell(fit), tCell(mc), pairedCell(paired),
			fmt.Sprintf("%d of %d", conv, len(g)), fmt.Sprintf("%.0f", median(secs)),
			fmt.Sprintf("%.2g", stat.Mean(mse, nil))})
	}
	return t
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
	var tables, equal []report.Table
	for _, ds := range datasets {
		var sub []ConvergedRun
		for _, r := range runs {
			if r.Dataset == ds {
				sub = append(sub, r)
			}
		}
		tables = append(tables, ConvergedTable(ds+": each bound at its own optimum (-ELBO in nats per point, mean ± 95% t-interval over the seeds)", sub))
		equal = append(equal, EqualCostTable(fmt.Sprintf("%s at equal cost: each continuation's first %d iterations from MF's fit against the others' converged -ELBO (seeds on which it is already lower)", ds, EqualCostWindow), sub))
	}
	var all []report.Table
	for i := range tables {
		all = append(all, tables[i], equal[i])
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
