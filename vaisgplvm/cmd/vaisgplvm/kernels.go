package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/experiment"
)

// probeCommand is the hidden command that times one piece of work (experiment.KernelProbe) under
// the matrix kernels its environment selects.
const probeCommand = "matmul-probe"

// appliedEnv carries the choice (JSON) into the process re-executed under its environment.
const appliedEnv = "VAISGPLVM_MATMUL_APPLIED"

// withKernels runs the command (run) under the matrix kernels chosen for this machine
// (experiment.ChooseKernels); when they are not the ones this process started with, it
// re-executes itself under their environment (GoMLX reads it once, at start-up).
func withKernels(argv []string) int {
	if len(argv) > 1 && argv[1] == probeCommand {
		s, err := experiment.KernelProbe()
		if err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Printf("%.6f\n", s)
		return 0
	}
	if applied := os.Getenv(appliedEnv); applied != "" {
		var c backend.KernelChoice
		if json.Unmarshal([]byte(applied), &c) == nil {
			backend.SetChoice(c)
		}
		return run(argv[1:], os.Stderr)
	}
	c, err := experiment.ChooseKernels(appliedEnv+"=probe", probeCommand)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vaisgplvm: "+err.Error())
		return 2
	}
	if c.Kernels != backend.MatMulKernels() {
		buf, _ := json.Marshal(c)
		env := append(append(os.Environ(), backend.EnvFor(c.Kernels)...), appliedEnv+"="+string(buf))
		err := reexec(argv, env) // returns only when it could not
		fmt.Fprintf(os.Stderr, "vaisgplvm: note: running the %s matrix kernels, not the %s ones chosen: %v\n", backend.MatMulKernels(), c.Kernels, err)
		c = backend.KernelChoice{Kernels: backend.MatMulKernels(), Why: "could not switch", CPU: c.CPU}
	}
	backend.SetChoice(c)
	return run(argv[1:], os.Stderr)
}
