package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
)

// TestBadUsageExitsTwo: every bad flag value is a one-line error with exit status 2, before any
// data is read or anything trained.
func TestBadUsageExitsTwo(t *testing.T) {
	out := t.TempDir()
	cases := [][]string{
		{},
		{"frobnicate"},
		{"train"}, // no --out
		{"train", "--out", out, "--method", "bogus"},
		{"train", "--out", out, "--k", "-1"},
		{"train", "--out", out, "--eta", "-1"},
		{"train", "--out", out, "--lr", "NaN"},
		{"train", "--out", out, "--m", "0"},
		{"train", "--out", out, "--kernel", "cosine"},
		{"train", "--out", out, "--schedule", "custom:0.5,0.2,1", "--k", "3"},
		{"train", "--out", out, "--schedule", "custom:0.5,1", "--k", "3"},
		{"train", "--out", out, "--dataset", "mnist-digits"},
		{"train", "--out", out, "--iters", "0"},
		{"train", "--out", out, "--batch", "-3"},
		{"train", "--out", out, "--backend", "tpu"},
		{"train", "--out", out, "stray"},
		{"train", "--out", out, "--q0-scale", "-1"},
		{"train", "--out", out, "--dtype", "float16"},
		{"train", "--out", out, "--accept-target", "1.2"},
		{"train", "--out", out, "--adapt-rate", "0"},
		{"train", "--out", out, "--clip-grad", "0.5"},
		{"train", "--out", out, "--clip-grad", "NaN"},
		{"train", "--out", out, "--point-eta", "--adapt-eta=false"},
		{"train", "--out", out, "--point-eta", "--learn-eta"},
		{"train", "--out", out, "--adam-beta2", "1"},
		{"train", "--out", out, "--adam-beta2", "0"},
		{"reproduce", "--table", "9"},
		{"reproduce", "--table", "5", "--datasets", "oilflow,nope"},
		{"reproduce", "--table", "5", "--subset", "-1"},
		{"reproduce", "--table", "5", "--subset", "10"},
		{"reproduce", "--table", "5", "--recon-iters", "0"},
		{"reproduce", "--table=6", "--ks", "5,0"},
		{"reproduce", "--table", "6", "--reps", "0"},
		{"reproduce", "--table", "6", "--methods", "xx"},
		{"reproduce", "--table", "3", "--methods", "mf,vais"},
		{"reproduce", "--table", "3", "--datasets", "oilflow"},
		{"reproduce", "--runs", "0"},
		{"reproduce", "--datasets", "oilflow,nope"},
		{"reproduce", "--methods", "mf,xx"},
		{"bench", "--methods", "mf,xx"},
		{"bench", "--iters", "0"},
		{"bench", "--dataset", "iris"},
		{"bench", "--dataset", "oilflow", "--observed"},
		{"train", "--out", out, "--labels", "kind"},                     // --labels without --data
		{"train", "--out", out, "--data", "x.csv", "--dataset", "wine"}, // both
		{"infer", "--out", out},
		{"infer", "--checkpoint", "x.gob", "--data", "x.csv", "--out", out, "--iters", "0"},
		{"infer", "--checkpoint", "x.gob", "--data", "x.csv", "--out", out, "--lr", "-1"},
	}
	for _, args := range cases {
		if len(args) > 0 && args[0] == "reproduce" {
			args = append(args, "--out", filepath.Join(out, "table")) // never out/ in the package directory
		}
		var stderr bytes.Buffer
		code := run(args, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", args, code, msg)
			continue
		}
		if len(args) == 0 {
			continue
		}
		if msg == "" || strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
			t.Errorf("%q: want a one-line error, got %q", args, msg)
		}
	}
}

// TestTrainWritesOutputsAndResumes runs 4 iterations on oilflow,
// checks metrics.json, curve.csv and the checkpoint, then resumes to 6 iterations.
// TestStepSizeFlags: eta adapts by default; --adapt-eta=false fixes it; --learn-eta learns it instead
// of adapting; the adaptive settings reach the config.
func TestStepSizeFlags(t *testing.T) {
	for _, c := range []struct {
		args           []string
		adapt, learned bool
	}{
		{nil, true, false},
		{[]string{"--adapt-eta=false"}, false, false},
		{[]string{"--learn-eta"}, false, true},
		{[]string{"--accept-target", "0.6", "--adapt-rate", "0.1"}, true, false},
		{[]string{"--paper-eta"}, false, false},
	} {
		mf, set, _ := parsedFlags(t, c.args...)
		cfg, _, err := protocol.Training("vais", "oilflow", 1, 0, 0, mf.configure(set), mf.explicit(set))
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if cfg.AdaptEta != c.adapt || cfg.LearnEta != c.learned {
			t.Errorf("%v: adapt %v learned %v, want %v %v", c.args, cfg.AdaptEta, cfg.LearnEta, c.adapt, c.learned)
		}
		if paper := len(c.args) == 1 && c.args[0] == "--paper-eta"; cfg.PaperEta != paper {
			t.Errorf("%v: PaperEta %v, want %v", c.args, cfg.PaperEta, paper)
		}
		if len(c.args) == 4 && (cfg.AcceptTarget != 0.6 || cfg.AdaptRate != 0.1) {
			t.Errorf("%v: target %g rate %g", c.args, cfg.AcceptTarget, cfg.AdaptRate)
		}
	}
}

func TestTrainWritesOutputsAndResumes(t *testing.T) {
	dir := t.TempDir()
	base := []string{"train", "--dataset", "oilflow", "--method", "vais", "--batch", "50", "--m", "10", "--quiet", "--out", dir}
	var stderr bytes.Buffer
	if code := run(append(base, "--iters", "4"), &stderr); code != 0 {
		t.Fatalf("train exited %d: %s", code, stderr.String())
	}
	met, buf := readMetrics(t, dir)
	if met.Iterations != 4 || met.Eval == nil || met.Eval.OneNNError == nil || !(met.Eval.MSE > 0) || !(met.SecondsPerIter > 0) {
		t.Errorf("metrics.json incomplete: %s", buf)
	}
	if c := met.Chain; c == nil || len(c.Betas) != 5 || len(c.Etas) != 5 || len(c.Accept) != 5 || c.Betas[4] != 1 {
		t.Errorf("metrics.json: VAIS chain report missing or not K = 5 long: %+v", c)
	}
	curve, _ := os.ReadFile(filepath.Join(dir, "curve.csv"))
	if lines := strings.Split(strings.TrimSpace(string(curve)), "\n"); len(lines) != 5 {
		t.Errorf("curve.csv has %d lines, want a header and 4 rows", len(lines))
	}
	ck := filepath.Join(dir, "checkpoint.gob")
	if code := run(append(base, "--iters", "6", "--resume", ck), &stderr); code != 0 {
		t.Fatalf("resume exited %d: %s", code, stderr.String())
	}
	curve, _ = os.ReadFile(filepath.Join(dir, "curve.csv"))
	if lines := strings.Split(strings.TrimSpace(string(curve)), "\n"); len(lines) != 7 {
		t.Errorf("after resuming to 6 iterations curve.csv has %d lines, want 7", len(lines))
	}

	// infer: three oilflow-like rows, two entries missing.
	newData := filepath.Join(dir, "new.csv")
	csvText := "f1,f2,f3,f4,f5,f6,f7,f8,f9,f10,f11,f12\n" +
		"0.3,0.2,0.5,0.3,0.1,0.4,0.3,0.2,0.5,0.3,0.1,0.4\n" +
		"0.3,,0.5,0.3,0.1,0.4,0.3,0.2,NaN,0.3,0.1,0.4\n" +
		"1.0,0.9,0.1,0.2,0.3,0.4,1.0,0.9,0.1,0.2,0.3,0.4\n"
	if err := os.WriteFile(newData, []byte(csvText), 0o644); err != nil {
		t.Fatal(err)
	}
	inferDir := filepath.Join(dir, "infer")
	if code := run([]string{"infer", "--checkpoint", ck, "--data", newData, "--out", inferDir, "--iters", "3"}, &stderr); code != 0 {
		t.Fatalf("infer exited %d: %s", code, stderr.String())
	}
	var sum experiment.InferSummary
	buf, _ = os.ReadFile(filepath.Join(inferDir, "infer.json"))
	if err := json.Unmarshal(buf, &sum); err != nil || sum.Points != 3 || sum.Missing != 2 {
		t.Errorf("infer.json: %s (%v)", buf, err)
	}
	// The baselines' imputations: observed entries kept, the two missing ones filled (row 2, b and i).
	if len(sum.Baselines) != 3 {
		t.Errorf("infer.json baseline_files %v, want the mean, 5-NN and PPCA imputations", sum.Baselines)
	}
	for _, name := range []string{"infer_mean_imputation.csv", "infer_knn_imputation.csv", "infer_ppca_imputation.csv"} {
		rows := readCSVRows(t, filepath.Join(inferDir, name))
		if len(rows) != 3 || rows[0][0] != 0.3 || rows[2][11] != 0.4 || math.IsNaN(rows[1][1]) || math.IsNaN(rows[1][8]) || rows[1][2] != 0.5 {
			t.Errorf("%s: %v", name, rows)
		}
	}
	rec, _ := os.ReadFile(filepath.Join(inferDir, "infer_reconstruction.csv"))
	if lines := strings.Split(strings.TrimSpace(string(rec)), "\n"); len(lines) != 4 || lines[0] != "f1,f2,f3,f4,f5,f6,f7,f8,f9,f10,f11,f12" || strings.Count(lines[1], ",") != 11 {
		t.Errorf("infer_reconstruction.csv: %q", rec)
	}
	bad := filepath.Join(dir, "bad.csv")
	_ = os.WriteFile(bad, []byte("a,b\n1,2\n"), 0o644)
	if code := run([]string{"infer", "--checkpoint", ck, "--data", bad, "--out", inferDir, "--overwrite"}, &stderr); code != 1 {
		t.Errorf("infer on a file with unknown columns exited %d, want 1", code)
	}
}

// ownData writes a CSV of n points whose 5 columns are smooth functions of a 2-D latent, offset
// by 100 (so that a reconstruction left in standardised units is obvious), with a text label column
// between them and entry (i, i mod 5) missing for every 7th row. It returns the path and the data.
func ownData(t *testing.T, dir string, n int) (string, [][]float64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("g1,g2,kind,g3,g4,g5\n")
	x := make([][]float64, n)
	for i := range x {
		u, v := math.Sin(float64(i)*0.7), math.Cos(float64(i)*0.3)
		x[i] = []float64{100 + u, 100 + v, 100 + u*v, 100 + u - v, 100 + 2*u}
		kind := []string{"ctrl", "case"}[i%2]
		for j, val := range x[i] {
			if j == 2 {
				b.WriteString(kind + ",")
			}
			if i%7 == 0 && j == i%5 {
				b.WriteString("NA")
				x[i][j] = math.NaN()
			} else {
				b.WriteString(strconv.FormatFloat(val, 'g', -1, 64))
			}
			if j < len(x[i])-1 {
				b.WriteString(",")
			}
		}
		b.WriteString("\n")
	}
	p := filepath.Join(dir, "cells.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, x
}

// TestTrainOnOwnData: train --data reads your own file (missing entries, a text label column),
// standardises it, writes latents, a reconstruction in the file's units and the figures; infer then
// takes new raw points (one column entirely missing) and answers in the file's units; a changed
// training file is refused.
func TestTrainOnOwnData(t *testing.T) {
	dir := t.TempDir()
	file, x := ownData(t, dir, 60)
	out := filepath.Join(dir, "run")
	var stderr bytes.Buffer
	args := []string{"train", "--data", file, "--labels", "kind", "--standardize", "--method", "vais", "--k", "2",
		"--m", "8", "--iters", "3", "--quiet", "--out", out}
	if code := run(args, &stderr); code != 0 {
		t.Fatalf("train --data exited %d: %s", code, stderr.String())
	}
	met, buf := readMetrics(t, out)
	abs, _ := filepath.Abs(file)
	if met.Dataset != "cells" || met.DataFile != abs || met.MissingEntries != 9 || met.Config.Q != 5 ||
		met.Eval == nil || met.Eval.OneNNError == nil || !(met.Eval.MSE > 0) {
		t.Errorf("metrics.json: %s", buf)
	}
	latents := latentsWithLabels(t, filepath.Join(out, "latents.csv"), "kind", []string{"ctrl", "case"})
	recon := readCSVRows(t, filepath.Join(out, "reconstruction.csv"))
	if len(latents) != 60 || len(latents[0]) != 5 || len(recon) != 60 || len(recon[0]) != 5 {
		t.Fatalf("latents %dx%d, reconstruction %dx%d, want 60x5 each", len(latents), len(latents[0]), len(recon), len(recon[0]))
	}
	for i := range recon {
		for j, v := range recon[i] {
			if math.Abs(v-100) > 5 { // data units: every column is 100 +- 3
				t.Fatalf("reconstruction[%d][%d] = %g is not in the file's units (about 100)", i, j, v)
			}
		}
	}
	if math.Abs(recon[0][0]-100) > 3 || !math.IsNaN(x[0][0]) {
		t.Errorf("imputed entry [0][0] = %g", recon[0][0])
	}
	for _, f := range []string{"curve.png", "latent_cells_vais.png", "ard_cells_vais.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("figure %s: %v", f, err)
		}
	}

	// infer: raw new points, column g4 entirely missing, another entry missing.
	newPts := filepath.Join(dir, "new.csv")
	_ = os.WriteFile(newPts, []byte("g1,g2,g3,g4,g5\n100.5,99.5,100.1,,101\n99.2,NaN,100,,98.4\n"), 0o644)
	ck := filepath.Join(out, "checkpoint.gob")
	inferDir := filepath.Join(dir, "infer")
	if code := run([]string{"infer", "--checkpoint", ck, "--data", newPts, "--out", inferDir, "--iters", "3"}, &stderr); code != 0 {
		t.Fatalf("infer exited %d: %s", code, stderr.String())
	}
	var sum experiment.InferSummary
	buf, _ = os.ReadFile(filepath.Join(inferDir, "infer.json"))
	if err := json.Unmarshal(buf, &sum); err != nil || sum.Points != 2 || sum.Missing != 3 || !(sum.MSEObs < 25) || !(sum.NegBound < 1000) {
		t.Errorf("infer.json: %s (%v)", buf, err)
	}
	for i, r := range readCSVRows(t, filepath.Join(inferDir, "infer_reconstruction.csv")) {
		for j, v := range r {
			if math.Abs(v-100) > 5 {
				t.Errorf("infer reconstruction[%d][%d] = %g is not in the file's units", i, j, v)
			}
		}
	}

	// A changed training file is refused; a missing label column is an error naming it.
	_ = os.WriteFile(file, []byte("g1,g2,kind,g3,g4,g5\n1,2,a,3,4,5\n"), 0o644)
	stderr.Reset()
	if code := run([]string{"infer", "--checkpoint", ck, "--data", newPts, "--out", inferDir, "--overwrite"}, &stderr); code != 1 || !strings.Contains(stderr.String(), "has changed") {
		t.Errorf("infer after the training file changed: exit %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"train", "--data", file, "--labels", "type", "--out", filepath.Join(dir, "other")}, &stderr); code != 1 || !strings.Contains(stderr.String(), `no column named "type"`) {
		t.Errorf("unknown label column: exit %d, %s", code, stderr.String())
	}
}

// TestReproduceOnOwnData: reproduce --table 1 --data compares MF, IWVI and VAIS on your own file
// (missing entries, text labels): one row per method and snapshot, the 1-NN error from the labels,
// the file recorded in the settings, and the figures named after the file.
func TestReproduceOnOwnData(t *testing.T) {
	dir := t.TempDir()
	file, _ := ownData(t, dir, 40)
	out := filepath.Join(dir, "cmp")
	var stderr bytes.Buffer
	args := []string{"reproduce", "--table", "1", "--data", file, "--labels", "kind", "--iters", "3", "--batch", "20",
		"--m", "6", "--k", "2", "--runs", "2", "--jobs", "1", "--out", out}
	if code := run(args, &stderr); code != 0 {
		t.Fatalf("reproduce --data exited %d: %s", code, stderr.String())
	}
	var tab paper.Result
	buf, _ := os.ReadFile(filepath.Join(out, "table1.json"))
	if err := json.Unmarshal(buf, &tab); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(file)
	if len(tab.Rows) != 9 || tab.Settings["data_file"] != abs || tab.Settings["missing_entries"] != float64(6) {
		t.Fatalf("table1.json: %d rows, settings %v", len(tab.Rows), tab.Settings)
	}
	for _, r := range tab.Rows {
		if r.Dataset != "cells" || r.OneNNError == nil || math.IsNaN(r.MSE[0]) || math.IsNaN(r.NegELBO[0]) {
			t.Errorf("row %+v", r)
		}
		if len(r.PerRun) != 2 {
			t.Errorf("%s %d: %d runs, want 2", r.Method, r.Iterations, len(r.PerRun))
		}
	}
	if md, _ := os.ReadFile(filepath.Join(out, "table1.md")); strings.Count(string(md), "| cells | 3 | ") != 2 {
		t.Errorf("table1.md: want the seed-paired lines of VAIS against iwvi and mf:\n%s", md)
	}
	for _, f := range []string{"curves_cells.png", "latent_cells_vais.png", "ard_cells_mf.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("figure %s: %v", f, err)
		}
	}
	for _, bad := range [][]string{
		{"reproduce", "--data", file, "--datasets", "wine"},
		{"reproduce", "--labels", "kind"},
		{"reproduce", "--table", "2", "--labels", "kind"},
		{"reproduce", "--table", "2", "--data", file},
	} {
		if code := run(bad, &stderr); code != 2 {
			t.Errorf("%v exited %d, want 2", bad, code)
		}
	}
}

// readMetrics reads and decodes DIR/metrics.json written by train; it also returns the file's bytes
// for error messages.
func readMetrics(t *testing.T, dir string) (experiment.Metrics, []byte) {
	t.Helper()
	var met experiment.Metrics
	buf, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf, &met); err != nil {
		t.Fatalf("metrics.json: %v", err)
	}
	return met, buf
}

// readCSVRecords reads the CSV file at path, every line's fields.
func readCSVRecords(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func readCSVRows(t *testing.T, path string) [][]float64 {
	t.Helper()
	recs := readCSVRecords(t, path)
	// The first line is a header of names (h1..hQ, or the data's columns).
	if len(recs) < 2 {
		t.Fatalf("%s: %d lines, want a header and rows", path, len(recs))
	}
	if _, err := strconv.ParseFloat(recs[0][0], 64); err == nil {
		t.Fatalf("%s: the first line %q is not a header", path, recs[0])
	}
	recs = recs[1:]
	rows := make([][]float64, len(recs))
	for i, r := range recs {
		for _, s := range r {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%s row %d: %v", path, i, err)
			}
			rows[i] = append(rows[i], v)
		}
	}
	return rows
}

// latentsWithLabels reads latents.csv written for labelled data: a header h1..hQ and the label
// column's name, then per row Q numbers and the row's label name (one of names, alternating as
// ownData writes them). It returns the latents.
func latentsWithLabels(t *testing.T, path, column string, names []string) [][]float64 {
	t.Helper()
	recs := readCSVRecords(t, path)
	if len(recs) < 2 {
		t.Fatalf("%s: %d lines, want a header and rows", path, len(recs))
	}
	q := len(recs[0]) - 1
	if recs[0][0] != "h1" || recs[0][q] != column {
		t.Fatalf("%s header %v, want h1..hQ then %s", path, recs[0], column)
	}
	var rows [][]float64
	for i, r := range recs[1:] {
		if r[q] != names[i%len(names)] {
			t.Fatalf("%s row %d label %q, want %q", path, i, r[q], names[i%len(names)])
		}
		row := make([]float64, q)
		for j := range row {
			var err error
			if row[j], err = strconv.ParseFloat(r[j], 64); err != nil {
				t.Fatalf("%s row %d: %v", path, i, err)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// TestBenchFreyJSON: bench on the Frey missing-data task writes one JSON row per method with the
// dataset, K, graph size, one compiled graph, the host-side share of an iteration and how the data
// fit was evaluated.
func TestBenchFreyJSON(t *testing.T) {
	rows := benchRows(t, "--methods", "mf,vais", "--k", "2", "--m", "5", "--batch", "20", "--iters", "2")
	if len(rows) != 2 || rows[0].Method != "mf" || rows[1].Method != "vais" {
		t.Fatalf("want rows mf, vais; got %+v", rows)
	}
	for _, b := range rows {
		if b.Dataset != "frey" || b.K != 2 || b.Batch != 20 || b.CompiledGraphs != 1 || !(b.MedianSecs > 0) ||
			b.GraphOps <= 0 || b.MatMuls <= 0 || math.IsNaN(b.NegELBOAtLast) || !(b.HostSecs > 0 && b.HostSecs < b.MedianSecs) {
			t.Errorf("row %+v", b)
		}
	}
	// MF with one sample evaluates the means directly; VAIS (3 evaluations per point, D 560 > M 5)
	// takes the projected fit with its batch's damaged images first.
	if rows[0].Fit != "means" || rows[1].Fit != "projected" {
		t.Errorf("fit: mf %q, vais %q; want means, projected", rows[0].Fit, rows[1].Fit)
	}
	if rows[1].GraphOps <= rows[0].GraphOps {
		t.Errorf("VAIS K=2 graph (%d ops) should be larger than MF's (%d)", rows[1].GraphOps, rows[0].GraphOps)
	}
	if rows[0].Samples != 0 || rows[1].Samples != 0 {
		t.Errorf("one sample or chain per point: want no samples field, got %d, %d", rows[0].Samples, rows[1].Samples)
	}
	// Several chains are recorded: a 3-chain VAIS row must not read as a one-chain one.
	if rows := benchRows(t, "--methods", "vais", "--k", "2", "--samples", "3", "--m", "5", "--batch", "20", "--iters", "2"); len(rows) != 1 || rows[0].Samples != 3 {
		t.Errorf("bench --samples 3: rows %+v; want one row with samples 3", rows)
	}
}

// benchRows runs bench on Frey with args and returns the rows of its JSON on stdout, failing the
// test when it does not exit 0 or prints no JSON.
func benchRows(t *testing.T, args ...string) []experiment.BenchResult {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	var stderr bytes.Buffer
	code := run(append([]string{"bench", "--dataset", "frey"}, args...), &stderr)
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	if code != 0 {
		t.Fatalf("bench %v exited %d: %s", args, code, stderr.String())
	}
	var rows []experiment.BenchResult
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("bench output is not JSON: %v\n%s", err, out)
	}
	return rows
}

// TestTrainConverge: train --converge fits MF by L-BFGS on the collapsed bound until the rule
// holds, records convergence in metrics.json (converged, rule, final change) with the curve, and
// its Monte Carlo MF bound equals the collapsed bound at the end (q(u) at its optimum); IWVI starts
// there and continues with Adam to its own rule (both stages recorded); flags that cannot go with
// it are usage errors (exit 2), and --converge-from a model the collapsed bound cannot hold; such a
// model (a kernel without psi statistics, mini-batches) converges by Adam alone.
func TestTrainConverge(t *testing.T) {
	dir, base, _ := trainedSetup(t)
	out := filepath.Join(dir, "conv")
	if code, msg := runQuiet("train", "--data", base, "--method", "mf", "--m", "5", "--converge", "--converge-window", "20",
		"--converge-tol", "1e-4", "--quiet", "--no-figures", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	met, raw := readMetrics(t, out)
	c := met.Convergence
	if c == nil || !c.Converged || c.Change == nil || *c.Change > 1e-4 || !strings.Contains(c.Rule, "over the last 20") || met.Config.Batch != 0 {
		t.Fatalf("metrics.json: %s", raw)
	}
	if se := *met.Eval.NegELBOSE; math.Abs(met.Eval.NegELBO-c.NegELBO) > 4*se+1e-6 {
		t.Errorf("the model's MF bound %.6f ± %.2g, the converged collapsed bound %.6f", met.Eval.NegELBO, se, c.NegELBO)
	}
	if rows := readCSVRows(t, filepath.Join(out, "curve.csv")); len(rows) != c.Iterations || rows[len(rows)-1][1] > rows[0][1] {
		t.Errorf("curve.csv: %d rows for %d iterations", len(rows), c.Iterations)
	}
	// Another bound: the converged MF start, then Adam on IWVI's own bound to its plateau rule.
	iw := filepath.Join(dir, "conv-iwvi")
	if code, msg := runQuiet("train", "--data", base, "--method", "iwvi", "--k", "3", "--m", "5", "--converge", "--converge-window", "20",
		"--converge-tol", "1e-4", "--quiet", "--no-figures", "--out", iw); code != 0 {
		t.Fatalf("iwvi: exit %d: %s", code, msg)
	}
	met, raw = readMetrics(t, iw)
	if s, c := met.ConvergenceStart, met.Convergence; s == nil || !s.Converged || c == nil || !c.Converged || !strings.Contains(c.Rule, "halved") || met.Iterations != c.Iterations {
		t.Fatalf("iwvi metrics.json: %s", raw)
	}
	// The same from the converged MF checkpoint: no L-BFGS start of its own; a stricter rule.
	from := filepath.Join(dir, "conv-from")
	if code, msg := runQuiet("train", "--data", base, "--method", "iwvi", "--k", "3", "--m", "5", "--converge", "--converge-from",
		filepath.Join(out, "checkpoint.gob"), "--converge-halvings", "6", "--quiet", "--no-figures", "--out", from); code != 0 {
		t.Fatalf("--converge-from: exit %d: %s", code, msg)
	}
	met, raw = readMetrics(t, from)
	if met.ConvergenceStart != nil || met.ConvergedFrom == "" || met.Convergence == nil || !met.Convergence.Converged ||
		!strings.Contains(met.Convergence.Rule, "after 6 halvings") {
		t.Fatalf("--converge-from with --converge-halvings 6: metrics.json: %s", raw)
	}
	// An annealed bound converges with eta_k held fixed, unless --adapt-eta asks otherwise.
	for _, adapt := range []bool{false, true} {
		vs := filepath.Join(dir, "conv-vais-"+strconv.FormatBool(adapt))
		args := []string{"train", "--data", base, "--method", "vais", "--k", "2", "--m", "5", "--converge", "--converge-from",
			filepath.Join(out, "checkpoint.gob"), "--quiet", "--no-figures", "--out", vs}
		if adapt {
			args = append(args, "--adapt-eta")
		}
		if code, msg := runQuiet(args...); code != 0 {
			t.Fatalf("vais --converge-from (--adapt-eta %v): exit %d: %s", adapt, code, msg)
		}
		if met, raw := readMetrics(t, vs); met.Config.AdaptEta != adapt || met.Convergence == nil {
			t.Errorf("vais --converge (--adapt-eta given: %v): adapt_eta %v in %s", adapt, met.Config.AdaptEta, raw)
		}
	}
	checkCases(t, []reliabilityCase{
		{"converge-from mf", []string{"train", "--data", base, "--method", "mf", "--converge", "--converge-from", filepath.Join(out, "checkpoint.gob"), "--out", filepath.Join(dir, "x5")}, 2, []string{"--converge-from"}},
		{"converge iters", []string{"train", "--data", base, "--method", "mf", "--converge", "--iters", "5", "--out", filepath.Join(dir, "x2")}, 2, []string{"--iters"}},
		{"max-seconds alone", []string{"train", "--data", base, "--method", "mf", "--max-seconds", "5", "--out", filepath.Join(dir, "x3")}, 2, []string{"--converge"}},
		{"converge-halvings alone", []string{"train", "--data", base, "--method", "mf", "--converge-halvings", "6", "--out", filepath.Join(dir, "x6")}, 2, []string{"--converge-halvings", "--converge"}},
		{"converge-halvings 0", []string{"train", "--data", base, "--method", "iwvi", "--converge", "--converge-halvings", "0", "--out", filepath.Join(dir, "x7")}, 2, []string{"--converge-halvings", ">= 1"}},
		{"converge-from matern", []string{"train", "--data", base, "--method", "iwvi", "--m", "5", "--kernel", "matern32", "--converge", "--converge-from", filepath.Join(out, "checkpoint.gob"),
			"--quiet", "--out", filepath.Join(dir, "x4")}, 2, []string{"--converge-from", "psi statistics"}},
	})
	// What the collapsed bound cannot hold converges by Adam alone, from the start at --lr, on
	// means over whole epochs: a kernel without psi statistics (full batch), and the image sets'
	// mini-batches (frey: 1965 images in batches of 100, 20 iterations an epoch: windows of 200).
	for _, c := range []struct {
		name  string
		args  []string
		batch int
	}{
		{"matern", []string{"--data", base, "--method", "mf", "--m", "5", "--kernel", "matern32"}, 0},
		{"frey", []string{"--dataset", "frey", "--method", "mf", "--m", "5", "--hide-pixels=false"}, 100},
	} {
		o := filepath.Join(dir, "adam-"+c.name)
		args := append(append([]string{"train"}, c.args...), "--converge", "--max-seconds", "4", "--quiet", "--no-figures", "--out", o)
		if code, msg := runQuiet(args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, msg)
		}
		met, raw := readMetrics(t, o)
		if cv := met.Convergence; cv == nil || met.ConvergenceStart != nil || met.Config.Batch != c.batch || !strings.Contains(cv.Rule, "over 200 iterations") ||
			(cv.StoppedBy != "max seconds" && !cv.Converged) || cv.Iterations < 1 {
			t.Errorf("%s: metrics.json: %s", c.name, raw)
		}
	}
}

// TestTrainOwnDataConvergesByDefault: train --data without --iters fits a fully observed file to
// convergence (full batch, metrics.json's convergence, capped at experiment.DefaultMaxSeconds) and says so; with
// --iters it trains Adam steps; a file with missing entries trains Adam steps and says why.
func TestTrainOwnDataConvergesByDefault(t *testing.T) {
	dir, base, _ := trainedSetup(t)
	out := filepath.Join(dir, "default")
	code, msg := runPrinting(t, []string{"train", "--data", base, "--method", "mf", "--m", "5", "--quiet", "--no-figures", "--out", out})
	if code != 0 || !strings.Contains(msg, "fitting to convergence") {
		t.Fatalf("exit %d: %s", code, msg)
	}
	met, raw := readMetrics(t, out)
	if c := met.Convergence; c == nil || met.Config.Batch != 0 || !strings.Contains(c.Rule, "over the last 50") {
		t.Fatalf("metrics.json: %s", raw)
	}
	steps := filepath.Join(dir, "steps")
	if code, msg := runQuiet("train", "--data", base, "--method", "mf", "--m", "5", "--iters", "3", "--quiet", "--no-figures", "--out", steps); code != 0 {
		t.Fatalf("--iters 3: exit %d: %s", code, msg)
	}
	if met, raw := readMetrics(t, steps); met.Convergence != nil || met.Iterations != 3 {
		t.Fatalf("--iters 3 metrics.json: %s", raw)
	}
	missing, _ := ownData(t, dir, 40) // NA entries
	code, msg = runPrinting(t, []string{"train", "--data", missing, "--labels", "kind", "--method", "mf", "--m", "5", "--batch", "0", "--iters", "2", "--quiet", "--no-figures", "--out", filepath.Join(dir, "m1")})
	if code != 0 || strings.Contains(msg, "convergence") {
		t.Fatalf("with --batch and --iters: exit %d: %s", code, msg)
	}
	code, msg = runPrinting(t, []string{"train", "--data", missing, "--labels", "kind", "--method", "mf", "--m", "5", "--quiet", "--no-figures", "--out", filepath.Join(dir, "m2")})
	if code != 0 || !strings.Contains(msg, "missing entries") {
		t.Fatalf("missing entries: exit %d: %s", code, msg)
	}
}

// TestTrainConvergeMaxIters: --max-lbfgs-iters stops the L-BFGS fit at that many iterations and
// reports it as not converged; without --converge it is a usage error.
func TestTrainConvergeMaxIters(t *testing.T) {
	dir, base, _ := trainedSetup(t)
	out := filepath.Join(dir, "capped")
	if code, msg := runQuiet("train", "--data", base, "--method", "mf", "--m", "5", "--converge", "--max-lbfgs-iters", "7",
		"--quiet", "--no-figures", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	met, raw := readMetrics(t, out)
	if c := met.Convergence; c == nil || c.Converged || c.Iterations != 7 || c.StoppedBy != "max iterations" {
		t.Fatalf("metrics.json: %s", raw)
	}
	if code, msg := runQuiet("train", "--data", base, "--method", "mf", "--iters", "3", "--max-lbfgs-iters", "7", "--out", filepath.Join(dir, "x")); code != 2 || !strings.Contains(msg, "--max-lbfgs-iters") {
		t.Fatalf("without --converge: exit %d: %s", code, msg)
	}
}
