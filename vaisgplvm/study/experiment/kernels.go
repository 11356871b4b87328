package experiment

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// ChooseKernels decides the matrix kernels of a command's process (backend.Decide): forced by
// $VAISGPLVM_MATMUL, set by GoMLX's own variables when any is given (they decide as they always
// did), cached, or measured now by running this executable with probeArgs once per kernel family
// under that family's environment (its stdout: the seconds KernelProbe reports) with mark added to
// the environment (so the probe process does not choose again).
func ChooseKernels(mark string, probeArgs ...string) (backend.KernelChoice, error) {
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
	probe := func(kernels string) (float64, error) {
		exe, err := os.Executable()
		if err != nil {
			return 0, err
		}
		cmd := exec.Command(exe, probeArgs...)
		cmd.Env = append(append(slices.Clone(os.Environ()), backend.EnvFor(kernels)...), mark)
		out, err := cmd.Output()
		if err != nil {
			return 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
		return strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	}
	return backend.Decide(forced, backend.Available(), cache, backend.CacheKey(), probe)
}

// KernelProbe times the work behind ChooseKernels's choice in this process's kernels: the
// smallest of three training steps, after one that compiles, of oil flow's VAIS K 5 full batch
// (Table 1 --paper's model: products of [1000, 50] and [50, 50] matrices, batched [5, 1000, 10]
// ones), in seconds.
func KernelProbe() (float64, error) {
	ds, err := protocol.LoadTabular("oilflow", false)
	if err != nil {
		return 0, err
	}
	c := protocol.Config("vais", "oilflow", 1)
	c.Batch = 0
	m, err := model.New(c, ds.X, nil)
	if err != nil {
		return 0, err
	}
	b, err := backend.New("go")
	if err != nil {
		return 0, err
	}
	tr, err := train.New(m, b)
	if err != nil {
		return 0, err
	}
	best := 0.0
	for i := range 4 {
		start := time.Now()
		if _, err := tr.Step(); err != nil {
			return 0, err
		}
		if s := time.Since(start).Seconds(); i > 0 && (best == 0 || s < best) {
			best = s
		}
	}
	return best, nil
}
