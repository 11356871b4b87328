package experiment

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
)

// ProbeCommand is the hidden command of a process that times one piece of work (KernelProbe)
// under the matrix kernels its environment selects, for WithKernels.
const ProbeCommand = "matmul-probe"

// AppliedEnv carries WithKernels's choice (JSON) into the process re-executed under its
// environment.
const AppliedEnv = "VAISGPLVM_MATMUL_APPLIED"

// WithKernels runs a command's process, argv as os.Args, under the matrix kernels chosen for this
// machine (ChooseKernels) and returns its exit status: run(argv[1:]) once the kernels are in
// place. When they are not the ones this process started with, it re-executes the executable under
// their environment (GoMLX reads it once, at start-up); argv[1] == ProbeCommand times KernelProbe
// and prints its seconds instead. A choice that cannot be made is exit status 2.
func WithKernels(argv []string, run func(args []string) int) int {
	if len(argv) > 1 && argv[1] == ProbeCommand {
		s, err := KernelProbe()
		if err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Printf("%.6f\n", s)
		return 0
	}
	if applied := os.Getenv(AppliedEnv); applied != "" {
		var c backend.KernelChoice
		if json.Unmarshal([]byte(applied), &c) == nil {
			backend.SetChoice(c)
		}
		return run(argv[1:])
	}
	c, err := ChooseKernels(AppliedEnv+"=probe", ProbeCommand)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vaisgplvm: "+err.Error())
		return 2
	}
	if c.Kernels != backend.MatMulKernels() {
		buf, _ := json.Marshal(c)
		env := append(append(os.Environ(), backend.EnvFor(c.Kernels)...), AppliedEnv+"="+string(buf))
		err := reexec(argv, env) // returns only when it could not
		fmt.Fprintf(os.Stderr, "vaisgplvm: note: running the %s matrix kernels, not the %s ones chosen: %v\n", backend.MatMulKernels(), c.Kernels, err)
		c = backend.KernelChoice{Kernels: backend.MatMulKernels(), Why: "could not switch", CPU: c.CPU}
	}
	backend.SetChoice(c)
	return run(argv[1:])
}
