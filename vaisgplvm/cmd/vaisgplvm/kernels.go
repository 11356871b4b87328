package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// probeCommand is the hidden command that times one piece of work under the matrix kernels its
// environment selects: the command runs it once per kernel family to choose (backend.Decide).
const probeCommand = "matmul-probe"

// appliedEnv carries the choice (JSON) into the process re-executed under its environment.
const appliedEnv = "VAISGPLVM_MATMUL_APPLIED"

// withKernels runs the command (run) under the matrix kernels chosen for this machine: forced by
// $VAISGPLVM_MATMUL, set by GoMLX's own variables, cached, or measured now (a few seconds, once
// per machine and build); when they are not the ones this process started with, it re-executes
// itself under their environment (GoMLX reads it once, at start-up).
func withKernels(argv []string) int {
	if len(argv) > 1 && argv[1] == probeCommand {
		return runProbe()
	}
	if applied := os.Getenv(appliedEnv); applied != "" {
		var c backend.KernelChoice
		if json.Unmarshal([]byte(applied), &c) == nil {
			backend.SetChoice(c)
		}
		return run(argv[1:], os.Stderr)
	}
	c, err := chooseKernels()
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

// chooseKernels decides the kernels (backend.Decide): GoMLX's own variables, when set, decide as
// they always did.
func chooseKernels() (backend.KernelChoice, error) {
	forced := os.Getenv(backend.ChoiceEnv)
	if forced == "" || forced == "auto" {
		for _, v := range []string{backend.MatMulEnv, backend.AVX512Env, backend.AVX2Env} {
			if os.Getenv(v) != "" {
				return backend.KernelChoice{Kernels: backend.MatMulKernels(), Why: "set by " + v, CPU: backend.CPUModel()}, nil
			}
		}
	}
	cache, err := backend.CacheFile()
	if err != nil {
		cache = ""
	}
	return backend.Decide(forced, backend.Available(), cache, backend.CacheKey(), probe)
}

// probe runs probeCommand under kernels' environment and returns the seconds it reports.
func probe(kernels string) (float64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(exe, probeCommand)
	cmd.Env = append(append(slices.Clone(os.Environ()), backend.EnvFor(kernels)...), appliedEnv+"=probe")
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
}

// runProbe times the work behind the choice and prints its seconds: the smallest of three
// training steps, after one that compiles, of oil flow's VAIS K 5 full batch (Table 1 --paper's
// model: products of [1000, 50] and [50, 50] matrices, batched [5, 1000, 10] ones).
func runProbe() int {
	ds, err := protocol.LoadTabular("oilflow", false)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	c := protocol.Config("vais", "oilflow", 1)
	c.Batch = 0
	m, err := model.New(c, ds.X, nil)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	b, err := backend.New("go")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	tr := train.New(m, b)
	best := 0.0
	for i := range 4 {
		start := time.Now()
		if _, err := tr.Step(); err != nil {
			fmt.Println(err)
			return 1
		}
		if s := time.Since(start).Seconds(); i > 0 && (best == 0 || s < best) {
			best = s
		}
	}
	fmt.Printf("%.6f\n", best)
	return 0
}
