package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// TestMain lets a test run the command itself as a subprocess (VAISGPLVM_TEST_MAIN=1: the test
// binary is then the command), so that signals reach a real process.
func TestMain(m *testing.M) {
	if os.Getenv("VAISGPLVM_TEST_MAIN") == "1" {
		os.Exit(withKernels(os.Args))
	}
	os.Exit(m.Run())
}

// oilflowHead writes the header and the first n rows of the oil-flow CSV to path, with a text
// label column "kind" when labelled; each value times scale.
func oilflowHead(t *testing.T, path string, n int, labelled bool, scale float64) {
	t.Helper()
	buf, err := data.Read(data.OilflowData)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(buf)), "\n")
	var b strings.Builder
	for i, l := range lines[:n+1] {
		if i > 0 {
			f := strings.Split(l, ",")
			for j := range f {
				v, _ := strconv.ParseFloat(f[j], 64)
				f[j] = strconv.FormatFloat(v*scale, 'g', -1, 64)
			}
			l = strings.Join(f, ",")
		}
		if labelled {
			l += "," + map[bool]string{true: "kind", false: []string{"a", "b"}[i%2]}[i == 0]
		}
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot returns the contents of every file under dir, by relative path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			buf, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			files[rel] = string(buf)
		}
		return nil
	})
	return files
}

// TestHostileInputs runs the command on the bad and odd inputs of the reliability issue. Each case
// wants an exit status; every failure must be one line starting "vaisgplvm: " that contains the
// given words, never a panic; no written file may hold a NaN; files present before the command
// must be unchanged unless the case says it writes them.
func TestHostileInputs(t *testing.T) {
	t.Setenv(data.EnvVar, "")
	t.Setenv("VAISGPLVM_BACKEND", "")
	dir := t.TempDir()
	base, lab, one, big := filepath.Join(dir, "base.csv"), filepath.Join(dir, "base_lab.csv"), filepath.Join(dir, "one_lab.csv"), filepath.Join(dir, "big.csv")
	oilflowHead(t, base, 40, false, 1)
	oilflowHead(t, lab, 40, true, 1)
	oilflowHead(t, one, 1, true, 1)
	oilflowHead(t, big, 40, false, 1e20)
	same, tiny, empty, changed := filepath.Join(dir, "same.csv"), filepath.Join(dir, "tiny.csv"), filepath.Join(dir, "empty.csv"), filepath.Join(dir, "changed.csv")
	oilflowHead(t, tiny, 40, false, 1e-300)
	oilflowHead(t, changed, 40, false, 1)
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	buf, _ := os.ReadFile(base)
	lines := strings.SplitAfter(string(buf), "\n")
	if err := os.WriteFile(same, []byte(lines[0]+strings.Repeat(lines[1], 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	earlier := filepath.Join(dir, "earlier")
	if code := run([]string{"train", "--data", base, "--m", "5", "--iters", "2", "--quiet", "--no-figures", "--out", earlier}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("the earlier run failed: %d", code)
	}
	o := func(name string) string { return filepath.Join(dir, name) }
	// A run on changed.csv, whose file then changes: its resume must say so in words.
	if code := run([]string{"train", "--data", changed, "--m", "5", "--iters", "2", "--quiet", "--no-figures", "--out", o("ch")}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("the run on changed.csv failed: %d", code)
	}
	oilflowHead(t, changed, 39, false, 1)
	// A run that holds its directory's lock while the cases run.
	held, err := rundir.Open(o("held"), []string{"metrics.json"}, rundir.Options{Run: "train"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cases := []struct {
		name  string
		env   string // NAME=VALUE set for the case
		args  []string
		code  int
		words []string // in the error line (code != 0) or in metrics.json's warnings (code 0)
	}{
		{"lr 1e300 with labels", "", []string{"train", "--data", lab, "--labels", "kind", "--m", "10", "--iters", "1", "--lr", "1e300", "--out", o("a")}, 1, []string{"diverged", "--lr"}},
		{"lr 1e300", "", []string{"train", "--data", base, "--m", "10", "--iters", "2", "--lr", "1e300", "--out", o("b")}, 1, []string{"diverged", "no checkpoint"}},
		{"one data row", "", []string{"train", "--data", one, "--labels", "kind", "--m", "1", "--q", "1", "--iters", "3", "--out", o("c")}, 0, nil},
		{"samples 1e8", "", []string{"train", "--data", base, "--m", "10", "--iters", "2", "--samples", "100000000", "--out", o("d")}, 2, []string{"samples"}},
		{"k 1e5", "", []string{"train", "--data", base, "--m", "10", "--iters", "2", "--k", "100000", "--out", o("e")}, 2, []string{"k = 100000"}},
		{"memory", "", []string{"train", "--data", base, "--m", "10", "--iters", "2", "--k", "1000", "--samples", "10000", "--out", o("f")}, 2, []string{"GiB", "--samples"}},
		{"lr 10 diverges", "", []string{"train", "--dataset", "oilflow", "--iters", "20", "--batch", "100", "--lr", "10", "--m", "10", "--out", o("g")}, 0, []string{"rose from"}},
		{"eta 10 never accepts", "", []string{"train", "--dataset", "oilflow", "--iters", "20", "--batch", "100", "--m", "10", "--eta", "10", "--adapt-eta=false",
			"--tamed=false", "--precondition=false", "--out", o("h")}, 0, []string{"accepts almost none"}},
		{"into an earlier run", "", []string{"train", "--data", base, "--m", "5", "--iters", "2", "--out", earlier}, 2, []string{"another run's outputs", "--overwrite"}},
		{"into an earlier run, failing", "", []string{"train", "--data", base, "--m", "5", "--iters", "2", "--lr", "1e300", "--out", earlier}, 2, []string{"--overwrite"}},
		{"infer into the training directory", "", []string{"infer", "--checkpoint", filepath.Join(earlier, "checkpoint.gob"), "--data", base, "--iters", "2", "--out", earlier}, 0, nil},
		{"reproduce into /proc", "", []string{"reproduce", "--table", "1", "--datasets", "oilflow", "--out", "/proc/x"}, 2, []string{"/proc/x"}},
		{"m > N", "", []string{"train", "--data", base, "--m", "60", "--iters", "2", "--out", o("i")}, 2, []string{"--m 60", "--m 40"}},
		{"q > D", "", []string{"train", "--data", base, "--m", "5", "--q", "20", "--iters", "2", "--out", o("j")}, 2, []string{"--q 20", "--q 12"}},
		{"batch > N", "", []string{"train", "--data", base, "--m", "5", "--batch", "50", "--iters", "2", "--out", o("k")}, 2, []string{"--batch 50"}},
		{"default M on 40 rows", "", []string{"train", "--data", base, "--iters", "2", "--out", o("l")}, 0, nil},
		{"k 0 with a custom schedule", "", []string{"train", "--data", base, "--k", "0", "--schedule", "custom:0.5,1", "--out", o("m")}, 2, []string{"custom"}},
		{"bad backend variable", "VAISGPLVM_BACKEND=bogus", []string{"train", "--data", base, "--out", o("n")}, 2, []string{"$VAISGPLVM_BACKEND"}},
		{"point-eta with mf", "", []string{"train", "--data", base, "--method", "mf", "--point-eta", "--out", o("p")}, 2, []string{"--point-eta"}},
		{"seed 0", "", []string{"train", "--data", base, "--seed", "0", "--out", o("q")}, 2, []string{"--seed"}},
		{"data from /dev/zero", "", []string{"train", "--data", "/dev/zero", "--out", o("r")}, 1, []string{"not a regular file"}},
		{"values times 1e20", "", []string{"train", "--data", big, "--m", "5", "--iters", "3", "--out", o("s")}, -1, []string{"--standardize"}},
		{"evidence into the training directory", "", []string{"evidence", "--checkpoint", filepath.Join(earlier, "checkpoint.gob"), "--temps", "20", "--runs", "2",
			"--draws", "2", "--out", earlier}, 0, nil},
		{"evidence of a missing checkpoint", "", []string{"evidence", "--checkpoint", o("nothing.gob"), "--out", o("t")}, 1, []string{"nothing.gob"}},
		{"evidence --sample with --points", "", []string{"evidence", "--checkpoint", filepath.Join(earlier, "checkpoint.gob"), "--sample", "10", "--points", "5", "--out", o("u1")}, 2, []string{"--sample", "--points"}},
		{"evidence --sample beyond N", "", []string{"evidence", "--checkpoint", filepath.Join(earlier, "checkpoint.gob"), "--sample", "100000", "--temps", "5", "--runs", "2", "--out", o("u2")}, 2, []string{"--sample", "at most"}},
		{"evidence --iwvi-k 0", "", []string{"evidence", "--checkpoint", filepath.Join(earlier, "checkpoint.gob"), "--iwvi-k", "0", "--out", o("u3")}, 2, []string{"--iwvi-k"}},
		{"evidence with 0 temperatures", "", []string{"evidence", "--checkpoint", filepath.Join(earlier, "checkpoint.gob"), "--temps", "0", "--out", o("u")}, 2, []string{"--temps"}},
		{"reproduce table 6 with --subset", "", []string{"reproduce", "--table", "6", "--subset", "40", "--out", o("v")}, 2, []string{"--subset", "--table 5"}},
		{"reproduce table 4", "", []string{"reproduce", "--table", "4", "--out", o("w")}, 2, []string{"table 4", "settings"}},
		{"reproduce --from itself", "", []string{"reproduce", "--table", "1", "--from", o("w1"), "--out", o("w1")}, 2, []string{"--from", "another directory"}},
		{"reproduce --from with --fresh", "", []string{"reproduce", "--table", "1", "--from", o("w2"), "--fresh", "--out", o("w3")}, 2, []string{"--from", "--fresh"}},
		{"reproduce --from table 6", "", []string{"reproduce", "--table", "6", "--from", o("w2"), "--out", o("w3")}, 2, []string{"--from", "--table"}},
		{"reproduce --from a directory without trainings", "", []string{"reproduce", "--table", "1", "--from", o("w4"), "--out", o("w5")}, 1, []string{"no trainings there"}},
		{"infer lr NaN", "", []string{"infer", "--checkpoint", filepath.Join(earlier, "checkpoint.gob"), "--data", base, "--lr", "NaN", "--out", o("x")}, 2, []string{"--lr"}},
		{"infer --exact with --single-latent", "", []string{"infer", "--checkpoint", filepath.Join(earlier, "checkpoint.gob"), "--data", base, "--exact", "--single-latent", "--out", o("x1")}, 2, []string{"--exact", "--single-latent"}},
		{"infer --exact", "", []string{"infer", "--checkpoint", filepath.Join(earlier, "checkpoint.gob"), "--data", base, "--iters", "2", "--exact", "--out", o("x2")}, 0, nil},
		{"identical rows", "", []string{"train", "--data", same, "--m", "5", "--iters", "2", "--out", o("z1")}, 0, []string{"every data row is the same"}},
		{"values times 1e-300", "", []string{"train", "--data", tiny, "--m", "5", "--iters", "2", "--out", o("z2")}, 0, []string{"extreme", "--standardize"}},
		{"empty file", "", []string{"train", "--data", empty, "--out", o("z3")}, 1, []string{"is empty"}},
		{"resume after the file changed", "", []string{"train", "--data", changed, "--m", "5", "--iters", "4", "--resume", filepath.Join(o("ch"), "checkpoint.gob"),
			"--out", o("ch")}, 1, []string{"has changed since", "without --resume"}},
		{"resume with other settings", "", []string{"train", "--data", base, "--m", "6", "--iters", "4", "--resume", filepath.Join(earlier, "checkpoint.gob"),
			"--out", earlier}, 2, []string{"--m differs"}}, // issue 55: a flag that disagrees with the checkpoint is named (it was exit 1, "m: 5 vs 6")
		{"a directory another run is writing", "", []string{"train", "--data", base, "--m", "5", "--iters", "2", "--out", o("held")}, 2, []string{"another run is writing"}},
		{"cmf with an unknown family", "", []string{"cmf", "--families", "cmf,vae", "--out", o("c1")}, 2, []string{"vae"}},
		{"cmf with one draw", "", []string{"cmf", "--draws", "1", "--out", o("c2")}, 2, []string{"--draws"}},
		{"cmf on oilflow", "", []string{"cmf", "--dataset", "oilflow", "--out", o("c3")}, 2, []string{"oilflow"}},
		{"cmf with one sweep rate", "", []string{"cmf", "--lr-sweep", "1e-3", "--out", o("c4")}, 2, []string{"--lr-sweep", "two or more"}},
		{"cmf with a negative sweep rate", "", []string{"cmf", "--lr-sweep", "1e-3,-1", "--out", o("c5")}, 2, []string{"--lr-sweep", "-1"}},
		{"cmf validating on 90%", "", []string{"cmf", "--lr-sweep", "1e-3,1e-2", "--validation", "0.9", "--out", o("c6")}, 2, []string{"--validation"}},
		{"stl with iwvi", "", []string{"train", "--data", base, "--method", "iwvi", "--stl", "--out", o("z4")}, 2, []string{"stl", "--method vais"}},
		{"paper-eta with learn-eta", "", []string{"train", "--data", base, "--paper-eta", "--learn-eta", "--out", o("y")}, 2, []string{"App. D"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			if name, value, ok := strings.Cut(c.env, "="); ok {
				t.Setenv(name, value)
			}
			before := snapshot(t, earlier)
			args := append(c.args, "--quiet", "--no-figures")
			if c.args[0] != "train" {
				args = c.args
			}
			stdout := os.Stdout
			devnull, _ := os.Open(os.DevNull)
			os.Stdout = devnull
			var stderr bytes.Buffer
			code := run(args, &stderr)
			os.Stdout = stdout
			devnull.Close()
			msg := strings.TrimSpace(stderr.String())
			if c.code >= 0 && code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, msg)
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine") {
				t.Fatalf("panicked: %s", msg)
			}
			text := msg
			out := c.args[len(c.args)-1] // every case ends with its output directory
			if code != 0 && (strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "vaisgplvm: ")) {
				t.Errorf("want a one-line error starting vaisgplvm:, got %q", msg)
			}
			if code == 0 && c.args[0] == "train" {
				met, _ := readMetrics(t, out)
				text = strings.Join(met.Warnings, " ")
			}
			for _, w := range c.words {
				if !strings.Contains(text, w) {
					t.Errorf("%q lacks %q", text, w)
				}
			}
			for name, content := range snapshot(t, out) {
				if strings.Contains(strings.ToLower(withoutNames(content)), "nan") && !strings.HasSuffix(name, ".gob") && !strings.HasSuffix(name, ".png") {
					t.Errorf("%s holds a NaN: %s", name, nanLine(withoutNames(content)))
				}
			}
			after := snapshot(t, earlier)
			for name, content := range before {
				if after[name] != content {
					t.Errorf("the earlier run's %s changed", name)
				}
			}
		})
	}
}

// interrupted runs the command with args in a subprocess, sends sig a few seconds after it has
// loaded its data and returns its exit status and stderr.
func interrupted(t *testing.T, sig os.Signal, args []string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "VAISGPLVM_TEST_MAIN=1", data.EnvVar+"=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the backend line is out (data loaded, graph about to compile), let it train a few
	// seconds, then interrupt.
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	sc.Split(scanBarUpdates)
	sent := false
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if !sent && strings.HasPrefix(sc.Text(), "backend:") {
			sent = true
			go func() {
				time.Sleep(4 * time.Second)
				_ = cmd.Process.Signal(sig)
			}()
		}
	}
	_ = cmd.Wait()
	return cmd.ProcessState.ExitCode(), log.String()
}

// TestInterruptAndResume: SIGINT (and SIGTERM) during train finishes the step, writes the
// checkpoint and the curve, prints the resume command and exits 130; resuming continues exactly
// (the curve equals a straight run's to the last bit).
func TestInterruptAndResume(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	args := []string{"train", "--dataset", "oilflow", "--method", "vais", "--batch", "50", "--m", "8", "--no-figures",
		"--checkpoint-every", "100000", "--iters", "100000", "--out", out}
	code, log := interrupted(t, syscall.SIGINT, args)
	if code != 130 || !strings.Contains(log, "resume with: vaisgplvm train") {
		t.Fatalf("interrupted train: exit %d, want 130 and the resume command; stderr:\n%s", code, log)
	}
	termOut := filepath.Join(dir, "term")
	code, log = interrupted(t, syscall.SIGTERM, append(append([]string{}, args[:len(args)-1]...), termOut))
	if _, err := os.Stat(filepath.Join(termOut, experiment.PartialCheckpoint)); code != 130 || err != nil {
		t.Errorf("SIGTERM: exit %d (want 130), checkpoint: %v; stderr:\n%s", code, err, log)
	}
	curve, err := os.ReadFile(filepath.Join(out, experiment.PartialCurve))
	if err != nil {
		t.Fatal(err)
	}
	done := len(strings.Split(strings.TrimSpace(string(curve)), "\n")) - 1
	if done < 3 {
		t.Fatalf("interrupted after %d iterations, want >= 3", done)
	}
	// Resume with the printed flags to done+3 iterations, naming the run directory (--resume finds
	// its partial checkpoint); compare with a straight run.
	total := strconv.Itoa(done + 3)
	resumed := append(append([]string{}, args[:len(args)-4]...), "--iters", total, "--out", out, "--resume", out, "--quiet")
	if code := run(resumed, &bytes.Buffer{}); code != 0 {
		t.Fatalf("resume exited %d", code)
	}
	straight := filepath.Join(dir, "straight")
	if code := run(append(append([]string{}, args[:len(args)-4]...), "--iters", total, "--out", straight, "--quiet"), &bytes.Buffer{}); code != 0 {
		t.Fatalf("straight run exited %d", code)
	}
	a, _ := os.ReadFile(filepath.Join(out, "curve.csv"))
	b, _ := os.ReadFile(filepath.Join(straight, "curve.csv"))
	if string(a) != string(b) || len(a) == 0 {
		t.Errorf("resumed curve differs from the straight run's:\n%s\nvs\n%s", a, b)
	}
	if entries, _ := filepath.Glob(filepath.Join(out, ".ckpt-*")); len(entries) != 0 {
		t.Errorf("temporary checkpoint files left: %v", entries)
	}
	if entries, _ := filepath.Glob(filepath.Join(out, "*.partial.*")); len(entries) != 0 {
		t.Errorf("the finished resumed run left partial files: %v", entries)
	}
}

// scanBarUpdates splits the progress bar's output at carriage returns as well as newlines.
func scanBarUpdates(buf []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(buf, "\r\n"); i >= 0 {
		return i + 1, buf[:i], nil
	}
	if atEOF && len(buf) > 0 {
		return len(buf), buf, nil
	}
	return 0, nil, nil
}

// withoutNames drops the JSON lines that hold names rather than numbers (the command line and
// the data's paths, which a hostile input may spell with "nan", and "provenance" itself).
func withoutNames(content string) string {
	var keep []string
	for _, l := range strings.Split(content, "\n") {
		if !strings.Contains(l, `"command":`) && !strings.Contains(l, `"provenance":`) && !strings.Contains(l, `"file":`) && !strings.Contains(l, `"data":`) && !strings.Contains(l, `"data_file":`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// nanLine returns the first line of content that spells "nan" in any case.
func nanLine(content string) string {
	for _, l := range strings.Split(content, "\n") {
		if strings.Contains(strings.ToLower(l), "nan") {
			return l
		}
	}
	return ""
}

// TestInterruptEvidence: SIGINT during evidence cancels its context: the annealed run stops at
// its next temperature, the command says that nothing was written, exits 130 and leaves no
// evidence.json; SIGTERM during infer stops its latent fit the same way.
func TestInterruptEvidence(t *testing.T) {
	dir := t.TempDir()
	file, _ := ownData(t, dir, 40)
	trained := filepath.Join(dir, "run")
	if code := run([]string{"train", "--data", file, "--labels", "kind", "--method", "vais", "--m", "6", "--k", "3", "--iters", "5", "--no-figures", "--quiet",
		"--out", trained}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("train exited %d", code)
	}
	out := filepath.Join(dir, "ev")
	code, log := interrupted(t, syscall.SIGINT, []string{"evidence", "--checkpoint", filepath.Join(trained, "checkpoint.gob"),
		"--out", out, "--temps", "1000000", "--runs", "4"})
	if code != 130 || !strings.Contains(log, "evidence interrupted") || !strings.Contains(log, "stopped at temperature") || !strings.Contains(log, "nothing written to "+out) {
		t.Fatalf("interrupted evidence: exit %d, want 130 and that nothing was written; stderr:\n%s", code, log)
	}
	if _, err := os.Stat(filepath.Join(out, "evidence.json")); err == nil {
		t.Error("an interrupted evidence run wrote evidence.json")
	}
	inferOut := filepath.Join(dir, "inf")
	code, log = interrupted(t, syscall.SIGTERM, []string{"infer", "--checkpoint", filepath.Join(trained, "checkpoint.gob"),
		"--data", file, "--out", inferOut, "--iters", "100000000"})
	if code != 130 || !strings.Contains(log, "infer interrupted") || !strings.Contains(log, "nothing written to "+inferOut) {
		t.Fatalf("interrupted infer: exit %d, want 130 and that nothing was written; stderr:\n%s", code, log)
	}
}
