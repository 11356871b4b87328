// Package rundir is the output-directory rule of the vaisgplvm command: one run's outputs never
// mix with another's, and a run never removes or replaces a file it cannot prove it wrote.
//
//   - A run names its output files up front (exact names or filepath.Match patterns) and the kind of
//     run it is (Options.Run: "train", "infer", "table1", ...). Open refuses a directory that already
//     holds any of them unless the run overwrites (Options.Overwrite) or resumes (Options.Resume).
//   - Proof of authorship is the run kind's manifest, DIR/.vaisgplvm-manifest-RUN.json, listing the
//     exact names and sha256 of the files runs of that kind put there. Even with Overwrite or
//     Resume, Open refuses when a file matching an output name is not in the manifest with its
//     current content (a user's file, another command's output, a file edited since): nothing is
//     removed, and the error names the files.
//   - An input of the run (Options.Inputs: --data, --checkpoint, ...) that is also one of its output
//     names in DIR is refused before anything is read: writing would destroy the data being read.
//   - Outputs are written into a fresh staging directory inside DIR (.vaisgplvm-stage-*, marked by
//     a file inside it) and moved into place by Commit, each by an atomic rename; only then are the
//     predecessor's files that this run did not rewrite removed, and only those whose content still
//     matches its manifest. A run that stops before Commit (an error, SIGINT) leaves DIR as it was.
//   - A run that does not finish (an error, SIGINT, a full disk) never removes or replaces a file of
//     its predecessor's finished outputs. What it leaves to be resumed goes beside them under the
//     names Options.Partial lists (train: checkpoint.partial.gob, curve.partial.csv), which no
//     finished run writes: Leave puts them in place and touches nothing else; the next finished run
//     of the kind removes them.
//   - Promote moves files into place during the run (train's periodic checkpoint, so that kill -9
//     leaves a resumable run), but only where that mixes with nothing: a partial name (it replaces
//     at most an earlier unfinished run's partial file, which --overwrite or the resume allowed), or
//     into a directory without a predecessor's outputs, or on a resume.
//   - The directory is locked (an advisory flock on DIR/.vaisgplvm.lock) while the run holds it: a
//     second run into the same directory fails at once, naming the lock. Close removes the lock
//     file when a run created it (it holds the package's text; a user's file of that name is never
//     written or removed), and a directory the run created and left empty (a run that failed
//     before writing); the lock goes with the process also after kill -9, which leaves the lock
//     file; the staging directories that killed runs leave (recognised by their marker file, not by
//     name alone) are removed by the next Open.
package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// LockName is the lock file Open creates in the directory.
const LockName = ".vaisgplvm.lock"

// lockText is the content of a lock file a run created: only such a file is removed by Close.
const lockText = "vaisgplvm: a run holds this directory while this file is locked\n"

// isLockText reports whether the open file f holds exactly lockText.
func isLockText(f *os.File) bool {
	buf := make([]byte, len(lockText)+1)
	n, _ := f.ReadAt(buf, 0)
	return string(buf[:n]) == lockText
}

// stagePrefix starts the names of staging directories; stageMarker is the file inside one that
// proves it was made by Open, with markerText as its content.
const (
	stagePrefix = ".vaisgplvm-stage-"
	stageMarker = ".vaisgplvm-stage"
	markerText  = "vaisgplvm staging directory: outputs of a run not yet moved into place\n"
)

// Options tune Open.
type Options struct {
	// Run names the kind of run (e.g. "train", "infer", "evidence", "table1", "cmf"): runs of one
	// kind share a manifest, so a run may replace its predecessor's files. Required.
	Run string
	// Overwrite replaces the outputs of an earlier run of the same kind instead of refusing.
	Overwrite bool
	// Resume accepts a directory holding an earlier run's outputs: this run continues it and
	// replaces them. ResumeFile, when set, is the checkpoint resumed: it counts as this run's own.
	Resume     bool
	ResumeFile string
	// Inputs are the files the run reads, by flag name ("--data": path). One that is also an output
	// name in the directory is refused.
	Inputs map[string]string
	// Flag names the directory's setting in errors (default "Out", which a command maps to its
	// flag, e.g. --out).
	Flag string
	// Partial lists the output names (among those given to Open) that only a run which did not
	// finish writes: its resumable state. Leave places them; Promote always may; a finished run's
	// Commit removes them.
	Partial []string
}

// Dir is an output directory held by one run.
type Dir struct {
	// Path is the output directory; Stage the staging directory inside it where outputs are
	// written until Commit.
	Path, Stage string

	lock      *os.File
	lockOwn   bool // the lock file is the package's (Close removes it)
	created   bool // Open created Path (Close removes it when the run left it empty)
	names     []string
	opt       Options
	live      bool                // Promote moves files into place at once
	before    map[string][]string // the manifest as Open found it
	written   map[string]string   // files this run put in place: name -> sha256
	committed bool
}

// ErrInUse is returned (wrapped) when another process holds the directory's lock.
var ErrInUse = errors.New("another run is writing this directory")

// Open creates dir when needed, locks it, removes the staging directories of killed runs, checks
// the run's inputs and the files already there against names (the run's output files) as the
// package comment says, and makes a fresh staging directory. Errors name the directory, the files
// found and the setting that changes the decision, and are all *option.Error about Flag (a
// refusal also naming Overwrite; a lock held elsewhere wraps ErrInUse).
func Open(dir string, names []string, opt Options) (*Dir, error) {
	if opt.Flag == "" {
		opt.Flag = "Out"
	}
	d, err := open(dir, names, opt)
	return d, option.Wrap(opt.Flag, err)
}

func open(dir string, names []string, opt Options) (*Dir, error) {
	if opt.Run == "" || strings.ContainsAny(opt.Run, `/\`) {
		return nil, fmt.Errorf("rundir: Options.Run %q: want the kind of run, e.g. \"train\"", opt.Run)
	}
	for _, n := range names {
		if _, err := filepath.Match(n, ""); err != nil || strings.ContainsAny(n, `/\`) {
			return nil, fmt.Errorf("rundir: bad output name %q", n)
		}
	}
	_, statErr := os.Stat(dir)
	created := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s %s: cannot create the output directory: %w", opt.Flag, dir, err)
	}
	for _, p := range opt.Partial {
		if !slices.Contains(names, p) {
			return nil, fmt.Errorf("rundir: partial name %q is not among the outputs %v", p, names)
		}
	}
	lock, own, err := lockDir(filepath.Join(dir, LockName))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", opt.Flag, dir, err)
	}
	d := &Dir{Path: dir, lock: lock, lockOwn: own, names: names, opt: opt, written: map[string]string{}, created: created}
	if err := d.open(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// open does Open's work once the lock is held.
func (d *Dir) open() error {
	if err := d.removeStale(); err != nil {
		return err
	}
	if err := d.checkInputs(); err != nil {
		return err
	}
	var err error
	if d.before, err = readManifest(d.manifestPath()); err != nil {
		return err
	}
	found, err := d.existing()
	if err != nil {
		return err
	}
	var foreign []string
	for _, n := range found {
		if !d.owned(n) {
			foreign = append(foreign, n)
		}
	}
	switch {
	case len(found) == 0:
		d.live = true
	case !d.opt.Overwrite && !d.opt.Resume:
		return option.Errorf([]string{d.opt.Flag, "Overwrite"}, "%s %s holds another run's outputs (%s): choose a new directory, or set Overwrite to replace them",
			d.opt.Flag, d.Path, strings.Join(found, ", "))
	case len(foreign) > 0:
		hint := ""
		if len(d.before) == 0 {
			hint = fmt.Sprintf(" (%s has no manifest of %s runs: if an older vaisgplvm wrote them, resume or overwrite into a new directory)", d.Path, d.opt.Run)
		}
		return option.Of(d.opt.Flag, "%s %s: %s match this run's output names but were not written there by a vaisgplvm %s run (or were changed since), "+
			"so they are not replaced: move them away or choose another directory%s", d.opt.Flag, d.Path, strings.Join(foreign, ", "), d.opt.Run, hint)
	default:
		d.live = d.opt.Resume
	}
	if d.Stage, err = os.MkdirTemp(d.Path, stagePrefix+"*"); err != nil {
		return fmt.Errorf("%s %s: cannot write there: %w", d.opt.Flag, d.Path, err)
	}
	if err := os.WriteFile(filepath.Join(d.Stage, stageMarker), []byte(markerText), 0o644); err != nil {
		return fmt.Errorf("%s %s: cannot write there: %w", d.opt.Flag, d.Path, err)
	}
	return nil
}

// removeStale removes the staging directories that killed runs left: a directory whose name
// starts with stagePrefix and that holds the marker file with its text. Nothing else is touched.
func (d *Dir) removeStale() error {
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", d.opt.Flag, d.Path, err)
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), stagePrefix) {
			continue
		}
		stage := filepath.Join(d.Path, e.Name())
		if buf, err := os.ReadFile(filepath.Join(stage, stageMarker)); err != nil || string(buf) != markerText {
			continue
		}
		if err := os.RemoveAll(stage); err != nil {
			return fmt.Errorf("removing a killed run's staging directory %s: %w", stage, err)
		}
	}
	return nil
}

// checkInputs refuses an input that is one of the run's output names in the directory.
func (d *Dir) checkInputs() error {
	for _, flag := range slices.Sorted(maps.Keys(d.opt.Inputs)) {
		in := d.opt.Inputs[flag]
		if in == "" || d.resumed(in) {
			continue
		}
		if !SameFile(filepath.Dir(in), d.Path) || !d.isOutput(filepath.Base(in)) {
			continue
		}
		return option.Errorf([]string{flag, d.opt.Flag}, "%s %s is in %s %s under one of this run's output names, and writing the outputs would replace it: "+
			"move the file, or choose another %s", flag, in, d.opt.Flag, d.Path, d.opt.Flag)
	}
	return nil
}

// existing lists the entries of the directory that match an output name.
func (d *Dir) existing() ([]string, error) {
	var found []string
	for _, n := range d.names {
		matches, err := filepath.Glob(filepath.Join(d.Path, n))
		if err != nil {
			return nil, fmt.Errorf("rundir: bad output name %q: %w", n, err)
		}
		for _, m := range matches {
			if b := filepath.Base(m); !slices.Contains(found, b) {
				found = append(found, b)
			}
		}
	}
	sort.Strings(found)
	return found, nil
}

// owned reports whether the file name in the directory is provably a run of this kind's: a regular
// file whose sha256 the manifest lists under its name, or the checkpoint being resumed.
func (d *Dir) owned(name string) bool {
	path := filepath.Join(d.Path, name)
	if d.resumed(path) {
		return true
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	sum, err := fileSHA256(path)
	return err == nil && slices.Contains(d.before[name], sum)
}

// resumed reports whether path is the checkpoint this run resumes.
func (d *Dir) resumed(path string) bool {
	return d.opt.Resume && d.opt.ResumeFile != "" && SameFile(path, d.opt.ResumeFile)
}

// isOutput reports whether name is one of the run's output names or matches one of their patterns.
func (d *Dir) isOutput(name string) bool {
	return slices.ContainsFunc(d.names, func(p string) bool { ok, _ := filepath.Match(p, name); return ok })
}

// File returns the path, inside the staging directory, to which output name is written; name must
// be one given to Open or match one of their patterns (filepath.Match, e.g. "latent_*.png").
func (d *Dir) File(name string) string {
	if !d.isOutput(name) {
		panic(fmt.Sprintf("rundir: %s is not one of this run's outputs %v", name, d.names)) // a programming error
	}
	return filepath.Join(d.Stage, name)
}

// Written returns the names of the files this run has put in place so far (after Commit: all of
// its outputs), sorted.
func (d *Dir) Written() []string { return slices.Sorted(maps.Keys(d.written)) }

// Final returns the path output name will have once committed.
func (d *Dir) Final(name string) string { return filepath.Join(d.Path, name) }

// WriteFile writes data to output name in the staging directory.
func (d *Dir) WriteFile(name string, data []byte) error {
	if err := d.Check(name); err != nil {
		return err
	}
	return WriteAtomic(d.File(name), data)
}

// Check returns an error unless name is one of the run's outputs (given to Open, or matching one
// of their patterns) and d is an open directory: what File needs.
func (d *Dir) Check(name string) error {
	if d == nil || d.Stage == "" {
		return fmt.Errorf("rundir: nil or closed Dir: open one with rundir.Open")
	}
	if !d.isOutput(name) {
		return fmt.Errorf("rundir: %s is not one of this run's outputs %v", name, d.names)
	}
	return nil
}

// Promote moves the staged outputs names into place at once, where that mixes with no other run's
// files (partial names, a directory without a predecessor's outputs, or a resume); otherwise they
// stay staged until Commit. It reports whether they were moved.
func (d *Dir) Promote(names ...string) (bool, error) {
	if !d.live && !d.partial(names) {
		return false, nil
	}
	return true, d.place(names)
}

// partial reports whether every name is one of Options.Partial.
func (d *Dir) partial(names []string) bool {
	return !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(d.opt.Partial, n) })
}

// Leave ends a run that did not finish: it moves the staged outputs names, which must be partial
// names (Options.Partial), into place beside whatever is there, and removes nothing else; every
// other staged output is discarded with the staging directory. A predecessor's finished outputs
// stay as they were, still provably its own.
func (d *Dir) Leave(names ...string) error {
	if !d.partial(names) {
		return fmt.Errorf("rundir: Leave(%v): a run that did not finish leaves only its partial outputs %v", names, d.opt.Partial)
	}
	if err := d.place(names); err != nil {
		return err
	}
	if err := d.writeManifest(nil); err != nil { // the predecessor's entries stay
		return err
	}
	return os.RemoveAll(d.Stage)
}

// Commit moves every staged output into place, records them in the manifest, then removes the
// files of the predecessor (this kind's manifest) that this run did not write and whose content is
// unchanged, and the staging directory. A file that appeared in place of an output meanwhile and
// is not provably a run's is an error naming it; the outputs then stay in the staging directory.
func (d *Dir) Commit() error {
	entries, err := os.ReadDir(d.Stage)
	if err != nil {
		return fmt.Errorf("%s %s: %w", d.opt.Flag, d.Path, err)
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); n != stageMarker && !strings.HasPrefix(n, ".tmp-") && !strings.HasPrefix(n, ".ckpt-") {
			if !d.isOutput(n) {
				return fmt.Errorf("rundir: the run wrote %s, which is not one of its outputs %v", n, d.names)
			}
			names = append(names, n)
		}
	}
	if err := d.place(names); err != nil {
		return err
	}
	for name, sums := range d.before {
		if _, ok := d.written[name]; ok {
			continue
		}
		path := filepath.Join(d.Path, name)
		if sum, err := fileSHA256(path); err == nil && slices.Contains(sums, sum) {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("%s %s: removing the earlier run's %s: %w", d.opt.Flag, d.Path, name, err)
			}
		}
	}
	// A finished run's partial outputs (its periodic checkpoint) are superseded by the final ones.
	for _, name := range d.opt.Partial {
		sum, ok := d.written[name]
		if !ok {
			continue
		}
		path := filepath.Join(d.Path, name)
		if now, err := fileSHA256(path); err == nil && now == sum {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("%s %s: removing this run's %s: %w", d.opt.Flag, d.Path, name, err)
			}
		}
		delete(d.written, name)
	}
	d.committed = true
	if err := d.writeManifest(nil); err != nil {
		return err
	}
	return os.RemoveAll(d.Stage)
}

// place moves the staged files names into the directory. The manifest first lists them with
// both their old and new content, so that a run killed between two renames leaves only provable
// files; then each is renamed over its destination, which must not be a file this run cannot
// prove its own, nor one of its inputs.
func (d *Dir) place(names []string) error {
	sums := map[string]string{}
	for _, n := range names {
		dst := filepath.Join(d.Path, n)
		if _, err := os.Lstat(dst); err == nil {
			if _, ours := d.written[n]; !ours && !d.owned(n) {
				return fmt.Errorf("%s %s: %s appeared there during the run and was not written by it; it is left alone, and this run's outputs are in %s",
					d.opt.Flag, d.Path, n, d.Stage)
			}
		}
		for flag, in := range d.opt.Inputs {
			if in != "" && SameFile(in, dst) && !d.resumed(in) {
				return fmt.Errorf("%s %s is now %s in %s: not replaced; this run's outputs are in %s", flag, in, n, d.Path, d.Stage)
			}
		}
		sum, err := fileSHA256(filepath.Join(d.Stage, n))
		if err != nil {
			return fmt.Errorf("%s %s: %w", d.opt.Flag, d.Path, err)
		}
		sums[n] = sum
	}
	if err := d.writeManifest(sums); err != nil {
		return err
	}
	for _, n := range names {
		if err := os.Rename(filepath.Join(d.Stage, n), filepath.Join(d.Path, n)); err != nil {
			return fmt.Errorf("%s %s: moving %s into place: %w", d.opt.Flag, d.Path, n, err)
		}
		d.written[n] = sums[n]
	}
	return d.writeManifest(nil)
}

// manifest is the file that proves which files runs of one kind wrote: name -> the sha256 sums
// the file may have (two while a file is being replaced).
type manifest struct {
	Run   string              `json:"run"`
	Files map[string][]string `json:"files"`
}

func (d *Dir) manifestPath() string {
	return filepath.Join(d.Path, ".vaisgplvm-manifest-"+d.opt.Run+".json")
}

// writeManifest writes the manifest: the predecessor's entries not yet replaced or removed
// (until Commit), the files this run wrote, and pending, the files about to be put in place,
// with both their old and new sums.
func (d *Dir) writeManifest(pending map[string]string) error {
	m := manifest{Run: d.opt.Run, Files: map[string][]string{}}
	if !d.committed {
		for n, sums := range d.before {
			m.Files[n] = slices.Clone(sums)
		}
	}
	for n, sum := range d.written {
		m.Files[n] = appendNew(m.Files[n], sum)
	}
	for n, sum := range pending {
		m.Files[n] = appendNew(m.Files[n], sum)
	}
	buf, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(d.Stage, ".manifest.json")
	if err := WriteAtomic(tmp, buf); err != nil {
		return fmt.Errorf("%s %s: writing the manifest: %w", d.opt.Flag, d.Path, err)
	}
	return os.Rename(tmp, d.manifestPath())
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// readManifest reads a manifest; a missing one is empty, and so is one that cannot be parsed
// (nothing in the directory is then provably a run's).
func readManifest(path string) (map[string][]string, error) {
	buf, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string][]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var m manifest
	if json.Unmarshal(buf, &m) != nil || m.Files == nil {
		return map[string][]string{}, nil
	}
	return m.Files, nil
}

// Close removes the staging directory with whatever was not committed (the directory is left as
// the run found it, apart from promoted files), removes the lock file and releases the lock, and
// removes the directory itself when Open created it and it is empty (a run that failed before
// writing anything leaves no trace).
func (d *Dir) Close() {
	if d == nil {
		return
	}
	if d.Stage != "" && !d.committed {
		_ = os.RemoveAll(d.Stage)
	}
	if d.lock != nil {
		unlock(d.lock, d.lockOwn)
		d.lock.Close()
		d.lock = nil
		if d.created {
			_ = os.Remove(d.Path) // fails, and so keeps it, unless it is empty
		}
	}
}

// WriteAtomic writes data to path through a temporary file in the same directory renamed into
// place, so that path holds either its old content or all of data.
func WriteAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// fileSHA256 returns the hex sha256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// SameFile reports whether paths a and b name the same existing file or directory (os.SameFile:
// symbolic and hard links included), or the same absolute path (for a path not made yet).
func SameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
