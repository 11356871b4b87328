package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/cmf"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
)

// TestTrainImageDatasets: train runs on Frey and MNIST from the embedded data with Table 4's
// defaults for the image sets (Q, K, the shared q(u) root, mini-batches of 100) and Table 2's hidden
// pixels drawn with --seed, and reports their reconstruction scores; infer then works on the Frey
// checkpoint (it rebuilds the same hidden pixels from the recorded seed). The run is kept small
// (M 5, K 2, 2 iterations) except where the defaults are checked.
func TestTrainImageDatasets(t *testing.T) {
	if testing.Short() {
		t.Skip("long (tens of seconds to minutes on 2 cores): skipped under -short; the README's test command runs it")
	}
	t.Setenv(data.EnvVar, "")
	for _, c := range []struct {
		dataset string
		q, d    int
	}{{"frey", 20, 560}, {"mnist", 5, 784}} {
		dir := t.TempDir()
		var stderr bytes.Buffer
		args := []string{"train", "--dataset", c.dataset, "--iters", "2", "--m", "5", "--quiet", "--no-figures", "--out", dir}
		if code := run(args, &stderr); code != 0 {
			t.Fatalf("%s: train exited %d: %s", c.dataset, code, stderr.String())
		}
		met, _ := readMetrics(t, dir)
		cfg := met.Config
		if cfg.Q != c.q || cfg.K != 25 || cfg.Batch != 100 || !cfg.SharedQSqrt || cfg.LR != 0.02 || cfg.StopGrad != (c.dataset == "frey") {
			t.Errorf("%s: Q %d K %d batch %d shared %v lr %g stop-grad %v; want Table 4's Q %d, K 25, batch 100, shared root, lr 0.02, and VAIS's stop-gradient chain on frey only",
				c.dataset, cfg.Q, cfg.K, cfg.Batch, cfg.SharedQSqrt, cfg.LR, cfg.StopGrad, c.q)
		}
		n := map[string]int{"frey": 1965, "mnist": 2163}[c.dataset]
		damaged := (n*5 + 50) / 100 // round(0.05 n)
		h := met.Hidden
		if h == nil || h.Rows != damaged || h.Entries != damaged*(c.d*3/4) || !(h.MSE > 0 && h.MSE < 1) || h.NELL == 0 {
			t.Errorf("%s: hidden-pixel scores %+v; want %d damaged images of %d hidden pixels, an MSE in (0, 1)", c.dataset, h, damaged, c.d*3/4)
		}
		if b := met.HiddenBaselines; h == nil || b == nil || !(b.KNNMSE > 0 && b.KNNMSE < b.ColumnMeanMSE) || !(b.PPCAMSE > 0 && b.PPCAMSE < b.ColumnMeanMSE) ||
			b.PPCANELL == 0 || b.PPCAQ != c.q || b.ValidatedKNN == nil || h.MSEPredictive <= 0 || h.Components < 1 {
			t.Errorf("%s: hidden-pixel baselines %+v and mixture scores %+v: want k-NN and PPCA below column means, PPCA at Q %d", c.dataset, b, h, c.q)
		}
		if met.MissingEntries != damaged*(c.d*3/4) {
			t.Errorf("%s: %d missing entries, want %d", c.dataset, met.MissingEntries, damaged*(c.d*3/4))
		}
		if c.dataset != "frey" {
			continue
		}
		// infer on three Frey images, the second with a third of its pixels missing.
		ds, err := data.Frey(data.Unit)
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		for j := 0; j < c.d; j++ {
			fmt.Fprintf(&sb, "p%d,", j)
		}
		text := strings.TrimSuffix(sb.String(), ",") + "\n"
		for r, i := range []int{0, 700, 1964} {
			fields := make([]string, c.d)
			for j, v := range ds.X[i] {
				if r != 1 || j%3 != 0 {
					fields[j] = fmt.Sprint(v)
				}
			}
			text += strings.Join(fields, ",") + "\n"
		}
		newData := filepath.Join(dir, "new.csv")
		if err := os.WriteFile(newData, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		inferDir := filepath.Join(dir, "infer")
		args = []string{"infer", "--checkpoint", filepath.Join(dir, "checkpoint.gob"), "--data", newData, "--out", inferDir, "--iters", "2"}
		if code := run(args, &stderr); code != 0 {
			t.Fatalf("infer on the frey checkpoint exited %d: %s", code, stderr.String())
		}
		var sum experiment.InferSummary
		buf, _ := os.ReadFile(filepath.Join(inferDir, "infer.json"))
		if err := json.Unmarshal(buf, &sum); err != nil || sum.Points != 3 || sum.Missing != (c.d+2)/3 {
			t.Errorf("infer.json: %s (%v)", buf, err)
		}
	}
}

// TestTrainDataFlags: the data flags are checked before anything is read, with exit status 2.
func TestTrainDataFlags(t *testing.T) {
	out := t.TempDir()
	for _, args := range [][]string{
		{"train", "--out", out, "--dataset", "frey", "--pixels", "grey"},
		{"train", "--out", out, "--dataset", "oilflow", "--pixels", "raw"},
		{"train", "--out", out, "--dataset", "wine", "--hide-pixels=false"},
		{"train", "--out", out, "--data", "x.csv", "--pixels", "raw"},
		{"train", "--out", out, "--dataset", "frey", "--seed", "0"},
		{"train", "--dataset", "frey"}, // no --out
		{"train", "--out", out, "--dataset", "mnist", "--backend", "tpu"},
		{"train", "--out", out, "--data", filepath.Join(out, "absent.csv"), "--backend", "tpu"},
		{"train", "--out", out, "--data", filepath.Join(out, "absent.csv"), "--k", "-2"},
	} {
		var stderr bytes.Buffer
		if code := run(args, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, strings.TrimSpace(stderr.String()))
		}
	}
	// An existing file with a good flag set reads the file: an absent one is a runtime error (1).
	var stderr bytes.Buffer
	if code := run([]string{"train", "--out", out, "--data", filepath.Join(out, "absent.csv"), "--backend", "go"}, &stderr); code != 1 {
		t.Errorf("absent --data file: exit %d, want 1 (%s)", code, stderr.String())
	}
}

// TestEvidenceCommand: evidence on a small trained VAIS checkpoint writes evidence.json with a
// finite -log evidence per point and standard error, and the three bounds with their gaps, each
// -ELBO above the evidence (gap > -3 s.e.), and the convergence check at 25 temperatures; with
// --ess, the ESS pairing in evidence.json, ess_gap.csv (a row per point) and its figures; bad flags
// exit 2.
func TestEvidenceCommand(t *testing.T) {
	dir := t.TempDir()
	file, _ := ownData(t, dir, 40)
	run1 := filepath.Join(dir, "run")
	var stderr bytes.Buffer
	if code := run([]string{"train", "--data", file, "--labels", "kind", "--method", "vais", "--m", "6", "--k", "3", "--iters", "20",
		"--no-figures", "--out", run1}, &stderr); code != 0 {
		t.Fatalf("train exited %d: %s", code, stderr.String())
	}
	out := filepath.Join(dir, "ev")
	ck := filepath.Join(run1, "checkpoint.gob")
	if code := run([]string{"evidence", "--checkpoint", ck, "--out", out, "--temps", "100", "--runs", "4", "--draws", "3"}, &stderr); code != 0 {
		t.Fatalf("evidence exited %d: %s", code, stderr.String())
	}
	buf, err := os.ReadFile(filepath.Join(out, "evidence.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		NegLogEvidence float64 `json:"neg_log_evidence_per_point"`
		SE             float64 `json:"neg_log_evidence_per_point_se"`
		Bounds         []struct {
			NegELBO float64  `json:"neg_elbo_per_point"`
			Gap     *float64 `json:"gap_to_evidence"`
			GapSE   *float64 `json:"gap_to_evidence_se"`
		} `json:"bounds"`
		Check *struct {
			Temps        int     `json:"temperatures"`
			Shift        float64 `json:"shift"`
			Extrapolated float64 `json:"neg_log_evidence_per_point_extrapolated"`
		} `json:"convergence"`
	}
	if err := json.Unmarshal(buf, &sum); err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(sum.NegLogEvidence) || !(sum.SE > 0) || len(sum.Bounds) != 3 {
		t.Fatalf("evidence.json: %s", buf)
	}
	if c := sum.Check; c == nil || c.Temps != 25 || math.Abs(c.Extrapolated-(sum.NegLogEvidence+c.Shift/3)) > 1e-9 {
		t.Errorf("convergence check %+v: want 25 temperatures and the estimate extrapolated by a third of the shift", c)
	}
	for _, b := range sum.Bounds {
		if b.Gap == nil || !(*b.Gap > -3**b.GapSE) {
			t.Errorf("bound %+v: want a gap above -3 s.e.", b)
		}
	}
	// The trained chain at other step sizes and with several chains: one line each, below the evidence.
	out2 := filepath.Join(dir, "ev2")
	if code := run([]string{"evidence", "--checkpoint", ck, "--out", out2, "--temps", "100", "--runs", "4", "--draws", "3",
		"--eta-scales", "0.5,2", "--chains", "3"}, &stderr); code != 0 {
		t.Fatalf("evidence --eta-scales --chains exited %d: %s", code, stderr.String())
	}
	var vsum struct {
		Variants []struct {
			What  string   `json:"what"`
			Gap   *float64 `json:"gap_to_evidence"`
			GapSE *float64 `json:"gap_to_evidence_se"`
		} `json:"chain_variants"`
	}
	if buf, err = os.ReadFile(filepath.Join(out2, "evidence.json")); err != nil || json.Unmarshal(buf, &vsum) != nil || len(vsum.Variants) != 3 {
		t.Fatalf("evidence.json with variants (%v): %s", err, buf)
	}
	for i, want := range []string{"x 0.5", "x 2", "3 weighted chain"} {
		v := vsum.Variants[i]
		if !strings.Contains(v.What, want) || v.Gap == nil || !(*v.Gap > -3**v.GapSE) {
			t.Errorf("variant %d %+v: want %q and a gap above -3 s.e.", i, v, want)
		}
	}
	// Each point's ESS paired with its gap: the chain's own weights and q0's, a row per point.
	out3 := filepath.Join(dir, "ev3")
	if code := run([]string{"evidence", "--checkpoint", ck, "--out", out3, "--temps", "100", "--runs", "4", "--draws", "3",
		"--points", "12", "--ess", "4"}, &stderr); code != 0 {
		t.Fatalf("evidence --ess exited %d: %s", code, stderr.String())
	}
	var esum struct {
		Pairs []struct {
			Weights string  `json:"weights"`
			K       int     `json:"k"`
			ESS     float64 `json:"mean_ess"`
		} `json:"ess_gap"`
	}
	if buf, err = os.ReadFile(filepath.Join(out3, "evidence.json")); err != nil || json.Unmarshal(buf, &esum) != nil || len(esum.Pairs) != 2 ||
		esum.Pairs[0].Weights != "own" || esum.Pairs[1].K != 4 || !(esum.Pairs[0].ESS >= 1 && esum.Pairs[0].ESS <= 4) {
		t.Fatalf("evidence.json with --ess (%v): %s", err, buf)
	}
	if csv, err := os.ReadFile(filepath.Join(out3, "ess_gap.csv")); err != nil || strings.Count(string(csv), "\n") != 13 ||
		!strings.HasPrefix(string(csv), "point,log_z,log_z_se,ess_own,gap_own,ess_q0,gap_q0\n") {
		t.Errorf("ess_gap.csv (%v): %s", err, csv)
	}
	for _, f := range []string{"ess_gap.png", "ess_hist.png"} {
		if _, err := os.Stat(filepath.Join(out3, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	// --damaged: the 6 rows with a missing entry.
	out4 := filepath.Join(dir, "ev4")
	if code := run([]string{"evidence", "--checkpoint", ck, "--out", out4, "--temps", "50", "--runs", "2", "--draws", "2", "--damaged"}, &stderr); code != 0 {
		t.Fatalf("evidence --damaged exited %d: %s", code, stderr.String())
	}
	var dsum struct {
		Points int `json:"points"`
	}
	if buf, err = os.ReadFile(filepath.Join(out4, "evidence.json")); err != nil || json.Unmarshal(buf, &dsum) != nil || dsum.Points != 6 {
		t.Errorf("evidence.json with --damaged (%v): %d points, want the 6 damaged rows", err, dsum.Points)
	}
	mfRun := filepath.Join(dir, "mf")
	if code := run([]string{"train", "--data", file, "--labels", "kind", "--method", "mf", "--m", "6", "--iters", "2", "--no-figures", "--out", mfRun}, &stderr); code != 0 {
		t.Fatalf("train mf exited %d: %s", code, stderr.String())
	}
	for _, bad := range [][]string{
		{"evidence", "--out", out},
		{"evidence", "--checkpoint", ck, "--out", out, "--runs", "1"},
		{"evidence", "--checkpoint", ck, "--out", filepath.Join(dir, "e6"), "--temps", "10", "--check-temps", "10"},
		{"evidence", "--checkpoint", ck, "--out", filepath.Join(dir, "e7"), "--tolerance", "0"},
		{"evidence", "--checkpoint", ck, "--out", out}, // evidence.json is there: --overwrite
		{"evidence", "--checkpoint", ck, "--out", filepath.Join(dir, "e3"), "--eta-scales", "0.5,-1"},
		{"evidence", "--checkpoint", ck, "--out", filepath.Join(dir, "e4"), "--chains", "0"},
		{"evidence", "--checkpoint", filepath.Join(mfRun, "checkpoint.gob"), "--out", filepath.Join(dir, "e5"), "--chains", "2"},
		{"evidence", "--checkpoint", ck, "--out", filepath.Join(dir, "e8"), "--ess", "1"},
		{"evidence", "--checkpoint", ck, "--out", filepath.Join(dir, "e9"), "--ess", "4", "--points", "3"},
		{"evidence", "--checkpoint", ck, "--out", filepath.Join(dir, "e10"), "--damaged", "--points", "5"},
		{"evidence", "--checkpoint", ck, "--out", filepath.Join(dir, "e11"), "--damaged", "--ess", "4"}, // 6 damaged rows: too few to pair
	} {
		if code := run(bad, &stderr); code != 2 {
			t.Errorf("%v exited %d, want 2", bad, code)
		}
	}
}

// TestInferMovedTrainingFile: when the training file a checkpoint records has moved, infer says so
// and names --train-data (exit 1); --train-data with the moved file works; a different file there
// is refused by its sha256 (exit 1); --train-data for a built-in dataset's checkpoint is a usage
// error.
func TestInferMovedTrainingFile(t *testing.T) {
	dir := t.TempDir()
	file, _ := ownData(t, dir, 30)
	runDir := filepath.Join(dir, "run")
	var stderr bytes.Buffer
	if code := run([]string{"train", "--data", file, "--labels", "kind", "--method", "mf", "--m", "5", "--iters", "3",
		"--no-figures", "--out", runDir}, &stderr); code != 0 {
		t.Fatalf("train exited %d: %s", code, stderr.String())
	}
	moved := filepath.Join(dir, "moved.csv")
	if err := os.Rename(file, moved); err != nil {
		t.Fatal(err)
	}
	newData := filepath.Join(dir, "new.csv")
	if err := os.WriteFile(newData, []byte("g1,g2,g3,g4,g5\n100,100,,100,100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(runDir, "checkpoint.gob")
	base := []string{"infer", "--checkpoint", ck, "--data", newData, "--iters", "2"}
	stderr.Reset()
	if code := run(append(base, "--out", filepath.Join(dir, "a")), &stderr); code != 1 || !strings.Contains(stderr.String(), "--train-data") {
		t.Errorf("moved training file: exit %d, %q; want 1 naming --train-data", code, stderr.String())
	}
	stderr.Reset()
	if code := run(append(base, "--out", filepath.Join(dir, "b"), "--train-data", moved), &stderr); code != 0 {
		t.Errorf("--train-data with the moved file: exit %d: %s", code, stderr.String())
	}
	other := filepath.Join(dir, "other.csv")
	buf, _ := os.ReadFile(moved)
	if err := os.WriteFile(other, append(buf, []byte("1,2,ctrl,3,4,5\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(append(base, "--out", filepath.Join(dir, "c"), "--train-data", other), &stderr); code != 1 || !strings.Contains(stderr.String(), "changed since") {
		t.Errorf("--train-data with another file: exit %d, %q; want 1 (sha256)", code, stderr.String())
	}
	builtin := filepath.Join(dir, "oil")
	if code := run([]string{"train", "--dataset", "oilflow", "--method", "mf", "--m", "5", "--iters", "1", "--batch", "50",
		"--no-figures", "--out", builtin}, &stderr); code != 0 {
		t.Fatalf("train on oilflow exited %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"evidence", "--checkpoint", filepath.Join(builtin, "checkpoint.gob"), "--out", filepath.Join(dir, "d"),
		"--train-data", moved}, &stderr); code != 2 || !strings.Contains(stderr.String(), "built-in dataset") {
		t.Errorf("--train-data for a built-in dataset: exit %d, %q; want 2", code, stderr.String())
	}
}

// TestQDefaultFitsSmallData: on 4 points of 12 columns the default Q (10) is lowered to 4, which the
// PCA initialisation can give (it failed with a runtime error before), and an explicit --q 6 is a
// usage error naming the flag and the largest Q that fits.
func TestQDefaultFitsSmallData(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("a,b,c,d,e,f,g,h,i,j,k,l\n")
	for i := 0; i < 4; i++ {
		for j := 0; j < 12; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%g", float64((i+1)*(j+2)%7)+0.1*float64(i))
		}
		b.WriteString("\n")
	}
	file := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	out := filepath.Join(dir, "run")
	if code := run([]string{"train", "--data", file, "--method", "mf", "--m", "2", "--iters", "3", "--no-figures", "--out", out}, &stderr); code != 0 {
		t.Fatalf("default Q on 4 points: exit %d: %s", code, stderr.String())
	}
	if met, buf := readMetrics(t, out); met.Config.Q != 4 {
		t.Errorf("Q = %d, want 4: %s", met.Config.Q, buf)
	}
	stderr.Reset()
	if code := run([]string{"train", "--data", file, "--method", "mf", "--m", "2", "--q", "6", "--iters", "3", "--out", filepath.Join(dir, "q6")}, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "--q 6") || !strings.Contains(stderr.String(), "--q 4 or less") {
		t.Errorf("--q 6 on 4 points: exit %d, %q; want 2 naming --q 4 or less", code, stderr.String())
	}
}

// TestCMFCommand: a seconds-long cmf run on Frey writes cmf.json with the three families' finite
// bounds, the table, the curves and the figures; a second run into the same directory is refused.
func TestCMFCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("long (tens of seconds to minutes on 2 cores): skipped under -short; the README's test command runs it")
	}
	t.Setenv(data.EnvVar, "")
	out := filepath.Join(t.TempDir(), "cmf")
	args := []string{"cmf", "--dataset", "frey", "--iters", "3", "--fit-iters", "2", "--test", "20", "--ks", "1,2", "--draws", "2",
		"--ais-points", "2", "--ais-temps", "3", "--ais-runs", "2", "--hidden", "10", "--aux-hidden", "10", "--m", "5", "--latent-dim", "2",
		"--quiet", "--out", out}
	var stderr bytes.Buffer
	if code := run(args, &stderr); code != 0 {
		t.Fatalf("cmf exited %d: %s", code, stderr.String())
	}
	buf, err := os.ReadFile(filepath.Join(out, "cmf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Train    int `json:"train_points"`
		Families []struct {
			Family string `json:"family"`
			Test   struct {
				PerPoint float64 `json:"per_point"`
			} `json:"test_bound"`
			IW []struct {
				K int `json:"k"`
			} `json:"iw_bounds"`
		} `json:"families"`
	}
	if err := json.Unmarshal(buf, &res); err != nil {
		t.Fatal(err)
	}
	if res.Train != 1945 || len(res.Families) != 3 || len(res.Families[0].IW) != 2 || math.IsNaN(res.Families[0].Test.PerPoint) {
		t.Errorf("cmf.json: %s", buf)
	}
	for _, f := range []string{"cmf.md", "curves.csv", "curves.png", "iw.png", "cmf_samples.png", "amortised_reconstructions.png", "meanfield_latents.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	stderr.Reset()
	if code := run(args, &stderr); code != 2 || !strings.Contains(stderr.String(), "--overwrite") {
		t.Errorf("second run into %s: exit %d, %s", out, code, stderr.String())
	}

	// The learning-rate sweep: mean-field at two rates (and more past a winning end), the chosen one
	// is the one it trains at.
	sweepOut := filepath.Join(t.TempDir(), "sweep")
	var meanfieldArgs []string // without the cmf family's flags, which a meanfield-only run refuses
	for i := 0; i < len(args)-1; i++ {
		if slices.ContainsFunc(cmf.OwnSettings, func(f string) bool { return flagFor(f) == args[i] }) {
			i++
			continue
		}
		meanfieldArgs = append(meanfieldArgs, args[i])
	}
	args = append(meanfieldArgs, sweepOut, "--families", "meanfield", "--lr-sweep", "1e-3,1e-2", "--sweep-iters", "2")
	stderr.Reset()
	if code := run(args, &stderr); code != 0 {
		t.Fatalf("cmf --lr-sweep exited %d: %s", code, stderr.String())
	}
	if buf, err = os.ReadFile(filepath.Join(sweepOut, "cmf.json")); err != nil {
		t.Fatal(err)
	}
	var swept struct {
		Families []struct {
			LR float64 `json:"lr"`
		} `json:"families"`
		Sweep []struct {
			LR     float64 `json:"lr"`
			Chosen bool    `json:"chosen"`
		} `json:"lr_sweep"`
	}
	if err := json.Unmarshal(buf, &swept); err != nil {
		t.Fatal(err)
	}
	chosen := 0
	for _, s := range swept.Sweep {
		if s.Chosen {
			chosen++
			if len(swept.Families) != 1 || swept.Families[0].LR != s.LR {
				t.Errorf("the sweep chose lr %g, the family trained at %+v", s.LR, swept.Families)
			}
		}
	}
	if len(swept.Sweep) < 2 || chosen != 1 {
		t.Errorf("cmf.json of a sweep (want >= 2 rates, one chosen): %s", buf)
	}
}
