package rundir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// write creates file name in dir with content.
func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// read returns the content of file name in dir ("<absent>" when it does not exist).
func read(dir, name string) string {
	buf, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "<absent>"
	}
	return string(buf)
}

// visible lists the entries of dir that are not the package's own bookkeeping (lock, manifests).
func visible(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); n != LockName && !strings.HasPrefix(n, ".vaisgplvm-manifest-") {
			out = append(out, n)
		}
	}
	return out
}

// run opens dir for a train-like run, writes each file of files and commits.
func run(t *testing.T, dir string, names []string, opt Options, files map[string]string) {
	t.Helper()
	d, err := Open(dir, names, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for n, c := range files {
		if err := d.WriteFile(n, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
}

var names = []string{"metrics.json", "curve.csv", "latent_*.png"}

// TestOpenRule: a directory with another run's outputs is refused (and left as it was), replaced
// only on request, accepted for a resume; a second run is locked out while the first holds it.
func TestOpenRule(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	d, err := Open(dir, names, Options{Run: "train"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, names, Options{Run: "train"}); !errors.Is(err, ErrInUse) {
		t.Errorf("second Open while the first holds the lock: %v, want ErrInUse", err)
	}
	if err := d.WriteFile("metrics.json", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if got := read(dir, "metrics.json"); got != "<absent>" {
		t.Errorf("before Commit metrics.json is %q, want it still staged", got)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if got := read(dir, "metrics.json"); got != "first" {
		t.Errorf("after Commit metrics.json is %q", got)
	}

	_, err = Open(dir, names, Options{Run: "train"})
	var ue *option.Error
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "metrics.json") || !strings.Contains(err.Error(), "Overwrite") || ue.Field() != "Out" {
		t.Errorf("directory with an earlier run: %v, want an *option.Error about Out naming metrics.json and Overwrite", err)
	}
	// Other names (another command's outputs) do not count.
	run(t, dir, []string{"infer.json"}, Options{Run: "infer"}, map[string]string{"infer.json": "i"})
	run(t, dir, names, Options{Run: "train", Resume: true}, map[string]string{"metrics.json": "resumed"})
	run(t, dir, names, Options{Run: "train", Overwrite: true}, map[string]string{"curve.csv": "second"})
	if got := visible(t, dir); strings.Join(got, " ") != "curve.csv infer.json" {
		t.Errorf("after overwriting, the directory holds %v, want the new run's curve.csv and infer's file", got)
	}
}

// TestNeverRemovesForeign: files that match an output name but that no run of this kind wrote
// (a user's picture, another kind's output, an output edited since) are refused, not removed, with
// Overwrite and Resume too; files that match no output name are never touched.
func TestNeverRemovesForeign(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "latent_mine.png", "user's picture")
	write(t, dir, "notes.txt", "user's notes")
	write(t, dir, ".tmp-keep", "a user's file named like a temporary file")
	for _, opt := range []Options{{Run: "train", Overwrite: true}, {Run: "train", Resume: true}, {Run: "table1", Overwrite: true}} {
		_, err := Open(dir, names, opt)
		var ue *option.Error
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "latent_mine.png") || !strings.Contains(err.Error(), "not written") {
			t.Errorf("%+v over a user's file: %v, want a refusal naming it", opt, err)
		}
	}
	for n, want := range map[string]string{"latent_mine.png": "user's picture", "notes.txt": "user's notes", ".tmp-keep": "a user's file named like a temporary file"} {
		if got := read(dir, n); got != want {
			t.Errorf("%s is %q, want %q", n, got, want)
		}
	}
	// An output of a run edited afterwards is no longer provably the run's.
	own := t.TempDir()
	run(t, own, names, Options{Run: "train"}, map[string]string{"metrics.json": "m", "latent_a.png": "a"})
	write(t, own, "latent_a.png", "edited by the user")
	if _, err := Open(own, names, Options{Run: "train", Overwrite: true}); err == nil || !strings.Contains(err.Error(), "latent_a.png") {
		t.Errorf("overwrite over an edited output: %v, want a refusal naming latent_a.png", err)
	}
	// A run of another kind cannot replace them either.
	run(t, own, []string{"other.json"}, Options{Run: "evidence"}, map[string]string{"other.json": "e"})
	if _, err := Open(own, []string{"metrics.json"}, Options{Run: "evidence", Overwrite: true}); err == nil {
		t.Error("an evidence run replaced train's metrics.json")
	}
}

// TestInputAmongOutputs: an input of the run that lies in the directory under one of its output
// names is refused before anything happens, whatever the options.
func TestInputAmongOutputs(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, names, Options{Run: "train"}, map[string]string{"curve.csv": "an earlier run's curve, now the user's data"})
	data := filepath.Join(dir, "curve.csv")
	for _, opt := range []Options{{Run: "train", Overwrite: true}, {Run: "train", Resume: true}, {Run: "train"}} {
		opt.Inputs = map[string]string{"--data": data}
		_, err := Open(dir, names, opt)
		if err == nil || !strings.Contains(err.Error(), "--data") || !strings.Contains(err.Error(), "replace it") {
			t.Errorf("%+v with --data among the outputs: %v, want a refusal naming --data", opt, err)
		}
	}
	if got := read(dir, "curve.csv"); got != "an earlier run's curve, now the user's data" {
		t.Errorf("the input was changed: %q", got)
	}
	// Through a symbolic link too.
	link := filepath.Join(t.TempDir(), "link.csv")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir, names, Options{Run: "train", Overwrite: true, Inputs: map[string]string{"--data": link}})
	if err == nil {
		if err := d.WriteFile("curve.csv", []byte("new")); err != nil {
			t.Fatal(err)
		}
		if err := d.Commit(); err == nil {
			t.Error("an input reached through a link was replaced")
		}
		d.Close()
	}
	if got := read(dir, "curve.csv"); got != "an earlier run's curve, now the user's data" {
		t.Errorf("the linked input was changed: %q", got)
	}
}

// TestUncommittedLeavesDirAsItWas: a run that stops before Commit (an error, SIGINT) leaves the
// predecessor's outputs as they were and no staging directory.
func TestUncommittedLeavesDirAsItWas(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, names, Options{Run: "table1"}, map[string]string{"metrics.json": "old", "latent_a.png": "old a"})
	d, err := Open(dir, names, Options{Run: "table1", Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("metrics.json", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if moved, err := d.Promote("metrics.json"); moved || err != nil {
		t.Errorf("Promote over a predecessor's outputs: moved %v, %v; want it kept staged", moved, err)
	}
	d.Close()
	if got := strings.Join(visible(t, dir), " "); got != "latent_a.png metrics.json" {
		t.Errorf("directory after an uncommitted run: %s", got)
	}
	if read(dir, "metrics.json") != "old" || read(dir, "latent_a.png") != "old a" {
		t.Error("an uncommitted run changed the predecessor's outputs")
	}
}

// TestCommitReplacesPredecessor: Commit removes the predecessor's outputs that this run did not
// rewrite (so one run's outputs never mix with another's), and nothing else.
func TestCommitReplacesPredecessor(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, names, Options{Run: "train"}, map[string]string{"metrics.json": "old", "latent_a.png": "a", "latent_b.png": "b"})
	write(t, dir, "mine.txt", "user")
	run(t, dir, names, Options{Run: "train", Overwrite: true}, map[string]string{"metrics.json": "new", "latent_c.png": "c"})
	if got := strings.Join(visible(t, dir), " "); got != "latent_c.png metrics.json mine.txt" {
		t.Errorf("after the second run: %s", got)
	}
	// The second run's files are provably its own: a third run replaces them.
	run(t, dir, names, Options{Run: "train", Overwrite: true}, map[string]string{"metrics.json": "third"})
	if got := strings.Join(visible(t, dir), " "); got != "metrics.json mine.txt" || read(dir, "metrics.json") != "third" {
		t.Errorf("after the third run: %s", got)
	}
}

// TestPromote: into a fresh directory a promoted file is in place at once and stays, provably the
// run's, when the run then stops without Commit (kill -9 after a checkpoint).
func TestPromote(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, []string{"checkpoint.gob", "metrics.json"}, Options{Run: "train"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("checkpoint.gob", []byte("iteration 500")); err != nil {
		t.Fatal(err)
	}
	if moved, err := d.Promote("checkpoint.gob"); !moved || err != nil {
		t.Fatalf("Promote into a fresh directory: %v %v", moved, err)
	}
	if got := read(dir, "checkpoint.gob"); got != "iteration 500" {
		t.Errorf("promoted checkpoint: %q", got)
	}
	d.Close()
	run(t, dir, []string{"checkpoint.gob", "metrics.json"}, Options{Run: "train", Overwrite: true}, map[string]string{"metrics.json": "m"})
	if got := strings.Join(visible(t, dir), " "); got != "metrics.json" {
		t.Errorf("after overwriting the killed run: %s", got)
	}
}

// TestStaleStaging: a killed run's staging directory (with the marker) is removed by the next
// Open; a directory that merely has the same kind of name is not.
func TestStaleStaging(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, names, Options{Run: "train"})
	if err != nil {
		t.Fatal(err)
	}
	stage := d.Stage
	if err := d.WriteFile("metrics.json", []byte("partial")); err != nil {
		t.Fatal(err)
	}
	unlock(d.lock, d.lockOwn) // as if killed: the lock goes, the staging directory stays
	d.lock.Close()
	d.lock = nil
	fake := filepath.Join(dir, stagePrefix+"users")
	if err := os.Mkdir(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, fake, "keep", "user")
	d2, err := Open(dir, names, Options{Run: "train"})
	if err != nil {
		t.Fatal(err)
	}
	d2.Close()
	if _, err := os.Stat(stage); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed run's staging directory is left: %v", err)
	}
	if read(fake, "keep") != "user" {
		t.Error("a directory named like a staging directory, without the marker, was removed")
	}
}

// TestOpenUncreatable: a directory that cannot be created is an error naming the flag, before
// anything else happens.
func TestOpenUncreatable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(file, "sub"), nil, Options{Run: "train", Flag: "--out"}); err == nil || !strings.HasPrefix(err.Error(), "--out ") {
		t.Errorf("uncreatable directory: %v", err)
	}
}

// TestLockFileGoes: a run holds the lock file while open (a second Open fails with ErrInUse) and
// removes it when it closes, after a commit as after a failure; a directory that Open created and
// the run left empty goes too, one that existed before stays; the next run locks again.
func TestLockFileGoes(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "new")
	d, err := Open(dir, []string{"a.txt"}, Options{Run: "train"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockName)); err != nil {
		t.Fatalf("no lock file while the run is open: %v", err)
	}
	if _, err := Open(dir, []string{"a.txt"}, Options{Run: "train"}); !errors.Is(err, ErrInUse) {
		t.Errorf("second Open while the first holds the lock: %v, want ErrInUse", err)
	}
	d.Close() // failed before writing anything
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the run created %s and left it empty; Close kept it (%v)", dir, err)
	}
	run(t, dir, []string{"a.txt"}, Options{Run: "train"}, map[string]string{"a.txt": "1"})
	if _, err := os.Stat(filepath.Join(dir, LockName)); !os.IsNotExist(err) {
		t.Errorf("lock file after a committed run: %v, want none", err)
	}
	if got := read(dir, "a.txt"); got != "1" {
		t.Errorf("a.txt = %q after the run", got)
	}
	old := t.TempDir() // exists before the run: stays even when the run leaves it empty
	d, err = Open(old, []string{"a.txt"}, Options{Run: "train"})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := os.Stat(old); err != nil {
		t.Errorf("a directory that existed before the run went: %v", err)
	}
	if d, err = Open(old, []string{"a.txt"}, Options{Run: "train"}); err != nil {
		t.Errorf("Open after Close: %v", err)
	} else {
		d.Close()
	}
}

// TestLeaveKeepsFinishedRun (issue 50, class 1): a run that does not finish, into a directory
// holding a finished run (--overwrite), leaves its partial files beside the finished run's, which
// keep their content and stay provably the finished run's; the next finished run replaces them
// all and removes the partial files. Before Leave existed, the failure path committed and removed
// the predecessor's files.
func TestLeaveKeepsFinishedRun(t *testing.T) {
	dir := t.TempDir()
	outs := []string{"checkpoint.gob", "metrics.json", "curve.csv", "checkpoint.partial.gob", "curve.partial.csv"}
	partial := []string{"checkpoint.partial.gob", "curve.partial.csv"}
	opt := Options{Run: "train", Partial: partial}
	run(t, dir, outs, opt, map[string]string{"checkpoint.gob": "good", "metrics.json": "m", "curve.csv": "c"})

	opt.Overwrite = true
	d, err := Open(dir, outs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("checkpoint.partial.gob", []byte("iteration 500")); err != nil {
		t.Fatal(err)
	}
	if moved, err := d.Promote("checkpoint.partial.gob"); !moved || err != nil {
		t.Fatalf("Promote of a partial name over a finished run: %v %v, want it moved", moved, err)
	}
	if moved, _ := d.Promote("metrics.json"); moved {
		t.Error("Promote of a finished name over a finished run moved it")
	}
	for n, c := range map[string]string{"metrics.json": "diverged", "curve.partial.csv": "1 row"} {
		if err := d.WriteFile(n, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Leave("metrics.json"); err == nil {
		t.Error("Leave of a finished output name: no error")
	}
	if err := d.Leave("curve.partial.csv"); err != nil {
		t.Fatal(err)
	}
	d.Close()
	want := map[string]string{"checkpoint.gob": "good", "metrics.json": "m", "curve.csv": "c",
		"checkpoint.partial.gob": "iteration 500", "curve.partial.csv": "1 row"}
	for n, c := range want {
		if got := read(dir, n); got != c {
			t.Errorf("after the unfinished run %s = %q, want %q", n, got, c)
		}
	}
	if got := len(visible(t, dir)); got != len(want) {
		t.Errorf("directory holds %v", visible(t, dir))
	}
	run(t, dir, outs, opt, map[string]string{"checkpoint.gob": "new", "metrics.json": "m2"})
	if got := strings.Join(visible(t, dir), " "); got != "checkpoint.gob metrics.json" {
		t.Errorf("after a finished run replaced both: %s", got)
	}
}

// TestFinishedRunRemovesOwnPartial: a run that promoted its periodic partial checkpoint and then
// finished leaves only its finished outputs.
func TestFinishedRunRemovesOwnPartial(t *testing.T) {
	dir := t.TempDir()
	outs := []string{"checkpoint.gob", "checkpoint.partial.gob"}
	d, err := Open(dir, outs, Options{Run: "train", Partial: outs[1:]})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, n := range outs {
		if err := d.WriteFile(n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Promote("checkpoint.partial.gob"); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(visible(t, dir), " "); got != "checkpoint.gob" {
		t.Errorf("after the finished run: %s", got)
	}
}

// TestUserLockFileKept (issue 50, class 1): a user's file named like the lock file is locked but
// neither written to nor removed; the package's own lock file still goes.
func TestUserLockFileKept(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, LockName, "my notes")
	run(t, dir, []string{"a.txt"}, Options{Run: "train"}, map[string]string{"a.txt": "1"})
	if got := read(dir, LockName); got != "my notes" {
		t.Errorf("the user's %s after a run: %q", LockName, got)
	}
	other := t.TempDir()
	run(t, other, []string{"a.txt"}, Options{Run: "train"}, map[string]string{"a.txt": "1"})
	if got := read(other, LockName); got != "<absent>" {
		t.Errorf("the run's own lock file stayed: %q", got)
	}
}

// TestSeal: Unseal returns what Seal sealed; every single-bit flip anywhere in a sealed file is
// ErrDamaged or ErrUnsealed (never a payload); a file without a seal line is ErrUnsealed.
func TestSeal(t *testing.T) {
	payload := []byte("some payload\x00\x01 of a stored training")
	sealed := Seal("stored-training", payload)
	got, err := Unseal("stored-training", sealed)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("Unseal(Seal(p)) = %q, %v", got, err)
	}
	for i := range sealed {
		for bit := range 8 {
			b := bytes.Clone(sealed)
			b[i] ^= 1 << bit
			if _, err := Unseal("stored-training", b); !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrUnsealed) {
				t.Fatalf("bit %d of byte %d flipped: %v, want ErrDamaged or ErrUnsealed", bit, i, err)
			}
		}
	}
	if _, err := Unseal("stored-training", payload); !errors.Is(err, ErrUnsealed) {
		t.Errorf("an unsealed file: %v, want ErrUnsealed", err)
	}
	if _, err := Unseal("stored-fit", sealed); !errors.Is(err, ErrDamaged) {
		t.Errorf("a file of another kind: %v, want ErrDamaged", err)
	}
	if _, err := Unseal("stored-training", sealed[:len(sealed)-1]); !errors.Is(err, ErrDamaged) {
		t.Errorf("a truncated file: %v, want ErrDamaged", err)
	}
}

// TestLockPathNotAFile: Open fails at once, naming the lock, when a dangling symbolic link, a link
// to a file or a directory stands at the lock's name; before the fix a dangling link made it wait
// forever.
func TestLockPathNotAFile(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(lock string) error
	}{
		{"dangling symlink", func(lock string) error { return os.Symlink(filepath.Join(filepath.Dir(lock), "nowhere"), lock) }},
		{"symlink to a file", func(lock string) error {
			target := filepath.Join(filepath.Dir(lock), "target")
			if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
				return err
			}
			return os.Symlink(target, lock)
		}},
		{"directory", func(lock string) error { return os.Mkdir(lock, 0o755) }},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			lock := filepath.Join(dir, LockName)
			if err := c.make(lock); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				d, err := Open(dir, []string{"out.txt"}, Options{Run: "test"})
				if d != nil {
					d.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), lock) {
					t.Errorf("Open: %v, want an error naming %s", err, lock)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Open did not return in 10 s")
			}
			if _, err := os.Lstat(lock); err != nil {
				t.Errorf("the thing at the lock's name was removed: %v", err)
			}
		})
	}
}
