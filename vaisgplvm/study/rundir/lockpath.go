package rundir

import (
	"errors"
	"fmt"
	"os"
)

// checkLockPath refuses what stands at a lock file's name and is not a regular file (a directory, a
// symbolic link, dangling or not, a device): it is nothing a run made, so it is neither followed nor
// waited on. nil when path is a regular file or is gone.
func checkLockPath(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("cannot read the lock file: %w", err)
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link, not a lock file a run made: remove it or choose another directory", path)
	case fi.IsDir():
		return fmt.Errorf("%s is a directory, not a lock file a run made: remove it or choose another directory", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file, so not a lock file a run made: remove it or choose another directory", path)
	}
	return nil
}
