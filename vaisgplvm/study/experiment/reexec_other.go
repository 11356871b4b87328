//go:build !unix

package experiment

import "errors"

// reexec cannot replace the process here: the command keeps the kernels it started with.
func reexec(argv, env []string) error {
	return errors.New("re-executing is not supported on this system; set the GOMLX_SIMD_* variables before starting")
}
