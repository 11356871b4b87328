//go:build unix

package experiment

import (
	"os"
	"syscall"
)

// reexec replaces this process with the command run again with env (syscall.Exec); it returns
// only when that fails.
func reexec(argv, env []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, argv, env)
}
