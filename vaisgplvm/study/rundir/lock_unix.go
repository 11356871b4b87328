//go:build unix

package rundir

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive, non-blocking flock on the file at path. It reports whether the file
// is the package's own (created by a run: it holds lockText), which unlock may remove; a file of
// that name that a user made is locked but never written to or removed. Since unlock removes the
// package's lock file while holding the lock, a lock taken on a file that was removed meanwhile
// locks nothing: after locking, the file at path must still be the one locked (else it tries again).
func lockDir(path string) (*os.File, bool, error) {
	for attempt := 0; ; attempt++ {
		if attempt > 100 {
			return nil, false, fmt.Errorf("%w (the lock %s keeps changing)", ErrInUse, path)
		}
		created := true
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
		if errors.Is(err, os.ErrExist) {
			created = false
			if err := checkLockPath(path); err != nil {
				return nil, false, err
			}
			f, err = os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
			if errors.Is(err, os.ErrNotExist) {
				continue // removed between the two opens
			}
		}
		if err != nil {
			return nil, false, fmt.Errorf("cannot create the lock file: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, false, fmt.Errorf("%w (it holds the lock %s); wait for it or choose another directory", ErrInUse, path)
			}
			return nil, false, fmt.Errorf("locking %s: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			if created {
				if _, err := f.WriteString(lockText); err != nil {
					f.Close()
					return nil, false, fmt.Errorf("writing the lock file %s: %w", path, err)
				}
				return f, true, nil
			}
			return f, isLockText(f), nil
		}
		f.Close() // the file was removed by the run that held it: lock the new one
	}
}

// unlock removes the lock file when it is the package's own, then releases the lock (see lockDir).
func unlock(f *os.File, own bool) {
	if own {
		_ = os.Remove(f.Name())
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
