//go:build !unix

package rundir

import (
	"fmt"
	"os"
)

// lockDir creates the lock file exclusively where flock is not available: a run killed before
// Close leaves it, and the error then says to delete it.
func lockDir(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("%w (the lock %s exists; delete it if no run is writing)", ErrInUse, path)
	}
	if _, err := f.WriteString(lockText); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("writing the lock file %s: %w", path, err)
	}
	return f, true, nil
}

func unlock(f *os.File, own bool) {
	if own {
		_ = os.Remove(f.Name())
	}
}
