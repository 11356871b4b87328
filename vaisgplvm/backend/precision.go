package backend

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Exact float32 on NVIDIA GPUs. Under XLA's defaults the CUDA plugin runs float32 matrix products
// in TensorFloat-32 (operands rounded to a 10-bit mantissa) on Ampere and later GPUs, through two
// routes: cuBLAS, and XLA's own Triton GEMM kernels. On an H100 (docs/benchmarks.md, "The test suite
// on XLA-CUDA") a float32 expected log-likelihood was then 1.7e-3 relative off float64;
// NVIDIA_TF32_OVERRIDE=0 alone changed nothing, --xla_gpu_enable_triton_gemm=false alone fixed it
// but a float32 IWVI run still diverged, and both together gave float32 bounds within 2e-5 of
// float64 after 60 training iterations.

// TF32OverrideEnv is the variable that stops cuBLAS and cuDNN from using TF32 when "0".
const TF32OverrideEnv = "NVIDIA_TF32_OVERRIDE"

// TritonGEMMFlag is the XLA flag that turns XLA's Triton GEMM emitter off (cuBLAS runs the products).
const TritonGEMMFlag = "--xla_gpu_enable_triton_gemm=false"

// isCUDAPlugin reports whether a plugin name or path names a CUDA PJRT plugin ("cuda",
// .../jax_plugins/xla_cuda13/xla_cuda_plugin.so).
func isCUDAPlugin(plugin string) bool {
	return strings.Contains(strings.ToLower(plugin), "cuda")
}

// exactFloat32Env sets, in this process's environment, what keeps float32 matrix products exact
// on NVIDIA GPUs: NVIDIA_TF32_OVERRIDE=0 and TritonGEMMFlag appended to XLA_FLAGS. XLA parses
// XLA_FLAGS once per process and cuBLAS reads the override when it initialises, both inside the
// plugin, so this must run before the first CUDA plugin of the process is loaded; later calls
// change nothing that plugin does. (Go's os.Setenv also sets the C environment in cgo programs,
// which the plugin's getenv reads.) A setting the user made is kept: a set
// NVIDIA_TF32_OVERRIDE (any value), an XLA_FLAGS that already sets xla_gpu_enable_triton_gemm.
// Returns what it set, "" when nothing.
func exactFloat32Env() (string, error) {
	var set []string
	if _, ok := os.LookupEnv(TF32OverrideEnv); !ok {
		if err := os.Setenv(TF32OverrideEnv, "0"); err != nil {
			return "", fmt.Errorf("setting %s: %w", TF32OverrideEnv, err)
		}
		set = append(set, TF32OverrideEnv+"=0")
	}
	flags := os.Getenv("XLA_FLAGS")
	if !setsFlag(flags, "xla_gpu_enable_triton_gemm") {
		if err := os.Setenv("XLA_FLAGS", strings.TrimSpace(flags+" "+TritonGEMMFlag)); err != nil {
			return "", fmt.Errorf("setting XLA_FLAGS: %w", err)
		}
		set = append(set, "XLA_FLAGS+="+TritonGEMMFlag)
	}
	return strings.Join(set, ", "), nil
}

// setsFlag reports whether the XLA_FLAGS value flags sets the flag name (as --name or --name=value).
func setsFlag(flags, name string) bool {
	for _, f := range strings.Fields(flags) {
		f = strings.TrimLeft(f, "-")
		if f == name || strings.HasPrefix(f, name+"=") {
			return true
		}
	}
	return false
}

// precisionFor prepares the environment for starting plugin with options: for a CUDA plugin
// without the tf32 option it calls exactFloat32Env. Returns a note for Choice.Reason ("" when
// nothing was set).
func precisionFor(plugin string, options []string) (string, error) {
	if !isCUDAPlugin(plugin) || slices.Contains(options, "tf32") {
		return "", nil
	}
	set, err := exactFloat32Env()
	if err != nil || set == "" {
		return "", err
	}
	return "float32 products kept exact (set " + set + "; add ,tf32 for TensorFloat-32)", nil
}

// openPlugin starts the PJRT plugin (name or absolute path) with options, after precisionFor.
func openPlugin(plugin string, options []string) (*Choice, error) {
	note, err := precisionFor(plugin, options)
	if err != nil {
		return nil, err
	}
	resolved := strings.Join(append([]string{plugin}, options...), ",")
	b, err := xlaSupport.open(resolved)
	if err != nil {
		return nil, err
	}
	return &Choice{Backend: b, Spec: "xla:" + resolved, Reason: note}, nil
}
