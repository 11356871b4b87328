package backend

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
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

// Float64Option is the XLA spec option (",f64") for a process whose graphs all compute in
// float64: Open then leaves the environment as it is for a CUDA plugin, since the exact-float32
// settings concern float32 products only and --xla_gpu_enable_triton_gemm=false also takes XLA's
// Triton GEMM fusions from float64 graphs, which made float64 steps slower on an H100
// (docs/benchmarks.md, "float64 with and without the exact-float32 settings"). A float32 graph run
// on such a backend may use TF32.
// The command adds it for --dtype float64 (ForDType).
const Float64Option = "f64"

// cudaFirst records this process's first CUDA plugin start and whether it had the exact-float32
// settings: XLA parses XLA_FLAGS and cuBLAS reads NVIDIA_TF32_OVERRIDE once per process, so every
// later start runs with what the first one had.
var cudaFirst struct {
	sync.Mutex
	started, exact bool
}

// wantsExactFloat32 reports whether a start of plugin with options should keep float32 products
// exact: a CUDA plugin without the tf32 and f64 options.
func wantsExactFloat32(plugin string, options []string) bool {
	return isCUDAPlugin(plugin) && !slices.Contains(options, "tf32") && !slices.Contains(options, Float64Option)
}

// precisionFor prepares the environment for starting plugin with options: for a CUDA plugin that
// wants exact float32 products (wantsExactFloat32) it calls exactFloat32Env, unless an earlier
// CUDA start of this process ran without them, which it then says. Returns a note for
// Choice.Reason ("" when there is nothing to say).
func precisionFor(plugin string, options []string) (string, error) {
	if !isCUDAPlugin(plugin) || slices.Contains(options, "tf32") {
		return "", nil
	}
	cudaFirst.Lock()
	started, exact := cudaFirst.started, cudaFirst.exact
	cudaFirst.Unlock()
	if slices.Contains(options, Float64Option) {
		if started && exact {
			return "float64 only; the exact-float32 settings of this process's earlier CUDA start stay", nil
		}
		return "float64 only: XLA's GPU defaults kept (float32 products may use TensorFloat-32)", nil
	}
	if started && !exact {
		return "float32 products may use TensorFloat-32: this process started a CUDA plugin earlier without the exact-float32 settings, and XLA and cuBLAS read them once per process", nil
	}
	set, err := exactFloat32Env()
	if err != nil || set == "" {
		return "", err
	}
	return "float32 products kept exact (set " + set + "; add ,tf32 for TensorFloat-32)", nil
}

// startedCUDA records a successful start of plugin with options (see cudaFirst).
func startedCUDA(plugin string, options []string) {
	if !isCUDAPlugin(plugin) {
		return
	}
	cudaFirst.Lock()
	defer cudaFirst.Unlock()
	if !cudaFirst.started {
		cudaFirst.started, cudaFirst.exact = true, wantsExactFloat32(plugin, options)
	}
}

// openPlugin starts the PJRT plugin (name or absolute path) with options, after precisionFor.
// Float64Option is ours: GoMLX gets the other options.
func openPlugin(plugin string, options []string) (*Choice, error) {
	note, err := precisionFor(plugin, options)
	if err != nil {
		return nil, err
	}
	gomlxOptions := slices.DeleteFunc(slices.Clone(options), func(o string) bool { return o == Float64Option })
	b, err := xlaSupport.open(strings.Join(append([]string{plugin}, gomlxOptions...), ","))
	if err != nil {
		return nil, err
	}
	startedCUDA(plugin, options)
	return &Choice{Backend: b, Spec: "xla:" + strings.Join(append([]string{plugin}, options...), ","), Reason: note}, nil
}

// ForDType returns spec (resolved as Open does: "" means $VAISGPLVM_BACKEND, then auto) with
// Float64Option added when dtype is "float64" and spec may start XLA (auto or an xla spec) without
// a tf32 or f64 option; otherwise (a bad spec too) the resolved spec unchanged.
func ForDType(spec, dtype string) string {
	spec = resolve(spec)
	if dtype != "float64" || !(isAutoSpec(spec) || isXLASpec(spec)) {
		return spec
	}
	_, options, err := parseXLA(spec)
	if err != nil || slices.Contains(options, "tf32") || slices.Contains(options, Float64Option) {
		return spec // a bad spec stays as given, so that Open's error names what the user wrote
	}
	return spec + "," + Float64Option
}
