package main

// The reliability issue's third round (issue 50): one table-driven test per class of failure, each
// through the command's run() or the library's API. Every case failed on the code before the fix.

import (
	"bytes"
	"compress/gzip"
	"encoding/gob"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
)

// finishedFiles returns the sha256 of every file of a finished run in dir but the bookkeeping
// (dot) files and the partial outputs of an unfinished run.
func finishedFiles(t *testing.T, dir string) map[string]string {
	return testutil.FileSums(t, dir, func(n string) bool { return strings.Contains(n, ".partial.") })
}

// TestFailedOverwriteKeepsFinishedRun (class 1): a train --overwrite that fails (diverges, or is not
// finite before its first update) over a finished run leaves every file of that run as it was, and
// its own curve beside them as curve.partial.csv. Before the fix the failure path committed and
// removed the finished run's checkpoint, metrics, latents and reconstruction.
func TestFailedOverwriteKeepsFinishedRun(t *testing.T) {
	_, base, ck := trainedSetup(t)
	out := filepath.Dir(ck)
	want := finishedFiles(t, out)
	if len(want) < 5 {
		t.Fatalf("the finished run wrote only %v", want)
	}
	common := []string{"train", "--data", base, "--m", "5", "--iters", "3", "--quiet", "--no-figures", "--out", out, "--overwrite"}
	cases := []struct {
		name  string
		extra []string
		words []string
	}{
		{"diverges", []string{"--method", "mf", "--lr", "1e300"}, []string{"diverged at iteration", "as they were"}},
		{"not finite before the first update", []string{"--method", "vais", "--eta", "1e308"}, []string{"before any update", "as they were"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			code, msg := runQuiet(append(append([]string{}, common...), c.extra...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1: %s", code, msg)
			}
			for _, w := range c.words {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q lacks %q", msg, w)
				}
			}
			got := finishedFiles(t, out)
			for name, sum := range want {
				if got[name] != sum {
					t.Errorf("the failed run changed or removed the finished run's %s", name)
				}
			}
			if _, err := os.Stat(filepath.Join(out, experiment.PartialCurve)); err != nil {
				t.Errorf("the failed run left no %s: %v", experiment.PartialCurve, err)
			}
		})
	}
	// The finished run's files are still provably its own: a finished --overwrite replaces them and
	// the partial curve goes.
	if code, msg := runQuiet(append(append([]string{}, common...), "--method", "mf")...); code != 0 {
		t.Fatalf("overwriting after the failures: exit %d: %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(out, experiment.PartialCurve)); !os.IsNotExist(err) {
		t.Errorf("a finished run left the failed run's %s: %v", experiment.PartialCurve, err)
	}
}

// TestFlippedCheckpointRefused (class 3a): a checkpoint with one flipped bit in a variable's value
// is refused by infer, evidence and train --resume alike, exit 1 naming the file. Before
// checkpoints carried a checksum, all three accepted it (exit 0, shifted results).
func TestFlippedCheckpointRefused(t *testing.T) {
	dir, base, ck := trainedSetup(t)
	buf, err := os.ReadFile(ck)
	if err != nil {
		t.Fatal(err)
	}
	flipped := filepath.Join(dir, "flipped", "checkpoint.gob")
	if err := os.MkdirAll(filepath.Dir(flipped), 0o755); err != nil {
		t.Fatal(err)
	}
	// The file ends with the checksum (32 bytes, its length and field tag, the end mark) after the
	// last variable's values: this bit is in those values.
	buf[len(buf)-38] ^= 1 << 2
	if err := os.WriteFile(flipped, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	o := func(s string) string { return filepath.Join(dir, s) }
	// The intact checkpoint loads in another process (the checksum must not depend on the process;
	// a first version hashed gob's bytes, whose type ids depend on what a process encoded before,
	// and notebook 00's next cell refused the checkpoint the training cell had saved).
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "evidence", "--checkpoint", ck, "--temps", "5", "--runs", "2", "--points", "2", "--out", o("sub"))
	cmd.Env = append(os.Environ(), "VAISGPLVM_TEST_MAIN=1", data.EnvVar+"=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the intact checkpoint in another process: %v\n%s", err, out)
	}
	checkCases(t, []reliabilityCase{
		{"infer", []string{"infer", "--checkpoint", flipped, "--data", base, "--iters", "2", "--out", o("i")}, 1, []string{flipped, "damaged"}},
		{"evidence", []string{"evidence", "--checkpoint", flipped, "--temps", "5", "--runs", "2", "--out", o("e")}, 1, []string{flipped, "damaged"}},
		{"resume", []string{"train", "--data", base, "--method", "mf", "--m", "5", "--iters", "4", "--quiet", "--no-figures",
			"--resume", flipped, "--out", o("r")}, 1, []string{flipped, "damaged"}},
	})
}

// TestFlagThatCannotApply (class 4): an explicit flag the run would not use, or a size it would
// clamp, is a usage error (exit 2) naming the flag, before any work. Before the fix every case ran
// (exit 0 or 1) with the flag dropped or the size clamped.
func TestFlagThatCannotApply(t *testing.T) {
	dir, _, ck := trainedSetup(t)
	o := func(s string) string { return filepath.Join(dir, s) }
	tr := []string{"train", "--dataset", "oilflow", "--m", "5", "--iters", "2", "--quiet", "--no-figures"}
	cmf := []string{"cmf", "--dataset", "frey", "--iters", "2", "--fit-iters", "1", "--quiet", "--no-figures"}
	with := func(base []string, extra ...string) []string { return append(append([]string{}, base...), extra...) }
	checkCases(t, []reliabilityCase{
		{"uha damping with vais", with(tr, "--method", "vais", "--uha-damping", "0.5", "--out", o("a")), 2, []string{"--uha-damping"}},
		{"uha damping with mf", with(tr, "--method", "mf", "--uha-damping", "0.5", "--out", o("b")), 2, []string{"--uha-damping"}},
		{"bench uha damping with vais", []string{"bench", "--methods", "vais", "--iters", "1", "--uha-damping", "0.5"}, 2, []string{"--uha-damping"}},
		{"empty data", []string{"train", "--data", "", "--out", o("c")}, 2, []string{"--data"}},
		{"adapt-eta with learn-eta", with(tr, "--method", "vais", "--adapt-eta", "--learn-eta", "--out", o("d")), 2, []string{"--adapt-eta", "--learn-eta"}},
		{"adapt-eta with paper-eta", with(tr, "--method", "vais", "--adapt-eta", "--paper-eta", "--out", o("e")), 2, []string{"--adapt-eta", "--paper-eta"}},
		{"cmf lr with a sweep", with(cmf, "--lr", "0.01", "--lr-sweep", "1e-3,1e-2", "--out", o("f")), 2, []string{"--lr "}},
		{"cmf validation without a sweep", with(cmf, "--validation", "0.2", "--out", o("g")), 2, []string{"--validation"}},
		{"cmf sweep-iters without a sweep", with(cmf, "--sweep-iters", "5", "--out", o("h")), 2, []string{"--sweep-iters"}},
		{"cmf marginal-ks with the auxiliary bound", with(cmf, "--bound", "auxiliary", "--marginal-ks", "10", "--out", o("i")), 2, []string{"--marginal-ks"}},
		{"cmf point-var without cmf", with(cmf, "--families", "meanfield", "--point-var", "--out", o("j")), 2, []string{"--point-var"}},
		{"cmf ais-points above test", with(cmf, "--families", "meanfield", "--test", "10", "--ais-points", "11", "--ais-temps", "2", "--out", o("k")), 2, []string{"--ais-points"}},
		{"cmf test of every point", with(cmf, "--families", "meanfield", "--test", "1965", "--out", o("l")), 2, []string{"--test"}},
		{"evidence points above N", []string{"evidence", "--checkpoint", ck, "--points", "41", "--temps", "5", "--out", o("m")}, 2, []string{"--points 41", "40"}},
	})
}

// TestMessagesNameTheFlag (class 5): a bad value is named with its flag, not a list of every flag's
// range; cmf --dtype float32 is refused up front instead of failing inside GoMLX.
func TestMessagesNameTheFlag(t *testing.T) {
	dir, _, ck := trainedSetup(t)
	o := func(s string) string { return filepath.Join(dir, s) }
	cmf := []string{"cmf", "--dataset", "frey", "--iters", "2", "--quiet", "--no-figures"}
	with := func(base []string, extra ...string) []string { return append(append([]string{}, base...), extra...) }
	cases := []reliabilityCase{
		{"cmf draws", with(cmf, "--draws", "1", "--out", o("a")), 2, []string{"--draws 1: want >= 2"}},
		{"cmf validation", with(cmf, "--lr-sweep", "1e-3,1e-2", "--validation", "0.9", "--out", o("b")), 2, []string{"--validation 0.9"}},
		{"cmf float32", with(cmf, "--dtype", "float32", "--out", o("c")), 2, []string{"--dtype", "float64 only"}},
		{"evidence runs", []string{"evidence", "--checkpoint", ck, "--runs", "1", "--out", o("d")}, 2, []string{"--runs 1: want >= 2"}},
		{"evidence check-temps", []string{"evidence", "--checkpoint", ck, "--temps", "10", "--check-temps", "10", "--out", o("e")}, 2, []string{"--check-temps 10 with --temps 10"}},
	}
	checkCases(t, cases)
	for _, c := range cases {
		_, msg := runQuiet(c.args...)
		if strings.Count(msg, "--") > 3 {
			t.Errorf("%s: the message names more than the flags at fault: %s", c.name, msg)
		}
	}
}

// TestStuckAISWarns (class 3b): cmf's AIS of log p(y) whose chains accept none of their moves (5
// temperatures) warns that its value and standard error mean nothing (in cmf.json, and on stderr);
// before, it reported them without a word.
func TestStuckAISWarns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c")
	code, msg := runQuiet("cmf", "--dataset", "frey", "--families", "meanfield", "--iters", "3", "--fit-iters", "2", "--test", "20",
		"--ks", "1,2", "--draws", "2", "--ais-points", "2", "--ais-temps", "5", "--ais-runs", "2", "--hidden", "10", "--aux-hidden", "10",
		"--quiet", "--no-figures", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	buf, err := os.ReadFile(filepath.Join(out, "cmf.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(buf); !strings.Contains(s, "did not move") || !strings.Contains(s, "--ais-temps") {
		t.Errorf("cmf.json has no warning about the stuck AIS:\n%.2000s", s)
	}
}

// TestSizesRefusedOrStoppable (class 2): a table whose trainings cannot all fit is refused at once
// (exit 2), over every method it would run: before, the methods ran concurrently and the one that
// fit built its graph for minutes (to 10 GB) before the refusals of the others were reported; and
// a graph that takes long to build still stops on the first SIGTERM (exit 130 within seconds,
// saying nothing was written), where it ignored it.
func TestSizesRefusedOrStoppable(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	code, msg := runQuiet("reproduce", "--table", "1", "--k", "1000", "--samples", "10000", "--m", "1000", "--no-figures", "--jobs", "1",
		"--out", filepath.Join(dir, "big"))
	if code != 2 || !strings.Contains(msg, "GiB") || time.Since(start) > 20*time.Second {
		t.Errorf("a table that cannot fit: exit %d after %v: %s; want 2 at once, naming the memory", code, time.Since(start), msg)
	}
	start = time.Now()
	code, log := interrupted(t, syscall.SIGTERM, []string{"reproduce", "--table", "1", "--datasets", "wine", "--methods", "iwvi", "--k", "1000",
		"--m", "300", "--iters", "3", "--no-figures", "--jobs", "1", "--out", filepath.Join(dir, "slow")})
	if code != 130 || !strings.Contains(log, "no table written") || time.Since(start) > 45*time.Second {
		t.Errorf("SIGTERM while a K = 1000 graph builds: exit %d after %v, want 130 within seconds; stderr:\n%s", code, time.Since(start), log)
	}
}

// TestDataFileMessages (class 5): data files that cannot be used are refused in one short line
// naming the problem: a gzip file (its binary was echoed), a 2 MB field (echoed whole), duplicate
// column names (train accepted them, then infer refused every file), a file without a header line
// (its first row silently became the column names).
func TestDataFileMessages(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("a,b\n1,2\n3,4\n"))
	zw.Close()
	rows := strings.Repeat("1,2,3\n", 30)
	cases := []reliabilityCase{
		{"gzip", []string{"train", "--data", file("x.csv.gz", gz.String()), "--out", filepath.Join(dir, "a")}, 1, []string{"gzip-compressed", "gunzip"}},
		{"huge field", []string{"train", "--data", file("big.csv", "a,b,c\n"+rows+"1,"+strings.Repeat("x", 2<<20)+",3\n"), "--out", filepath.Join(dir, "b")}, 1, []string{"bytes)", "column 2"}},
		{"duplicate names", []string{"train", "--data", file("dup.csv", "a,b,a\n"+rows), "--out", filepath.Join(dir, "c")}, 1, []string{"columns 1 and 3", `"a"`}},
		{"no header", []string{"train", "--data", file("nohead.csv", rows), "--out", filepath.Join(dir, "d")}, 1, []string{"only numbers", "column names"}},
	}
	checkCases(t, cases)
	for _, c := range cases {
		if _, msg := runQuiet(c.args...); len(msg) > 400 || strings.ContainsRune(msg, '\x8b') {
			t.Errorf("%s: the message is %d bytes or holds binary: %.200q", c.name, len(msg), msg)
		}
	}
}

// TestDamagedDataTag (class 5): a checkpoint whose recorded dataset is no dataset this vaisgplvm
// has is refused as damaged (exit 1), not blamed on a --dataset flag that was never given (exit 2).
func TestDamagedDataTag(t *testing.T) {
	t.Setenv(data.EnvVar, "")
	dir := t.TempDir()
	run1 := filepath.Join(dir, "run")
	if code, msg := runQuiet("train", "--dataset", "oilflow", "--method", "mf", "--m", "5", "--iters", "2", "--quiet", "--no-figures", "--out", run1); code != 0 {
		t.Fatalf("train: exit %d: %s", code, msg)
	}
	ck := readCkMirror(t, filepath.Join(run1, "checkpoint.gob"))
	ck.DataTag = "oilfloW"
	bad := filepath.Join(dir, "bad", "checkpoint.gob")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := os.Create(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := gob.NewEncoder(w).Encode(&ck); err != nil {
		t.Fatal(err)
	}
	w.Close()
	cases := []reliabilityCase{
		{"evidence", []string{"evidence", "--checkpoint", bad, "--temps", "5", "--out", filepath.Join(dir, "e")}, 1, []string{"damaged", `"oilfloW"`}},
	}
	checkCases(t, cases)
	if _, msg := runQuiet(cases[0].args...); strings.Contains(msg, "--dataset") {
		t.Errorf("the message blames --dataset: %s", msg)
	}
}

// TestResumeWithoutRestating (issue 55, item 3): train --resume DIR --iters N --out DIR continues
// a run on your own data with the checkpoint's data and settings, no other flag; a flag given that
// disagrees with the checkpoint is refused naming it. Before, resuming without --data fell back to
// oil flow and said "other settings (q: 6 vs 10 now)".
func TestResumeWithoutRestating(t *testing.T) {
	_, base, ck := trainedSetup(t) // 2 MF iterations on base.csv, --m 5
	out := filepath.Dir(ck)
	if code, msg := runQuiet("train", "--resume", out, "--iters", "4", "--out", out, "--quiet", "--no-figures"); code != 0 {
		t.Fatalf("resume with --resume, --iters and --out only: exit %d: %s", code, msg)
	}
	buf, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	if err != nil || !strings.Contains(string(buf), `"iterations": 4`) || !strings.Contains(string(buf), "base.csv") {
		t.Errorf("metrics.json after the resume: %v\n%.600s", err, buf)
	}
	o := func(s string) string { return filepath.Join(t.TempDir(), s) }
	checkCases(t, []reliabilityCase{
		{"another m", []string{"train", "--resume", out, "--iters", "6", "--m", "6", "--out", o("a")}, 2, []string{"--m differs"}},
		{"another method", []string{"train", "--resume", out, "--iters", "6", "--method", "vais", "--out", o("b")}, 2, []string{"--method vais"}},
		{"another dataset", []string{"train", "--resume", out, "--iters", "6", "--dataset", "wine", "--out", o("c")}, 2, []string{"base.csv", "wine"}},
		{"the same data named", []string{"train", "--resume", out, "--iters", "5", "--data", base, "--m", "5", "--quiet", "--no-figures", "--out", o("d")}, 0, nil},
	})
}

// TestTableSaysHowItWasMade (issue 55, item 1): a table's JSON records the kernel, Q per dataset,
// the seeds, the data's content hash and the command, commit and machine; a table made by another
// command is not replaced without --overwrite (it was, silently), a rerun of the same command is.
func TestTableSaysHowItWasMade(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t1")
	first := []string{"reproduce", "--table", "1", "--datasets", "wine", "--methods", "mf", "--iters", "3", "--m", "5", "--batch", "20",
		"--no-figures", "--jobs", "1", "--out", out}
	if code, msg := runQuiet(first...); code != 0 {
		t.Fatalf("reproduce: exit %d: %s", code, msg)
	}
	buf, err := os.ReadFile(filepath.Join(out, "table1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kernel": "se"`, `"wine": 9`, `"seeds": "1..1"`, `"data_content_sha256"`, `"command": "vaisgplvm reproduce --table 1`, `"commit"`, `"machine"`} {
		if !strings.Contains(string(buf), want) {
			t.Errorf("table1.json lacks %s", want)
		}
	}
	other := append(append([]string{}, first...), "--kernel", "matern52")
	checkCases(t, []reliabilityCase{
		{"another command", other, 2, []string{"--overwrite", "not by this command"}},
		{"the same command again", first, 0, nil},
		{"another command with --overwrite", append(other, "--overwrite"), 0, nil},
	})
	if buf, _ := os.ReadFile(filepath.Join(out, "table1.json")); !strings.Contains(string(buf), `"kernel": "matern52"`) {
		t.Error("--overwrite did not replace the table")
	}
}

// TestOneMetricBothScales (issue 55, item 2): with --standardize, train's metrics.json gives the MSE
// in the model's units (mse) and in the file's (mse_data_units), infer.json in the file's
// (mse_observed) and the model's (mse_observed_model_units), so one metric is never compared
// across scales. Before, each file had one of them.
func TestOneMetricBothScales(t *testing.T) {
	dir, base, _ := trainedSetup(t)
	run1 := filepath.Join(dir, "std")
	if code, msg := runQuiet("train", "--data", base, "--standardize", "--method", "mf", "--m", "5", "--iters", "3", "--quiet", "--no-figures", "--out", run1); code != 0 {
		t.Fatalf("train: exit %d: %s", code, msg)
	}
	if code, msg := runQuiet("infer", "--checkpoint", filepath.Join(run1, "checkpoint.gob"), "--data", base, "--iters", "2", "--out", filepath.Join(dir, "inf")); code != 0 {
		t.Fatalf("infer: exit %d: %s", code, msg)
	}
	var met struct {
		Eval struct {
			MSE float64 `json:"mse"`
		} `json:"metrics"`
		MSEData *float64 `json:"mse_data_units"`
	}
	var inf struct {
		MSE      float64  `json:"mse_observed"`
		MSEModel *float64 `json:"mse_observed_model_units"`
	}
	for file, v := range map[string]any{filepath.Join(run1, "metrics.json"): &met, filepath.Join(dir, "inf", "infer.json"): &inf} {
		buf, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(buf, v); err != nil {
			t.Fatal(err)
		}
	}
	if met.MSEData == nil || inf.MSEModel == nil || *met.MSEData == met.Eval.MSE || *inf.MSEModel == inf.MSE {
		t.Fatalf("metrics.json mse %g, mse_data_units %v; infer.json mse_observed %g, mse_observed_model_units %v: want both scales in each",
			met.Eval.MSE, met.MSEData, inf.MSE, inf.MSEModel)
	}
	// The oil-flow columns' scales differ: the ratio of the two scales is about the same in both files.
	if r1, r2 := *met.MSEData/met.Eval.MSE, inf.MSE / *inf.MSEModel; r1/r2 < 0.5 || r1/r2 > 2 {
		t.Errorf("data/model units ratio %g in metrics.json, %g in infer.json: want about the same", r1, r2)
	}
}
