package backend

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// ChoiceEnv overrides the choice of matrix kernels: portable, avx2, avx512, or auto (the default:
// measured once per machine and cached).
const ChoiceEnv = "VAISGPLVM_MATMUL"

// KernelChoice is the family of matrix kernels a process runs and why: no rule from CPU flags picks the
// fastest on every CPU (AVX-512 kernels were twice as fast as the portable ones on an AMD EPYC and
// 2.6 times as slow on an Intel Xeon: docs/cpu-performance.md), so the command measures them.
type KernelChoice struct {
	Kernels string             `json:"kernels"` // portable, avx2 or avx512
	Why     string             `json:"why"`     // "forced", "measured", "cached" or "only choice"
	CPU     string             `json:"cpu"`
	Seconds map[string]float64 `json:"seconds,omitempty"` // the probe's seconds by kernels, when measured (or cached)
	Key     string             `json:"key,omitempty"`     // what the measurement depends on (CacheKey)
	Made    string             `json:"made,omitempty"`    // when it was measured (RFC 3339)
}

// String is the choice for the log: "portable (measured: portable 0.21 s, avx512 0.55 s)".
func (c KernelChoice) String() string {
	if len(c.Seconds) == 0 {
		return fmt.Sprintf("%s (%s)", c.Kernels, c.Why)
	}
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range c.Seconds {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, fmt.Sprintf("%s %.3g s", k, c.Seconds[k]))
	}
	return fmt.Sprintf("%s (%s: %s)", c.Kernels, c.Why, strings.Join(parts, ", "))
}

// Available returns the kernel families this binary can run on this CPU: portable always; avx2
// and avx512 in a GOEXPERIMENT=simd build on a CPU that has them.
func Available() []string {
	return available(simdBuild, cpuAVX2(), cpuAVX512())
}

func available(simd, avx2, avx512 bool) []string {
	out := []string{"portable"}
	if simd && avx2 {
		out = append(out, "avx2")
	}
	if simd && avx512 {
		out = append(out, "avx512")
	}
	return out
}

// EnvFor returns the environment entries (KEY=VALUE) under which GoMLX's pure-Go backend, which
// reads them when the process starts, runs kernels k.
func EnvFor(k string) []string {
	switch k {
	case "avx512":
		return []string{MatMulEnv + "=true", AVX512Env + "=true", AVX2Env + "=true"}
	case "avx2":
		return []string{MatMulEnv + "=true", AVX512Env + "=false", AVX2Env + "=true"}
	}
	return []string{MatMulEnv + "=true", AVX512Env + "=false", AVX2Env + "=false"}
}

// CPUModel names the CPU (Linux's /proc/cpuinfo model name; "unknown CPU" elsewhere).
func CPUModel() string {
	buf, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(buf), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// CacheKey is what a measured choice depends on: the CPU, the Go release, the GoMLX compute
// module's version and the kernels this build can run. A cached choice of another key is
// measured again.
func CacheKey() string {
	compute := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/gomlx/compute" {
				compute = d.Version
			}
		}
	}
	return strings.Join([]string{CPUModel(), runtime.GOARCH, runtime.Version(), "compute " + compute, strings.Join(Available(), "+")}, "; ")
}

// CacheFile is where the measured choice is kept: the user's cache directory.
func CacheFile() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "vaisgplvm", "matmul-choice.json"), nil
}

// Decide chooses the kernels: forced (ChoiceEnv's value, "" or "auto" for none) when given; the
// only one when avail has one; the cached choice in cache when its key is key; else the fastest by
// probe (seconds of a fixed piece of work under each kernel family), written to cache (a damaged or
// stale cache file is replaced). Errors: a forced value that is not one of avail; a probe that fails.
func Decide(forced string, avail []string, cache, key string, probe func(kernels string) (float64, error)) (KernelChoice, error) {
	c := KernelChoice{CPU: CPUModel()}
	switch {
	case forced != "" && forced != "auto":
		if !slices.Contains(avail, forced) {
			return c, fmt.Errorf("%s=%s: this binary on this CPU runs %s (or auto); avx2 and avx512 need a GOEXPERIMENT=simd build and a CPU with them",
				ChoiceEnv, forced, strings.Join(avail, ", "))
		}
		c.Kernels, c.Why = forced, "forced by "+ChoiceEnv
		return c, nil
	case len(avail) == 1:
		c.Kernels, c.Why = avail[0], "only choice of this build"
		return c, nil
	}
	if buf, err := os.ReadFile(cache); err == nil {
		var old KernelChoice
		if json.Unmarshal(buf, &old) == nil && old.Key == key && slices.Contains(avail, old.Kernels) {
			old.Why, old.CPU = "cached from "+old.Made, c.CPU
			return old, nil
		}
	}
	c.Seconds, c.Key, c.Made = map[string]float64{}, key, time.Now().UTC().Format(time.RFC3339)
	for _, k := range avail {
		s, err := probe(k)
		if err != nil {
			return c, fmt.Errorf("measuring the %s matrix kernels: %w (set %s to portable, avx2 or avx512 to skip the measurement)", k, err, ChoiceEnv)
		}
		c.Seconds[k] = s
		if c.Kernels == "" || s < c.Seconds[c.Kernels] {
			c.Kernels = k
		}
	}
	c.Why = "measured"
	if buf, err := json.MarshalIndent(c, "", " "); err == nil {
		if err := writeCache(cache, buf); err != nil {
			c.Why += " (not cached: " + err.Error() + ")"
		}
	}
	return c, nil
}

// writeCache writes buf to path atomically, making its directory.
func writeCache(path string, buf []byte) error {
	if path == "" {
		return errors.New("no cache directory")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + fmt.Sprintf(".tmp%d", os.Getpid())
	if err := os.WriteFile(tmp, append(buf, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// chosen is the choice the command made for this process (SetChoice); nil when none was made
// (a library user, a test): the log then names MatMulKernels only.
var chosen *KernelChoice

// SetChoice records the choice the command made, for Start's first line and the bench JSON.
func SetChoice(c KernelChoice) { chosen = &c }

// Chosen returns the recorded choice, or one that says only which kernels run (Why "not
// measured") when none was recorded.
func Chosen() KernelChoice {
	if chosen != nil {
		return *chosen
	}
	return KernelChoice{Kernels: MatMulKernels(), Why: "not measured (library use)", CPU: CPUModel()}
}
