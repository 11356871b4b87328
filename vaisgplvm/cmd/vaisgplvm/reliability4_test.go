package main

// The reliability issue's fourth round (issue 72): reproduce's job store (--out DIR keeps each
// finished training in DIR/jobs/), --checkpoints, --from and the lock, tried as a hostile user
// would. Each test goes through the command's run(); every case failed on the code before the fix.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// storeRun is a small reproduce --table 1 on ownData's file (40 points, labels): its arguments with
// --out out and extra.
func storeRun(file, out string, extra ...string) []string {
	return append([]string{"reproduce", "--table", "1", "--data", file, "--labels", "kind", "--iters", "3", "--batch", "20",
		"--m", "6", "--k", "2", "--methods", "mf,vais", "--jobs", "1", "--no-figures", "--out", out}, extra...)
}

// tableRows reads out/table1.json's rows.
func tableRows(t *testing.T, out string) []paper.Row {
	t.Helper()
	var res paper.Result
	buf, err := os.ReadFile(filepath.Join(out, "table1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf, &res); err != nil {
		t.Fatal(err)
	}
	return res.Rows
}

// storedFirstRun runs storeRun into dir/run and returns the data file, the run's directory, its
// stored trainings and its rows.
func storedFirstRun(t *testing.T) (file, out string, jobs []string, rows []paper.Row) {
	t.Helper()
	dir := t.TempDir()
	file, _ = ownData(t, dir, 40)
	out = filepath.Join(dir, "run")
	if code, msg := runQuiet(storeRun(file, out)...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, msg)
	}
	jobs, _ = filepath.Glob(filepath.Join(out, "jobs", "*.gob"))
	if len(jobs) != 2 {
		t.Fatalf("the store holds %v, want 2 trainings", jobs)
	}
	return file, out, jobs, tableRows(t, out)
}

// sameRows fails the test unless got and want are the same rows (all values, seconds aside).
func sameRows(t *testing.T, what string, got, want []paper.Row) {
	t.Helper()
	strip := func(rows []paper.Row) []paper.Row {
		out := make([]paper.Row, len(rows))
		for i, r := range rows {
			r.SecPerIter = 0
			out[i] = r
		}
		return out
	}
	if !reflect.DeepEqual(strip(got), strip(want)) {
		t.Errorf("%s: rows differ from the first run's", what)
	}
}

// TestDamagedStoredTraining (case 1): a stored training with a flipped byte, an edited value or
// its evaluations cut off is never read back: the run names the file in one line, trains it again
// and ends with the first run's rows; a table made --from such a store is refused (exit 1) naming
// the file. Before the fix a flipped byte inside the values was read back and the rows differed.
func TestDamagedStoredTraining(t *testing.T) {
	file, out, jobs, rows := storedFirstRun(t)
	intact, err := os.ReadFile(jobs[1])
	if err != nil {
		t.Fatal(err)
	}
	damages := map[string]func([]byte) []byte{
		"flipped byte in the values": func(b []byte) []byte { b[len(b)-200] ^= 1 << 2; return b },
		"edited value": func(b []byte) []byte {
			i := bytes.LastIndexByte(b, 0x40)
			b[i] = 0x41
			return b
		},
		"evaluations cut off": func(b []byte) []byte { return b[:len(b)*2/3] },
		"seal line only":      func(b []byte) []byte { return b[:bytes.IndexByte(b, '\n')+1] },
	}
	for name, damage := range damages {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			if err := os.WriteFile(jobs[1], damage(bytes.Clone(intact)), 0o644); err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(t.TempDir(), "table")
			code, msg := runQuiet("reproduce", "--table", "1", "--data", file, "--labels", "kind", "--iters", "3", "--batch", "20",
				"--m", "6", "--k", "2", "--methods", "mf,vais", "--jobs", "1", "--no-figures", "--from", out, "--out", other)
			if code != 1 || !strings.Contains(msg, jobs[1]) || !strings.Contains(msg, "intact") {
				t.Errorf("--from the damaged store: exit %d, %q; want 1 naming %s", code, msg, jobs[1])
			}
			code, msg = runPrinting(t, storeRun(file, out))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, msg)
			}
			if !strings.Contains(msg, jobs[1]+": damaged") || !strings.Contains(msg, "training it again") || !strings.Contains(msg, "1 of 2 trainings read back") {
				t.Errorf("stderr %q: want the damaged file named, trained again, the other read back", msg)
			}
			sameRows(t, name, tableRows(t, out), rows)
		})
	}
}

// TestStoreNeverWritesOthersFiles (case 2): reproduce --from DIR --out OTHER writes nothing into DIR,
// even with a stored training in an older layout there (it was upgraded in place); reproduce --fresh
// --checkpoints DIR --overwrite never replaces a user's file at a checkpoint's name (it did).
func TestStoreNeverWritesOthersFiles(t *testing.T) {
	file, out, jobs, _ := storedFirstRun(t)
	buf, err := os.ReadFile(jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	old := buf[bytes.IndexByte(buf, '\n')+1:] // the payload without its seal: the older layout
	if err := os.WriteFile(jobs[0], old, 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, out)
	other := filepath.Join(t.TempDir(), "other")
	code, msg := runQuiet("reproduce", "--table", "1", "--data", file, "--labels", "kind", "--iters", "3", "--batch", "20",
		"--m", "6", "--k", "2", "--methods", "mf,vais", "--jobs", "1", "--no-figures", "--from", out, "--out", other)
	if code != 1 || !strings.Contains(msg, "without a checksum") {
		t.Errorf("--from a store with an older-layout file: exit %d, %q; want 1 saying it has no checksum", code, msg)
	}
	if after := snapshot(t, out); !reflect.DeepEqual(before, after) {
		t.Errorf("--from changed files in %s: before %v, after %v", out, before, after)
	}

	ckdir := filepath.Join(t.TempDir(), "ck")
	if code, msg := runQuiet(storeRun(file, filepath.Join(t.TempDir(), "a"), "--checkpoints", ckdir)...); code != 0 {
		t.Fatalf("--checkpoints: exit %d: %s", code, msg)
	}
	cks, _ := filepath.Glob(filepath.Join(ckdir, "*.checkpoint.gob"))
	if len(cks) != 2 {
		t.Fatalf("checkpoints %v, want 2", cks)
	}
	mine := []byte("a user's notes\n")
	if err := os.WriteFile(cks[0], mine, 0o644); err != nil {
		t.Fatal(err)
	}
	code, msg = runQuiet(storeRun(file, filepath.Join(t.TempDir(), "b"), "--fresh", "--checkpoints", ckdir, "--overwrite")...)
	if code != 1 || !strings.Contains(msg, cks[0]) || !strings.Contains(msg, "not a checkpoint this command wrote") {
		t.Errorf("--fresh --checkpoints over a user's file: exit %d, %q; want 1 naming it", code, msg)
	}
	if got, _ := os.ReadFile(cks[0]); !bytes.Equal(got, mine) {
		t.Errorf("the user's file at %s was replaced", cks[0])
	}
	// A checkpoint of the command's own at that name is replaced (the same training, trained again).
	if err := os.Remove(cks[0]); err != nil {
		t.Fatal(err)
	}
	if code, msg := runQuiet(storeRun(file, filepath.Join(t.TempDir(), "d"), "--fresh", "--checkpoints", ckdir)...); code != 0 {
		t.Errorf("--fresh over the command's own checkpoints: exit %d: %s", code, msg)
	}
}

// TestStoreKeyCoversLabels (case 3): with the label column of the data file rewritten (numbers
// unchanged) no stored training is read back, and the table's rows are those of a fresh run on the
// new file. Before the fix all were read back with the old labels' 1-NN errors.
func TestStoreKeyCoversLabels(t *testing.T) {
	file, out, _, _ := storedFirstRun(t)
	buf, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(buf), "\n")
	for i := 1; i < len(lines); i++ {
		if i%3 == 0 {
			lines[i] = strings.Replace(strings.Replace(strings.Replace(lines[i], ",ctrl,", ",x,", 1), ",case,", ",ctrl,", 1), ",x,", ",case,", 1)
		}
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, msg := runPrinting(t, storeRun(file, out))
	if code != 0 || strings.Contains(msg, "read back") {
		t.Fatalf("after the labels changed: exit %d, %q; want every training done again", code, msg)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	if code, msg := runQuiet(storeRun(file, fresh)...); code != 0 {
		t.Fatalf("fresh run: exit %d: %s", code, msg)
	}
	sameRows(t, "after the labels changed", tableRows(t, out), tableRows(t, fresh))
}

// TestStorePathsChecked (cases 4 and 5): a dangling symbolic link at the lock's name fails at once
// (it hung); every directory argument is checked before any training, with one line saying what is
// wrong: --checkpoints empty, a file or under a file is a usage error (it exited 0, or trained
// everything and then failed); a stored training's name that is a directory, a jobs/ that is a
// file or a dangling link end the run (exit 1) in one line naming it.
func TestStorePathsChecked(t *testing.T) {
	file, _, jobs, _ := storedFirstRun(t)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(dir, "locked")
	if err := os.MkdirAll(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(locked, rundir.LockName)); err != nil {
		t.Fatal(err)
	}
	jobDir := filepath.Join(dir, "jobdir")
	if err := os.MkdirAll(filepath.Join(jobDir, "jobs", filepath.Base(jobs[0])), 0o755); err != nil {
		t.Fatal(err)
	}
	jobsFile := filepath.Join(dir, "jobsfile")
	if err := os.MkdirAll(jobsFile, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jobsFile, "jobs"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.MkdirAll(dangling, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dangling, "jobs")); err != nil {
		t.Fatal(err)
	}
	checkCases(t, []reliabilityCase{
		{"dangling lock", storeRun(file, locked), 2, []string{rundir.LockName, "symbolic link"}},
		{"checkpoints empty", storeRun(file, filepath.Join(dir, "o1"), "--checkpoints", ""), 2, []string{"--checkpoints", "empty"}},
		{"checkpoints a file", storeRun(file, filepath.Join(dir, "o2"), "--checkpoints", plain), 2, []string{"--checkpoints", plain}},
		{"checkpoints under a file", storeRun(file, filepath.Join(dir, "o3"), "--checkpoints", filepath.Join(plain, "sub")), 2, []string{"--checkpoints", plain}},
		{"job path a directory", storeRun(file, jobDir), 1, []string{filepath.Base(jobs[0]), "directory", "not a stored training"}},
		{"jobs a file", storeRun(file, jobsFile), 1, []string{filepath.Join(jobsFile, "jobs"), "a file, not the directory of stored trainings"}},
		{"jobs a dangling link", storeRun(file, dangling), 1, []string{filepath.Join(dangling, "jobs"), "leads nowhere"}},
	})
	for _, d := range []string{"o2", "o3"} {
		if _, err := os.Stat(filepath.Join(dir, d, "table1.json")); err == nil {
			t.Errorf("%s: a table was written despite a bad --checkpoints", d)
		}
	}
}
