// Package rundir is the output-directory rule of the vaisgplvm command: one run's outputs never
// mix with another's.
//
//   - A run names its output files up front (exact names or filepath.Match patterns). Open refuses a directory that already holds any of
//     them (another run's outputs) unless the run overwrites (Options.Overwrite: the old files are
//     removed first, so nothing of the earlier run is left beside the new one) or resumes the run
//     whose checkpoint is there (Options.Resume: train --resume DIR/checkpoint.gob).
//   - The directory is locked (an advisory flock on DIR/.vaisgplvm.lock) while the run writes it: a
//     second run into the same directory fails at once, naming the lock, instead of interleaving.
//     The lock goes with the process, also after kill -9.
//   - Every file is written to a temporary file in the directory and renamed into place, so a file
//     is either the old one, absent, or complete; temporary files that an earlier killed run left
//     (.tmp-* and .ckpt-*) are removed by Open.
package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LockName is the lock file Open creates in the directory.
const LockName = ".vaisgplvm.lock"

// Options tune Open.
type Options struct {
	// Overwrite removes the outputs of an earlier run (the names given to Open) instead of refusing.
	Overwrite bool
	// Resume accepts a directory holding an earlier run's outputs: this run continues it and
	// replaces them.
	Resume bool
	// Flag names the command-line flag of the directory in errors (default "--out").
	Flag string
}

// Dir is an output directory held by one run.
type Dir struct {
	Path  string
	lock  *os.File
	names []string
}

// ErrInUse is returned (wrapped) when another process holds the directory's lock.
var ErrInUse = errors.New("another run is writing this directory")

// Open creates dir when needed, locks it, removes temporary files of killed runs and checks that
// none of names (the run's output files) exists, unless opt allows it. Errors name the directory,
// the files found and the flag that changes the decision.
func Open(dir string, names []string, opt Options) (*Dir, error) {
	flag := opt.Flag
	if flag == "" {
		flag = "--out"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s %s: cannot create the output directory: %w", flag, dir, err)
	}
	lock, err := lockDir(filepath.Join(dir, LockName))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, dir, err)
	}
	d := &Dir{Path: dir, lock: lock, names: names}
	if err := d.clean(); err != nil {
		d.Close()
		return nil, err
	}
	var found []string
	for _, n := range names {
		matches, err := filepath.Glob(filepath.Join(dir, n))
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("rundir: bad output name %q: %w", n, err)
		}
		for _, m := range matches {
			found = append(found, filepath.Base(m))
		}
	}
	switch {
	case len(found) == 0 || opt.Resume:
	case opt.Overwrite:
		for _, n := range found {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				d.Close()
				return nil, fmt.Errorf("%s %s: removing the earlier run's %s: %w", flag, dir, n, err)
			}
		}
	default:
		d.Close()
		return nil, fmt.Errorf("%s %s holds another run's outputs (%s): choose a new directory, or add --overwrite to replace them",
			flag, dir, strings.Join(found, ", "))
	}
	return d, nil
}

// clean removes the temporary files that killed runs leave behind.
func (d *Dir) clean() error {
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, ".tmp-") || strings.HasPrefix(n, ".ckpt-") {
			if err := os.Remove(filepath.Join(d.Path, n)); err != nil {
				return fmt.Errorf("removing a killed run's temporary file: %w", err)
			}
		}
	}
	return nil
}

// File returns the path of output name inside the directory; name must be one given to Open or
// match one of their patterns (filepath.Match, e.g. "latent_*.png").
func (d *Dir) File(name string) string {
	if !slices.ContainsFunc(d.names, func(p string) bool { ok, _ := filepath.Match(p, name); return ok }) {
		panic(fmt.Sprintf("rundir: %s is not one of this run's outputs %v", name, d.names)) // a programming error
	}
	return filepath.Join(d.Path, name)
}

// WriteFile writes data to output name atomically: a temporary file in the directory, synced and
// renamed into place.
func (d *Dir) WriteFile(name string, data []byte) error {
	return WriteAtomic(d.File(name), data)
}

// Close releases the lock (the lock file stays; it is empty).
func (d *Dir) Close() {
	if d.lock != nil {
		unlock(d.lock)
		d.lock.Close()
		d.lock = nil
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
