package backend

import (
	"errors"
	"os"
	"strings"
	"testing"

	backends "github.com/gomlx/compute"
)

// fakeXLA replaces xlaSupport for the test: open records the environment each plugin starts
// with, and only the plugin named ok starts (as the pure-Go backend).
func fakeXLA(t *testing.T, ok string) map[string][2]string {
	t.Helper()
	seen := map[string][2]string{}
	saved := xlaSupport
	cudaFirst.Lock()
	savedFirst := [2]bool{cudaFirst.started, cudaFirst.exact}
	cudaFirst.started, cudaFirst.exact = false, false
	cudaFirst.Unlock()
	t.Cleanup(func() {
		xlaSupport = saved
		cudaFirst.Lock()
		cudaFirst.started, cudaFirst.exact = savedFirst[0], savedFirst[1]
		cudaFirst.Unlock()
	})
	xlaSupport = &struct {
		plugins func() []string
		open    func(plugin string) (backends.Backend, error)
	}{
		plugins: func() []string { return []string{"cuda", "cpu"} },
		open: func(resolved string) (backends.Backend, error) {
			plugin := strings.Split(resolved, ",")[0]
			seen[plugin+" options"] = [2]string{strings.TrimPrefix(resolved, plugin)}
			tf32, _ := os.LookupEnv(TF32OverrideEnv)
			seen[plugin] = [2]string{tf32, os.Getenv("XLA_FLAGS")}
			if plugin != ok {
				return nil, errors.New("no such device")
			}
			return pureGo()
		},
	}
	return seen
}

// unsetEnv unsets name for the rest of the test (restored afterwards).
func unsetEnv(t *testing.T, name string) {
	t.Setenv(name, "")
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}

// TestExactFloat32Env: a CUDA plugin without ,tf32 starts with NVIDIA_TF32_OVERRIDE=0 and the
// Triton GEMM flag in XLA_FLAGS, and the reason says so; with ,tf32, or for a CPU plugin, the
// environment is left alone; settings the user made are kept.
func TestExactFloat32Env(t *testing.T) {
	const cudaPath = "/opt/venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"
	t.Run("cuda", func(t *testing.T) {
		unsetEnv(t, TF32OverrideEnv)
		unsetEnv(t, "XLA_FLAGS")
		seen := fakeXLA(t, cudaPath)
		c, err := Open("xla:" + cudaPath)
		if err != nil {
			t.Fatal(err)
		}
		if got := seen[cudaPath]; got != [2]string{"0", TritonGEMMFlag} {
			t.Errorf("plugin started with %s=%q XLA_FLAGS=%q, want 0 and %q", TF32OverrideEnv, got[0], got[1], TritonGEMMFlag)
		}
		if !strings.Contains(c.Reason, "float32 products kept exact") || !strings.Contains(c.Reason, TritonGEMMFlag) {
			t.Errorf("reason %q should say what was set", c.Reason)
		}
	})
	t.Run("tf32", func(t *testing.T) {
		unsetEnv(t, TF32OverrideEnv)
		unsetEnv(t, "XLA_FLAGS")
		seen := fakeXLA(t, "cuda")
		c, err := Open("xla:cuda,tf32")
		if err != nil {
			t.Fatal(err)
		}
		if got := seen["cuda"]; got != [2]string{"", ""} {
			t.Errorf("with ,tf32 the plugin started with %q, want an untouched environment", got)
		}
		if _, set := os.LookupEnv(TF32OverrideEnv); set || strings.Contains(c.Reason, "exact") {
			t.Errorf("with ,tf32: %s set or reason %q claims exact products", TF32OverrideEnv, c.Reason)
		}
	})
	t.Run("cpu", func(t *testing.T) {
		unsetEnv(t, TF32OverrideEnv)
		unsetEnv(t, "XLA_FLAGS")
		seen := fakeXLA(t, "cpu")
		if _, err := Open("xla:cpu"); err != nil {
			t.Fatal(err)
		}
		if got := seen["cpu"]; got != [2]string{"", ""} {
			t.Errorf("the cpu plugin started with %q, want an untouched environment", got)
		}
	})
	t.Run("user settings kept", func(t *testing.T) {
		t.Setenv(TF32OverrideEnv, "1")
		t.Setenv("XLA_FLAGS", "--xla_dump_to=/tmp/d")
		seen := fakeXLA(t, "cuda")
		if _, err := Open("xla:cuda"); err != nil {
			t.Fatal(err)
		}
		if got := seen["cuda"]; got != [2]string{"1", "--xla_dump_to=/tmp/d " + TritonGEMMFlag} {
			t.Errorf("plugin started with %q, want the user's override kept and the flag appended", got)
		}
		t.Setenv("XLA_FLAGS", "--xla_gpu_enable_triton_gemm_any=true")
		if _, err := Open("xla:cuda"); err != nil {
			t.Fatal(err)
		}
		if got, want := seen["cuda"][1], "--xla_gpu_enable_triton_gemm_any=true "+TritonGEMMFlag; got != want {
			t.Errorf("XLA_FLAGS = %q, want %q (a flag whose name only starts the same is another flag)", got, want)
		}
		t.Setenv("XLA_FLAGS", "--xla_gpu_enable_triton_gemm=true")
		if _, err := Open("xla:cuda"); err != nil {
			t.Fatal(err)
		}
		if got := seen["cuda"][1]; got != "--xla_gpu_enable_triton_gemm=true" {
			t.Errorf("XLA_FLAGS = %q, want the user's triton setting untouched", got)
		}
	})
	t.Run("auto falls back to cpu", func(t *testing.T) {
		unsetEnv(t, TF32OverrideEnv)
		unsetEnv(t, "XLA_FLAGS")
		hidePythonPlugins(t)
		seen := fakeXLA(t, "cpu")
		c, err := Open("auto")
		if err != nil {
			t.Fatal(err)
		}
		if c.Spec != "xla:cpu" || seen["cuda"][0] != "0" || !strings.Contains(c.Reason, `"cuda" failed to start`) {
			t.Errorf("auto: %+v, cuda plugin saw %q", c, seen["cuda"])
		}
	})
}

// TestFloat64Option: with ,f64 (and auto,f64) a CUDA plugin starts in an untouched environment,
// GoMLX never sees the option, the spec keeps it and the reason says float32 may use TF32; a later
// start that wants exact float32 in the same process says it cannot have it, and one after an
// exact start says the settings stay.
func TestFloat64Option(t *testing.T) {
	unsetEnv(t, TF32OverrideEnv)
	unsetEnv(t, "XLA_FLAGS")
	hidePythonPlugins(t)
	seen := fakeXLA(t, "cuda")
	c, err := Open("xla:cuda,f64")
	if err != nil {
		t.Fatal(err)
	}
	if got := seen["cuda"]; got != [2]string{"", ""} {
		t.Errorf("with ,f64 the plugin started with %q, want an untouched environment", got)
	}
	if got := seen["cuda options"][0]; got != "" {
		t.Errorf("GoMLX got options %q, want none", got)
	}
	if c.Spec != "xla:cuda,f64" || !strings.Contains(c.Reason, "float64 only") {
		t.Errorf("spec %q, reason %q: want xla:cuda,f64 and a float64-only note", c.Spec, c.Reason)
	}
	c, err = Open("xla:cuda")
	if err != nil {
		t.Fatal(err)
	}
	if _, set := os.LookupEnv(TF32OverrideEnv); set || !strings.Contains(c.Reason, "may use TensorFloat-32") {
		t.Errorf("exact start after an f64 one: %s set or reason %q does not warn", TF32OverrideEnv, c.Reason)
	}

	seen = fakeXLA(t, "cuda")
	c, err = Open("auto,f64")
	if err != nil {
		t.Fatal(err)
	}
	if got := seen["cuda"]; c.Spec != "xla:cuda,f64" || got != [2]string{"", ""} {
		t.Errorf("auto,f64: spec %q, environment %q; want xla:cuda,f64 and untouched", c.Spec, got)
	}

	seen = fakeXLA(t, "cuda")
	if _, err := Open("xla:cuda"); err != nil {
		t.Fatal(err)
	}
	c, err = Open("xla:cuda,f64")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Reason, "stay") {
		t.Errorf("f64 start after an exact one: reason %q should say the exact settings stay", c.Reason)
	}
	if _, err := Open("auto,bogus"); err == nil {
		t.Error("auto,bogus: want an unknown-option error")
	}
}

// TestForDType: float64 adds ,f64 to auto and xla specs without a precision option; float32,
// go specs and specs that already choose keep theirs; "" resolves through $VAISGPLVM_BACKEND.
func TestForDType(t *testing.T) {
	t.Setenv(EnvVar, "")
	for _, c := range []struct{ spec, dtype, want string }{
		{"", "float64", "auto,f64"},
		{"auto", "float64", "auto,f64"},
		{"xla:cuda", "float64", "xla:cuda,f64"},
		{"xla", "float64", "xla,f64"},
		{"xla:/p/xla_cuda_plugin.so,tf32", "float64", "xla:/p/xla_cuda_plugin.so,tf32"},
		{"xla:cuda,f64", "float64", "xla:cuda,f64"},
		{"xla:cuda", "float32", "xla:cuda"},
		{"auto", "float32", "auto"},
		{"go", "float64", "go"},
		{"go:ops_sequential", "float64", "go:ops_sequential"},
		{"auto,bogus", "float64", "auto,bogus"},
		{"xla:relative/p.so", "float64", "xla:relative/p.so"},
	} {
		if got := ForDType(c.spec, c.dtype); got != c.want {
			t.Errorf("ForDType(%q, %q) = %q, want %q", c.spec, c.dtype, got, c.want)
		}
	}
	t.Setenv(EnvVar, "xla:cpu")
	if got := ForDType("", "float64"); got != "xla:cpu,f64" {
		t.Errorf("ForDType with $%s=xla:cpu = %q, want xla:cpu,f64", EnvVar, got)
	}
}
