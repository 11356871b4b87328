package main

// The reliability issue's second round (issue 38): one table-driven test per class of failure, each
// through the command's run() (or a subprocess where a signal must reach a real process). Every case
// failed on the code before the fix; the closing note of the issue says how.

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaisgplvm/vaisgplvm/data"
)

// runQuiet runs the command with stdout discarded and returns its exit status and stderr.
func runQuiet(args ...string) (int, string) {
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	defer func() {
		os.Stdout = stdout
		devnull.Close()
	}()
	var stderr bytes.Buffer
	code := run(args, &stderr)
	return code, strings.TrimSpace(stderr.String())
}

// within runs f and fails the test when it has not returned after limit (a hang).
func within(t *testing.T, limit time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s did not return in %v", what, limit)
	}
}

// reliabilityCase is one command line, its wanted exit status and words in its stderr.
type reliabilityCase struct {
	name  string
	args  []string
	code  int
	words []string
}

// check runs the cases, each within a minute, and checks status, words and one-line errors.
func checkCases(t *testing.T, cases []reliabilityCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			var code int
			var msg string
			within(t, time.Minute, c.name, func() { code, msg = runQuiet(c.args...) })
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, msg)
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine ") {
				t.Fatalf("panicked: %s", msg)
			}
			last := msg[strings.LastIndex(msg, "\n")+1:]
			if code != 0 && !strings.HasPrefix(last, "vaisgplvm: ") {
				t.Errorf("the error is not one line starting vaisgplvm: %q", msg)
			}
			for _, w := range c.words {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q lacks %q", msg, w)
				}
			}
		})
	}
}

// trainedSetup clears the data and backend variables and returns a temporary directory, base.csv
// in it (the first 40 oil-flow rows) and the checkpoint of a small model trained on it.
func trainedSetup(t *testing.T) (dir, base, ck string) {
	t.Helper()
	t.Setenv(data.EnvVar, "")
	t.Setenv("VAISGPLVM_BACKEND", "")
	dir = t.TempDir()
	base = filepath.Join(dir, "base.csv")
	oilflowHead(t, base, 40, false, 1)
	return dir, base, trainSmall(t, base, filepath.Join(dir, "run"))
}

// trainSmall trains a 2-iteration MF model on file into out and returns its checkpoint.
func trainSmall(t *testing.T, file, out string, extra ...string) string {
	t.Helper()
	args := append([]string{"train", "--data", file, "--method", "mf", "--m", "5", "--iters", "2", "--quiet", "--no-figures", "--out", out}, extra...)
	if code, msg := runQuiet(args...); code != 0 {
		t.Fatalf("training %s: exit %d: %s", file, code, msg)
	}
	return filepath.Join(out, "checkpoint.gob")
}

// TestNeverDeletesUserFiles (class 1): no run removes or replaces a file it did not write: an input
// named like an output, a user's picture among a table's figures, files named like temporary ones;
// an interrupted reproduce leaves the previous table as it was.
func TestNeverDeletesUserFiles(t *testing.T) {
	t.Setenv(data.EnvVar, "")
	t.Setenv("VAISGPLVM_BACKEND", "")
	dir := t.TempDir()
	sub := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := filepath.Join(dir, "base.csv")
	oilflowHead(t, base, 40, false, 1)

	a := sub("a") // the data file is named like train's reconstruction
	oilflowHead(t, filepath.Join(a, "reconstruction.csv"), 40, false, 1)
	b := sub("b") // new points named like infer's reconstruction, beside a training run
	ck := trainSmall(t, base, b)
	oilflowHead(t, filepath.Join(b, "infer_reconstruction.csv"), 3, false, 1)
	c := sub("c") // a user's picture named like a table's figures
	if err := os.WriteFile(filepath.Join(c, "latent_mine.png"), []byte("my picture"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := sub("e") // an earlier run, and user files named like temporary files
	trainSmall(t, base, e)
	for _, n := range []string{".tmp-notes", ".ckpt-mine", "photo.png"} {
		if err := os.WriteFile(filepath.Join(e, n), []byte("user's "+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stage := filepath.Join(e, ".vaisgplvm-stage-mine")
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, "keep"), []byte("user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := map[string]map[string]string{}
	for _, d := range []string{a, b, c} {
		before[d] = snapshot(t, d)
	}
	userE := snapshot(t, e)
	table := []string{"reproduce", "--table", "1", "--datasets", "oilflow", "--methods", "mf", "--iters", "3", "--batch", "50", "--m", "5", "--jobs", "1"}
	checkCases(t, []reliabilityCase{
		{"train with its data among its outputs", []string{"train", "--data", filepath.Join(a, "reconstruction.csv"), "--m", "5", "--iters", "2", "--quiet",
			"--no-figures", "--out", a, "--overwrite"}, 2, []string{"--data", "reconstruction.csv", "replace it"}},
		{"infer with its data among its outputs", []string{"infer", "--checkpoint", ck, "--data", filepath.Join(b, "infer_reconstruction.csv"),
			"--iters", "2", "--out", b, "--overwrite"}, 2, []string{"--data", "infer_reconstruction.csv"}},
		{"reproduce over a user's picture", append(table, "--out", c), 2, []string{"latent_mine.png", "not written"}},
		{"train over an earlier run with user files", []string{"train", "--data", base, "--method", "mf", "--m", "5", "--iters", "2", "--quiet",
			"--no-figures", "--out", e, "--overwrite"}, 0, nil},
	})
	for _, d := range []string{a, b, c} {
		after := snapshot(t, d)
		for name, content := range before[d] {
			if after[name] != content {
				t.Errorf("%s: %s changed or was removed", d, name)
			}
		}
	}
	afterE := snapshot(t, e)
	for _, n := range []string{".tmp-notes", ".ckpt-mine", "photo.png", ".vaisgplvm-stage-mine/keep"} {
		if afterE[n] != userE[n] {
			t.Errorf("the user's %s in a training directory was changed or removed: %q", n, afterE[n])
		}
	}

	// SIGINT during reproduce: the previous run of the table stays as it was.
	f := sub("f")
	if code, msg := runQuiet(append(table, "--out", f)...); code != 0 {
		t.Fatalf("reproduce: exit %d: %s", code, msg)
	}
	prev := snapshot(t, f)
	if _, ok := prev["table1.md"]; !ok || len(prev) < 4 {
		t.Fatalf("reproduce wrote %v", prev)
	}
	long := append(append([]string{}, table...), "--out", f, "--overwrite") // another command than the table's
	long[8] = "100000"                                                      // --iters
	code, log := interrupted(t, syscall.SIGINT, long)
	if code != 130 || !strings.Contains(log, "no table written") {
		t.Errorf("interrupted reproduce: exit %d, want 130 saying no table was written; stderr:\n%s", code, log)
	}
	now := snapshot(t, f)
	if len(now) != len(prev) {
		t.Errorf("after the interrupted run the directory holds %d files, before %d", len(now), len(prev))
	}
	for name, content := range prev {
		if now[name] != content {
			t.Errorf("the interrupted reproduce changed or removed the previous %s", name)
		}
	}
}

// damage rewrites the checkpoint at src into dst/checkpoint.gob without the variable named drop.
func damage(t *testing.T, src, dst, drop string) string {
	t.Helper()
	ck := readCkMirror(t, src)
	var kept []varMirror
	for _, v := range ck.Vars {
		if v.Name != drop {
			kept = append(kept, v)
		}
	}
	if drop != "" && len(kept) == len(ck.Vars) {
		t.Fatalf("the checkpoint has no variable %s", drop)
	}
	ck.Vars = kept
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dst, "checkpoint.gob")
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := gob.NewEncoder(w).Encode(&ck); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIncompleteCheckpoint (class 2): a checkpoint without the inducing inputs Z, or without q(u)'s
// mean, is refused by infer, evidence and train --resume, naming the variable; the same checkpoint
// rewritten whole (the mirror of its format) still works.
func TestIncompleteCheckpoint(t *testing.T) {
	dir, base, ck := trainedSetup(t)
	whole := damage(t, ck, filepath.Join(dir, "whole"), "")
	if code, msg := runQuiet("train", "--data", base, "--method", "mf", "--m", "5", "--iters", "3", "--quiet", "--no-figures",
		"--resume", whole, "--out", filepath.Join(dir, "whole")); code != 0 {
		t.Fatalf("resuming the rewritten checkpoint: exit %d: %s (the mirror of the format is out of date?)", code, msg)
	}
	var cases []reliabilityCase
	for _, v := range []string{"z", "q_mu"} {
		bad := damage(t, ck, filepath.Join(dir, "no_"+v), v)
		cases = append(cases,
			reliabilityCase{"infer without " + v, []string{"infer", "--checkpoint", bad, "--data", base, "--iters", "2", "--out", filepath.Join(dir, "i_"+v)}, 1,
				[]string{"incomplete", v}},
			reliabilityCase{"evidence without " + v, []string{"evidence", "--checkpoint", bad, "--temps", "4", "--runs", "2", "--draws", "2",
				"--out", filepath.Join(dir, "e_"+v)}, 1, []string{"incomplete", v}},
			reliabilityCase{"resume without " + v, []string{"train", "--data", base, "--method", "mf", "--m", "5", "--iters", "3", "--quiet",
				"--no-figures", "--resume", bad, "--out", filepath.Dir(bad)}, 1, []string{"incomplete", v}})
	}
	checkCases(t, cases)
}

// TestSizesRefusedBeforeAllocating (classes 3 and 4): sizes that cannot fit in memory, or that
// would run without bound, are refused with exit status 2 naming the flags and the memory, before
// anything is allocated, by every command; settings known to hang are refused or cannot hang.
func TestSizesRefusedBeforeAllocating(t *testing.T) {
	dir, base, ck := trainedSetup(t)
	// A column at the float64 limit: PCA's SVD used to spin forever on it.
	huge := filepath.Join(dir, "huge.csv")
	var hb strings.Builder
	hb.WriteString("a,b,c\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&hb, "%g,%g,%g\n", 1.79e308-float64(i)*1e306, float64(i%7), float64(i%3))
	}
	if err := os.WriteFile(huge, []byte(hb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// A FIFO where $VAISGPLVM_DATA says the oil-flow data is: opening it would block for ever.
	fifoDir := filepath.Join(dir, "fifo")
	if err := os.MkdirAll(filepath.Join(fifoDir, "oilflow"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifoDir, data.OilflowData.Path), 0o644); err != nil {
		t.Fatal(err)
	}
	o := func(n string) string { return filepath.Join(dir, n) }
	checkCases(t, []reliabilityCase{
		{"bench k 100 samples 10000", []string{"bench", "--k", "100", "--samples", "10000", "--methods", "vais", "--iters", "1"}, 2, []string{"GiB", "--samples"}},
		{"reproduce k 100 samples 10000", []string{"reproduce", "--table", "1", "--datasets", "oilflow", "--methods", "vais", "--k", "100", "--samples", "10000",
			"--iters", "3", "--out", o("r")}, 2, []string{"GiB", "--samples"}},
		{"evidence runs 1e8", []string{"evidence", "--checkpoint", ck, "--runs", "100000000", "--temps", "2", "--out", o("ev")}, 2, []string{"GiB", "--runs"}},
		{"evidence draws 1e9", []string{"evidence", "--checkpoint", ck, "--draws", "1000000000", "--out", o("ev")}, 2, []string{"--draws"}},
		{"cmf hidden 1e8", []string{"cmf", "--hidden", "100000000", "--quiet", "--out", o("c1")}, 2, []string{"GiB", "--hidden"}},
		{"cmf input-dim 1e8", []string{"cmf", "--input-dim", "100000000", "--quiet", "--out", o("c2")}, 2, []string{"GiB", "--input-dim"}},
		{"a deadlocking pure-Go backend", []string{"train", "--data", base, "--backend", "go:ops_parallel,parallelism=2", "--out", o("b")}, 2,
			[]string{"deadlock", "parallelism=-1"}},
		{"a column at the float64 limit", []string{"train", "--data", huge, "--m", "5", "--q", "2", "--iters", "2", "--quiet", "--no-figures", "--out", o("h")}, 1,
			[]string{"initial parameters", "--standardize"}},
		{"the same, standardised", []string{"train", "--data", huge, "--standardize", "--m", "5", "--q", "2", "--iters", "2", "--quiet", "--no-figures",
			"--out", o("hs")}, 0, nil},
	})
	t.Run("a FIFO through VAISGPLVM_DATA", func(t *testing.T) {
		t.Setenv(data.EnvVar, fifoDir)
		checkCases(t, []reliabilityCase{{"train", []string{"train", "--dataset", "oilflow", "--iters", "1", "--out", o("fifo")}, 1, []string{"not a regular file"}}})
	})
	// The chains variant needs an annealed checkpoint.
	vck := trainSmall(t, base, o("vais"), "--method", "vais")
	checkCases(t, []reliabilityCase{
		{"evidence chains 1e8", []string{"evidence", "--checkpoint", vck, "--chains", "100000000", "--out", o("ev2")}, 2, []string{"GiB", "--chains"}},
	})
}

// TestExitCodesAndMessages (classes 5 and 8): the exit status follows one rule (2: the command line
// is wrong, checked before any work; 1: what it points at cannot be used, or the run fails), and
// each message says what applies.
func TestExitCodesAndMessages(t *testing.T) {
	dir, base, ck := trainedSetup(t)
	lab := filepath.Join(dir, "lab.csv")
	oilflowHead(t, lab, 40, true, 1)
	utf16 := filepath.Join(dir, "utf16.csv")
	if err := os.WriteFile(utf16, []byte("\xff\xfea\x00,\x00b\x00\n\x001\x00,\x002\x00\n\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := func(n string) string { return filepath.Join(dir, n) }
	checkCases(t, []reliabilityCase{
		{"reproduce on 40 rows lowers M", []string{"reproduce", "--table", "1", "--data", base, "--methods", "mf", "--iters", "3", "--jobs", "1",
			"--no-figures", "--out", o("t1")}, 0, nil},
		{"reproduce on 40 rows with --m 50", []string{"reproduce", "--table", "1", "--data", base, "--m", "50", "--out", o("t2")}, 2, []string{"--m 50", "--m 40 or less"}},
		{"UTF-16 data", []string{"train", "--data", utf16, "--out", o("u")}, 1, []string{"UTF-16", "UTF-8"}},
		{"a class column without --labels", []string{"train", "--data", lab, "--out", o("l")}, 1, []string{"--labels kind"}},
		{"resume below the iterations done", []string{"train", "--data", base, "--method", "mf", "--m", "5", "--iters", "1", "--quiet", "--no-figures",
			"--resume", ck, "--out", filepath.Dir(ck)}, 2, []string{"--iters 1", "2 iterations"}},
		{"float64 run: no --dtype float64 advice", []string{"train", "--data", base, "--m", "5", "--iters", "3", "--lr", "1e300", "--quiet", "--out", o("lr")}, 1,
			[]string{"diverged"}},
		{"bench --m above N", []string{"bench", "--m", "2000", "--methods", "mf", "--iters", "1"}, 2, []string{"--m 2000", "--m 1000 or less"}},
		{"cmf --m above N", []string{"cmf", "--m", "5000", "--quiet", "--out", o("cm")}, 2, []string{"--m = 5000", "<= --m <= N"}},
		{"bench --cpuprofile over a file", []string{"bench", "--methods", "mf", "--iters", "1", "--cpuprofile", base}, 2, []string{"--cpuprofile", "exists"}},
		{"reproduce --converge on table 2", []string{"reproduce", "--table", "2", "--converge", "--out", o("c2")}, 2, []string{"--converge", "--table 1 or 5"}},
		{"reproduce --table 5 --converge --iters", []string{"reproduce", "--table", "5", "--converge", "--iters", "5", "--out", o("c5i")}, 2, []string{"table 5", "leave out --iters"}},
		{"reproduce --table 5 --converge", []string{"reproduce", "--table", "5", "--converge", "--datasets", "oilflow", "--subset", "40", "--methods", "standard,mf",
			"--m", "5", "--recon-iters", "3", "--max-lbfgs-iters", "300", "--out", o("c5")}, 0, nil},
		{"reproduce --converge --iters", []string{"reproduce", "--converge", "--iters", "5", "--out", o("ci")}, 2, []string{"leave out --iters"}},
		{"reproduce --converge on frey", []string{"reproduce", "--converge", "--datasets", "frey", "--out", o("cf")}, 2, []string{"--datasets", "frey"}},
		{"reproduce --max-seconds without --converge", []string{"reproduce", "--max-seconds", "5", "--out", o("cm2")}, 2, []string{"go with --converge"}},
		{"help", []string{"help"}, 0, nil},
		{"-h", []string{"-h"}, 0, nil},
		{"--help", []string{"--help"}, 0, nil},
		{"train -h", []string{"train", "-h"}, 0, nil}, // issue 55: exit 2, "help requested"
		{"reproduce --help", []string{"reproduce", "--help"}, 0, nil},
		{"a missing data file: 1", []string{"train", "--data", o("absent.csv"), "--out", o("m")}, 1, []string{"absent.csv"}},
		{"a bad flag value: 2", []string{"train", "--data", base, "--m", "0", "--out", o("m0")}, 2, []string{"m = 0"}},
	})
	if buf, _ := os.ReadFile(base); !strings.HasPrefix(string(buf), "f1,") {
		t.Errorf("bench --cpuprofile replaced the data file: %.40q", buf)
	}
	if buf, err := os.ReadFile(filepath.Join(o("t1"), "table1.json")); err != nil || !strings.Contains(string(buf), `"m": 40`) {
		t.Errorf("reproduce on 40 rows: table1.json does not record M = 40 (%v): %.300s", err, buf)
	}
	if buf, err := os.ReadFile(filepath.Join(o("c5"), "table5.md")); err != nil || !strings.Contains(string(buf), "to convergence: ") {
		t.Errorf("reproduce --table 5 --converge: table5.md does not say its fits ran to convergence (%v): %.300s", err, buf)
	}
	if _, msg := runQuiet("train", "--data", base, "--m", "5", "--iters", "3", "--lr", "1e300", "--quiet", "--out", o("lr2")); strings.Contains(msg, "--dtype float64") {
		t.Errorf("a float64 run is advised --dtype float64: %s", msg)
	}
	// SIGTERM during evidence: a message and exit status 130, not a silent 143.
	code, log := interrupted(t, syscall.SIGTERM, []string{"evidence", "--checkpoint", ck, "--temps", "1000000", "--runs", "2", "--out", o("ev")})
	if code != 130 || !strings.Contains(log, "evidence interrupted") || !strings.Contains(log, "nothing written") {
		t.Errorf("SIGTERM during evidence: exit %d; stderr:\n%s", code, log)
	}
}

// TestInferMatchesColumnsByName (class 6): new points whose columns are reordered give the same
// latents as in the training order; the label column is accepted and ignored; a renamed or unknown
// column is refused naming it.
func TestInferMatchesColumnsByName(t *testing.T) {
	t.Setenv(data.EnvVar, "")
	t.Setenv("VAISGPLVM_BACKEND", "")
	dir := t.TempDir()
	lab := filepath.Join(dir, "lab.csv")
	oilflowHead(t, lab, 40, true, 1)
	ck := trainSmall(t, lab, filepath.Join(dir, "run"), "--labels", "kind")
	buf, err := os.ReadFile(lab)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(buf)), "\n")[:4]
	write := func(name string, perm func([]string) []string) string {
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(strings.Join(perm(strings.Split(l, ",")), ",") + "\n")
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	same := write("same.csv", func(f []string) []string { return f })
	reversed := write("reversed.csv", func(f []string) []string {
		r := make([]string, len(f))
		for i := range f {
			r[len(f)-1-i] = f[i]
		}
		return r
	})
	renamed := write("renamed.csv", func(f []string) []string {
		g := append([]string{}, f...)
		if g[0] == "f1" {
			g[0] = "F1"
		}
		return g
	})
	infer := func(file, out string) (int, string) {
		return runQuiet("infer", "--checkpoint", ck, "--data", file, "--iters", "3", "--out", filepath.Join(dir, out))
	}
	for _, c := range []struct{ file, out string }{{same, "same"}, {reversed, "reversed"}} {
		if code, msg := infer(c.file, c.out); code != 0 {
			t.Fatalf("infer on %s: exit %d: %s", c.file, code, msg)
		}
	}
	for _, f := range []string{"infer_latent_means.csv", "infer_reconstruction.csv"} {
		a, _ := os.ReadFile(filepath.Join(dir, "same", f))
		b, _ := os.ReadFile(filepath.Join(dir, "reversed", f))
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s differs between the training order and the reversed columns:\n%s\nvs\n%s", f, a, b)
		}
	}
	rec, _ := os.ReadFile(filepath.Join(dir, "reversed", "infer_reconstruction.csv"))
	if !strings.HasPrefix(string(rec), "f1,f2,") {
		t.Errorf("the reconstruction's header is not the training order: %.40q", rec)
	}
	if code, msg := infer(renamed, "renamed"); code != 1 || !strings.Contains(msg, `"F1"`) || !strings.Contains(msg, "f1, f2") {
		t.Errorf("infer on a renamed column: exit %d, %s; want 1 naming F1 and the training columns", code, msg)
	}
}
