//go:build !unix

package rundir

import (
	"fmt"
	"os"
)

// lockDir creates the lock file exclusively where flock is not available: a run killed before
// Close leaves it, and the error then says to delete it.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w (the lock %s exists; delete it if no run is writing)", ErrInUse, path)
	}
	return f, nil
}

func unlock(f *os.File) { _ = os.Remove(f.Name()) }
