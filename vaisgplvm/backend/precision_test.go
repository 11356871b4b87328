package backend

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
)

// fakeXLA replaces xlaSupport for the test: open records the environment each plugin starts
// with, and only the plugin named ok starts (as the pure-Go backend).
func fakeXLA(t *testing.T, ok string) map[string][2]string {
	t.Helper()
	seen := map[string][2]string{}
	saved := xlaSupport
	t.Cleanup(func() { xlaSupport = saved })
	xlaSupport = &struct {
		plugins func() []string
		open    func(plugin string) (backends.Backend, error)
	}{
		plugins: func() []string { return []string{"cuda", "cpu"} },
		open: func(resolved string) (backends.Backend, error) {
			plugin := strings.Split(resolved, ",")[0]
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
