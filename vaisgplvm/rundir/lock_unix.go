//go:build unix

package rundir

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive, non-blocking flock on the file at path (created when absent). Since
// Close removes the lock file while holding the lock, a lock taken on a file that was removed
// meanwhile locks nothing: after locking, the file at path must still be the one locked (else it
// tries again).
func lockDir(path string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, fmt.Errorf("cannot create the lock file: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w (it holds the lock %s); wait for it or choose another directory", ErrInUse, path)
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close() // the file was removed by the run that held it: lock the new one
		if attempt >= 100 {
			return nil, fmt.Errorf("%w (the lock %s keeps changing)", ErrInUse, path)
		}
	}
}

// unlock removes the lock file, then releases the lock (see lockDir).
func unlock(f *os.File) {
	_ = os.Remove(f.Name())
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
