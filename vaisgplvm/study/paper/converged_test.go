package paper

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadConvergedRecord reads the record in the repository and checks one run's figures against
// its metrics.json as stored.
func TestReadConvergedRecord(t *testing.T) {
	runs, err := ReadConverged(filepath.Join("..", "..", "..", "records", "converged"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range runs {
		if r.Dataset == "oilflow" && r.Run == "iwvi-plain" && r.Seed == 1 {
			found = true
			if r.NegELBO != -11.10190837938734 || !r.Converged || r.Iterations != 2000 || r.MCNegELBO != -11.105968052540799 {
				t.Fatalf("oilflow-iwvi-plain-seed1 read as -ELBO %v (Monte Carlo %v), converged %v after %d iterations",
					r.NegELBO, r.MCNegELBO, r.Converged, r.Iterations)
			}
		}
	}
	if !found {
		t.Fatal("oilflow-iwvi-plain-seed1 not among the runs read")
	}
}

// TestConvergedTable groups two seeds of one run and one of another and checks the cells.
func TestConvergedTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "metrics.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("oilflow-mf-seed1", `{"convergence":{"neg_elbo_per_point":-11,"converged":false,"stopped_by":"max seconds","final_change":0.000116,"seconds":10},"metrics":{"neg_elbo_per_point":-11,"mse":1e-5}}`)
	write("oilflow-mf-seed2", `{"convergence":{"neg_elbo_per_point":-12,"converged":true,"seconds":30},"metrics":{"neg_elbo_per_point":-12,"mse":3e-5}}`)
	write("oilflow-vais-fixedeta-seed1", `{"convergence":{"neg_elbo_per_point":-10,"converged":true,"seconds":5},"metrics":{"neg_elbo_per_point":-10,"mse":1e-5}}`)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs, err := ReadConverged(dir)
	if err != nil {
		t.Fatal(err)
	}
	tab := ConvergedTable("t", runs)
	if len(tab.Rows) != 2 {
		t.Fatalf("rows %v, want 2", tab.Rows)
	}
	// Two seeds: mean -11.5, sd sqrt(0.5), t(0.975, 1) = 12.7062 -> half-width 6.353.
	got := strings.Join(tab.Rows[0], "|")
	if want := "oilflow|mf|1,2|-11.500 ± 6.353|-11.500 ± 6.353|-|-|1 of 2; not seed 1: max seconds, last change 0.00012|20|2e-05"; got != want {
		t.Fatalf("row %q, want %q", got, want)
	}
	if got := strings.Join(tab.Rows[1][:8], "|"); got != "oilflow|vais-fixedeta|1|-10.000|-10.000|1.000 (0/1 tighter)|1.000 (0/1 tighter)|1 of 1" {
		t.Fatalf("row %q", got)
	}
	write("wine-mf-seed1", `{"metrics":{}}`)
	if _, err := ReadConverged(dir); err == nil || !strings.Contains(err.Error(), "no convergence record") {
		t.Fatalf("a run without a convergence record: err %v", err)
	}
}

// TestEqualCostTable: the first window is the mean of a run's first curve rows, its seconds the
// share of the run's seconds; a cell counts the common seeds on which the row's first window is
// below the column's converged value; MF (tagged or not) and runs without a curve are left out.
func TestEqualCostTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, metrics string, curve []float64) { writeRun(t, dir, name, metrics, curve) }
	conv := func(end, secs float64, iters int) string {
		return fmt.Sprintf(`{"convergence":{"neg_elbo_per_point":%g,"converged":true,"seconds":%g,"iterations":%d},"metrics":{"neg_elbo_per_point":%g}}`, end, secs, iters, end)
	}
	write("oilflow-mf-seed1", conv(-11, 100, 3), []float64{-1, -5, -11})
	write("oilflow-mf-40min-seed1", conv(-11.3, 200, 4), []float64{-1, -5, -11, -11.3})    // a fit from the start, not a continuation
	write("oilflow-iwvi-seed1", conv(-11.2, 40, 4), []float64{-11.1, -11.1, -11.2, -11.2}) // first window -11.15, 40 s
	write("oilflow-vais-seed1", conv(-10.9, 80, 4), []float64{-10.8, -10.8, -10.9, -10.9})
	write("oilflow-iwvi-seed2", conv(-11.0, 20, 2), []float64{-10.0, -11.0}) // first -10.5: not below vais's -10.95
	write("oilflow-vais-seed2", conv(-10.95, 20, 2), []float64{-10.9, -11.0})
	write("oilflow-uha-seed1", conv(-10.9, 10, 2), nil)
	write("oilflow-mf-plain-seed1", conv(-10, 100, 2), []float64{-5, -10})
	write("oilflow-iwvi-plain-seed1", conv(-10.2, 40, 2), []float64{-12, -12}) // from mf-plain: compared with nothing here
	runs, err := ReadConverged(dir)
	if err != nil {
		t.Fatal(err)
	}
	tab := EqualCostTable("t", runs)
	if got := strings.Join(tab.Header, "|"); got != "run|first window: -ELBO per point|its median seconds|below iwvi-plain's end|below iwvi's end|below vais's end" {
		t.Fatalf("header %q", got)
	}
	// iwvi: first windows -11.15 (seed 1, 40 s) and -10.5 (seed 2, 20 s); below vais's ends -10.9
	// and -10.95 on seed 1 only. iwvi-plain's first window (-12) is below everything, but it
	// continues another MF fit.
	if got := strings.Join(tab.Rows[1], "|"); !strings.HasPrefix(got, "iwvi|-10.825 ± ") || !strings.HasSuffix(got, "|30|-|-|1/2") {
		t.Errorf("iwvi row %q", got)
	}
	if got := strings.Join(tab.Rows[2], "|"); !strings.HasSuffix(got, "|-|0/2|-") {
		t.Errorf("vais row %q", got)
	}
	if got := strings.Join(tab.Rows[0], "|"); !strings.HasSuffix(got, "|-|-|-") {
		t.Errorf("iwvi-plain row %q", got)
	}
}

// TestConvergedSummary fails when records/converged/table.md or table.json is not what the
// runs there generate (VAISGPLVM_UPDATE_DOCS=1 rewrites them).
func TestConvergedSummary(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "records", "converged")
	md, js, err := ConvergedSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"table.md": []byte(md), "table.json": js} {
		path := filepath.Join(dir, name)
		if os.Getenv("VAISGPLVM_UPDATE_DOCS") == "1" {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("records/converged/%s is stale: rewrite it with VAISGPLVM_UPDATE_DOCS=1 go test ./vaisgplvm/study/paper -run TestConvergedSummary", name)
		}
	}
	if !strings.Contains(md, "| oilflow | iwvi |") {
		t.Fatalf("no oil-flow IWVI row in\n%s", md)
	}
}

// TestReadmeVerdictsFromRecord: every paired figure "X ± Y (k/n tighter)" or "X ± Y (k/n lower)" in the README's verdict
// table is a cell of records/converged/table.md, so the README cannot state a converged
// verdict the record does not hold (rewrite the README when the record changes).
func TestReadmeVerdictsFromRecord(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join("..", "..", "..", "records", "converged", "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, verdicts, ok := strings.Cut(string(readme), "## What we find")
	if !ok {
		t.Fatal("README.md has no \"What we find\" section")
	}
	figures := regexp.MustCompile(`-?[0-9.]+ ± [0-9.]+ \([0-9]+/[0-9]+ (tighter|lower)\)`).FindAllString(verdicts, -1)
	if len(figures) == 0 {
		t.Fatal("README.md's verdict table cites no converged figure")
	}
	for _, f := range figures {
		if !strings.Contains(string(table), f) {
			t.Errorf("README.md cites %q, which records/converged/table.md does not hold", f)
		}
	}
}

// TestEqualSecondsAndImputationTables: mini-batch runs are compared at MF's converged seconds on
// the same seed (the mean of the last EqualCostWindow curve rows reached by then at each run's mean
// seconds per iteration) and left out of EqualCostTable; the hidden pixels' MSE is set against the
// validated baselines of the same seed, PPCA's taken from the run that scored it.
func TestEqualSecondsAndImputationTables(t *testing.T) {
	dir := t.TempDir()
	write := func(name, metrics string, curve []float64) { writeRun(t, dir, name, metrics, curve) }
	run := func(end, secs float64, iters int, hidden float64, ppca string) string {
		return fmt.Sprintf(`{"convergence":{"neg_elbo_per_point":%g,"converged":true,"seconds":%g,"iterations":%d},"metrics":{"neg_elbo_per_point":%g},`+
			`"config":{"batch":100},"hidden_pixels":{"mse_missing_predictive":%g},"hidden_pixels_baselines":{"validated_knn_mse":0.002%s}}`,
			end, secs, iters, end, hidden, ppca)
	}
	// Seed 1: MF converges at 2 s (4 iterations); IWVI runs 1 s per iteration, so at 2 s it has made
	// 2 iterations: mean of its first 2 rows (-5). VAIS at 0.5 s per iteration: its 4 rows (-3).
	write("frey-mf-seed1", run(-8, 2, 4, 0.003, `,"validated_ppca_mse":0.0025,"validated_ppca":{"q":80}`), []float64{-7, -8, -8, -8})
	write("frey-iwvi-seed1", run(-9, 10, 10, 0.001, ""), []float64{-4, -6, -7, -8, -9, -9, -9, -9, -9, -9})
	write("frey-vais-seed1", run(-7, 4, 8, 0.0024, ""), []float64{-1, -3, -4, -4, -7, -7, -7, -7})
	runs, err := ReadConverged(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tab := EqualCostTable("t", runs); len(tab.Rows) != 0 {
		t.Errorf("mini-batch runs in the equal-cost table of continuations: %v", tab.Rows)
	}
	tab := EqualSecondsTable("t", runs)
	want := []string{"iwvi|-5.000|2|-|0/1|1/1", "mf|-7.750|2|1/1|-|1/1", "vais|-3.000|2|0/1|0/1|-"}
	for i, w := range want {
		if got := strings.Join(tab.Rows[i], "|"); got != w {
			t.Errorf("equal-seconds row %d: %q, want %q", i, got, w)
		}
	}
	imp := ImputationTable("t", runs)
	want = []string{"iwvi|1|0.00100|-0.00100 (1/1 lower)|-0.00150 (1/1 lower)", "mf|1|0.00300|0.00100 (0/1 lower)|0.00050 (0/1 lower)",
		"vais|1|0.00240|0.00040 (0/1 lower)|-0.00010 (1/1 lower)", "validated k-NN|1|0.00200|-|-", "validated PPCA (q 80)|1|0.00250|-|-"}
	if len(imp.Rows) != len(want) {
		t.Fatalf("imputation rows %v", imp.Rows)
	}
	for i, w := range want {
		if got := strings.Join(imp.Rows[i], "|"); got != w {
			t.Errorf("imputation row %d: %q, want %q", i, got, w)
		}
	}
}

// writeRun writes a converged run's folder dir/name: its metrics.json and, when curve is not nil,
// its curve.csv.
func writeRun(t *testing.T, dir, name, metrics string, curve []float64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "metrics.json"), []byte(metrics), 0o644); err != nil {
		t.Fatal(err)
	}
	if curve == nil {
		return
	}
	b := "iteration,neg_elbo_per_point\n"
	for i, v := range curve {
		b += fmt.Sprintf("%d,%g\n", i+1, v)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "curve.csv"), []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPairedWithTaggedMF: a run with a tag is paired with MF of the same tag and seed when there is
// one ("vais-h8" with "mf-h8"), otherwise with MF of the tag's leading part ("vais-h8-x" with
// "mf-h8"), otherwise with plain MF; MF's own variants with plain MF.
func TestPairedWithTaggedMF(t *testing.T) {
	dir := t.TempDir()
	conv := func(v float64) string {
		return fmt.Sprintf(`{"convergence":{"neg_elbo_per_point":%g,"converged":true,"seconds":1},"metrics":{"neg_elbo_per_point":%g}}`, v, v)
	}
	for name, v := range map[string]float64{"oilflow-mf-seed1": -11, "oilflow-mf-h8-seed1": -11.25, "oilflow-vais-h8-seed1": -11.125, "oilflow-vais-x-seed1": -10.5, "oilflow-vais-h8-x-seed1": -11.5} {
		writeRun(t, dir, name, conv(v), nil)
	}
	runs, err := ReadConverged(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"mf-h8": "-0.250 (1/1 tighter)", "vais-h8": "0.125 (0/1 tighter)", "vais-x": "0.500 (0/1 tighter)", "vais-h8-x": "-0.250 (1/1 tighter)", "mf": "-"}
	for _, row := range ConvergedTable("t", runs).Rows {
		if row[5] != want[row[1]] || row[6] != want[row[1]] {
			t.Errorf("%s: paired %q and %q, want %q", row[1], row[5], row[6], want[row[1]])
		}
	}
}

// TestBaselinesFile: a run's BaselinesFile replaces its hidden pixels' baselines (the record's Frey
// MF seeds 1 and 2 get validated PPCA from theirs) and is refused when it is of another fit.
func TestBaselinesFile(t *testing.T) {
	runs, err := ReadConverged(filepath.Join("..", "..", "..", "records", "converged"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Dataset == "frey" && r.Run == "mf" && r.Seed <= 2 && (r.PPCAMSE == nil || r.PPCAQ != 80 || r.KNNMSE == nil) {
			t.Errorf("frey-mf-seed%d: validated PPCA %v (q %d), k-NN %v: want both from its baselines.json", r.Seed, r.PPCAMSE, r.PPCAQ, r.KNNMSE)
		}
	}
	dir := t.TempDir()
	run := filepath.Join(dir, "frey-mf-seed1")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(run, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("metrics.json", `{"convergence": {"neg_elbo_per_point": -800.5, "converged": true, "iterations": 10, "seconds": 3},
		"hidden_pixels": {"mse_missing_predictive": 0.003}, "hidden_pixels_baselines": {"validated_knn_mse": 0.002}}`)
	write(BaselinesFile, `{"neg_elbo_per_point": -800.5, "hidden_pixels_baselines": {"validated_knn_mse": 0.0021, "validated_ppca_mse": 0.0019, "validated_ppca": {"q": 12}}}`)
	got, err := ReadConverged(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := got[0]; *r.KNNMSE != 0.0021 || *r.PPCAMSE != 0.0019 || r.PPCAQ != 12 || r.Seconds != 3 {
		t.Errorf("with a baselines file: %+v", r)
	}
	write(BaselinesFile, `{"neg_elbo_per_point": -800.4, "hidden_pixels_baselines": {"validated_knn_mse": 0.0021}}`)
	if _, err := ReadConverged(dir); err == nil || !strings.Contains(err.Error(), "not this run's") {
		t.Errorf("a baselines file of another fit: error %v", err)
	}
}
