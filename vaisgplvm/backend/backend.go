// Package backend chooses the GoMLX backend that runs the model graphs.
//
// Spec strings (the -backend flag of every command; when empty, $VAISGPLVM_BACKEND, then "auto"):
//
//	go              the pure-Go backend, always available, runs offline, started with GoConfig:
//	                independent ops run concurrently, on unbounded goroutines.
//	go:CONFIG       the pure-Go backend (github.com/gomlx/compute/gobackend) with CONFIG
//	                instead (comma-separated: ops_sequential, ops_parallel, parallelism=N,
//	                dependency_order, creation_order), e.g. go:ops_sequential to run one op at
//	                a time. Parallel ops on a bounded pool are refused (see GoConfig).
//	auto            XLA when this binary has XLA support and a PJRT plugin starts, otherwise go;
//	                Open says which it chose and why. Plugins are tried in this order: GoMLX's
//	                plugin named cuda on $PJRT_PLUGIN_LIBRARY_PATH, JAX's CUDA plugin in a
//	                pip-installed JAX (jax_plugins/xla_cuda*/xla_cuda_plugin.so under
//	                $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local, /usr, /opt/conda,
//	                /opt/venv), then the plugin named cpu; a CUDA plugin on a machine without a
//	                GPU fails to start and the next one is tried.
//	xla             XLA with the first plugin of auto's order that starts; an error if none.
//	xla:NAME        XLA with the PJRT plugin NAME found in $PJRT_PLUGIN_LIBRARY_PATH (files
//	                pjrt_c_api_NAME_plugin.so or pjrt-plugin-NAME.so).
//	xla:/ABS/PATH   XLA with the PJRT plugin at that absolute path (e.g. JAX's CUDA plugin,
//	                .../site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so).
//	xla...,tf32     any xla spec followed by options (XLAOptions): tf32 makes float32 matrix
//	                products use TensorFloat-32 on NVIDIA GPUs (explicitly, through the
//	                dot's algorithm). Without it, before a CUDA plugin starts, Open sets
//	                NVIDIA_TF32_OVERRIDE=0 and adds --xla_gpu_enable_triton_gemm=false to
//	                XLA_FLAGS in the process environment unless the user set them (see
//	                precision.go: under XLA's defaults both cuBLAS and XLA's Triton GEMMs
//	                round float32 operands to TF32), and says so in the reason. XLA reads
//	                these once per process: a later start that wants them after a first one
//	                without them says that float32 products may use TF32.
//	xla...,f64      (also auto,f64) for a process whose graphs are all float64: Open leaves
//	                the environment alone (Float64Option); the command adds it for
//	                --dtype float64 (ForDType).
//
// XLA support needs cgo and is compiled only with the build tag xla (go build -tags xla ...);
// without it every xla spec is an error that says so. No spec ever downloads a plugin: GoMLX's
// auto-install is switched off, so offline machines fail fast with a clear error.
package backend

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	backends "github.com/gomlx/compute"
	simplego "github.com/gomlx/compute/gobackend"
)

// EnvVar names the environment variable read when no spec is given.
const EnvVar = "VAISGPLVM_BACKEND"

// GoConfig is the pure-Go backend's configuration of the go spec. Ops run in parallel and the worker
// pool is unbounded (parallelism=-1): with GoMLX v0.26.0's default bounded pool (2 x NumCPU
// goroutines) the parallel scheduler deadlocked on 2-core machines when a DotGeneral waited for
// workers that other ops held (v0.28.6's gobackend ran 1,050 VAIS iterations on its bounded pool
// without one, at the same speed: docs/cpu-performance.md), and a one-op-at-a-time schedule
// (ops_sequential) leaves the second core idle. Every op
// computes the same sums in the same order under either schedule, so results are bit-identical
// (tested); a Frey VAIS step (K = 25, batch 100) takes about 30% less time on 2 cores.
// With GoMLX v0.26.0, `go test -race` reported data races inside that parallel executor (an op
// read its inputs' use counters without the lock others updated them under). With v0.28.6,
// `go test -race -gcflags=all=-d=checkptr=0 -cpu 8 ./vaisgplvm/bounds` reports none; without
// -d=checkptr=0 the race detector's pointer check stops the test inside gobackend's small-matrix
// kernel (compute v0.1.5 dot/matmul/nosimd_small.go:253: "pointer arithmetic result points to
// invalid allocation"), in GoMLX, not in this module.
const GoConfig = "ops_parallel,parallelism=-1"

// Choice is a started backend and the reason it was chosen (one line, for logs).
type Choice struct {
	Backend backends.Backend
	Spec    string // the spec that was resolved ("go", "xla:cuda", ...)
	Reason  string
}

// xlaSupport is set by xla.go when the binary is built with -tags xla.
var xlaSupport *struct {
	plugins func() []string                               // PJRT plugin names found
	open    func(plugin string) (backends.Backend, error) // plugin name or absolute path
}

// Open starts the backend named by spec (see the package doc). Errors name the spec and the fix.
func Open(spec string) (*Choice, error) {
	spec = resolve(spec)
	switch {
	case spec == "go":
		b, err := pureGo()
		return &Choice{Backend: b, Spec: "go", Reason: "requested"}, err
	case strings.HasPrefix(spec, "go:"):
		b, err := newSimpleGo(strings.TrimPrefix(spec, "go:"))
		if err != nil {
			return nil, fmt.Errorf("backend %q: %w", spec, err)
		}
		return &Choice{Backend: b, Spec: spec, Reason: "requested"}, nil
	case isAutoSpec(spec):
		_, options, err := parseXLA(spec)
		if err != nil {
			return nil, err
		}
		if xlaSupport == nil {
			b, err := pureGo()
			return &Choice{Backend: b, Spec: "go", Reason: "auto: this binary has no XLA support (build with -tags xla)"}, err
		}
		c, failures := openFirst(candidates(), options)
		if c != nil {
			c.Reason = "auto: PJRT plugin " + c.Reason
			return c, nil
		}
		reason := "auto: no PJRT plugin found (set PJRT_PLUGIN_LIBRARY_PATH or use xla:/abs/path.so)"
		if len(failures) > 0 {
			reason = "auto: " + strings.Join(failures, "; ")
		}
		b, err := pureGo()
		return &Choice{Backend: b, Spec: "go", Reason: reason}, err
	case isXLASpec(spec):
		plugin, options, err := parseXLA(spec)
		if err != nil {
			return nil, err
		}
		if xlaSupport == nil {
			return nil, fmt.Errorf("backend %q: this binary was built without XLA support; rebuild with -tags xla (needs cgo) or use go", spec)
		}
		if plugin == "" {
			c, failures := openFirst(candidates(), options)
			if c != nil {
				c.Reason = "requested; PJRT plugin " + c.Reason
				return c, nil
			}
			if len(failures) > 0 {
				return nil, fmt.Errorf("backend %q: %s", spec, strings.Join(failures, "; "))
			}
			return nil, fmt.Errorf("backend %q: no PJRT plugin found; set PJRT_PLUGIN_LIBRARY_PATH or use xla:/abs/path/to/plugin.so", spec)
		}
		c, err := openPlugin(plugin, options)
		if err != nil {
			return nil, fmt.Errorf("backend %q: %w", spec, err)
		}
		c.Reason = joinReason("requested", c.Reason)
		return c, nil
	}
	return nil, fmt.Errorf("unknown backend %q: want auto, go, go:CONFIG, xla, xla:NAME or xla:/abs/path.so (auto and xla optionally followed by ,tf32 or ,f64)", spec)
}

// resolve returns spec, or when it is "" the value of $VAISGPLVM_BACKEND, or when that is unset "auto".
func resolve(spec string) string {
	if spec == "" {
		spec = os.Getenv(EnvVar)
	}
	if spec == "" {
		spec = "auto"
	}
	return spec
}

// isAutoSpec reports whether spec is auto, optionally with options (auto,...).
func isAutoSpec(spec string) bool {
	return spec == "auto" || strings.HasPrefix(spec, "auto,")
}

// isXLASpec reports whether spec names the XLA backend (xla, xla:..., xla,...).
func isXLASpec(spec string) bool {
	return spec == "xla" || strings.HasPrefix(spec, "xla:") || strings.HasPrefix(spec, "xla,")
}

// XLAOptions are the options an xla spec may end with (",tf32"), passed to GoMLX's XLA backend:
// tf32 runs float32 matrix products in TensorFloat-32 on NVIDIA GPUs (10-bit mantissa inputs,
// float32 accumulation); shared_buffers / noshared_buffers override host-memory sharing.
// f64 (Float64Option) is ours: a float64-only process keeps XLA's GPU defaults.
var XLAOptions = []string{"tf32", Float64Option, "shared_buffers", "noshared_buffers"}

// parseXLA splits an xla spec (xla, xla:NAME, xla:/ABS/PATH, each optionally followed by
// ,OPTION...) into the plugin ("" = preferred) and its options, checking both; for auto,OPTION...
// the plugin is "".
func parseXLA(spec string) (plugin string, options []string, err error) {
	parts := strings.Split(spec, ",")
	plugin = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(parts[0], "auto"), "xla"), ":")
	if strings.ContainsRune(plugin, '/') && !strings.HasPrefix(plugin, "/") {
		return "", nil, fmt.Errorf("backend %q: a plugin path must be absolute", spec)
	}
	for _, o := range parts[1:] {
		if !slices.Contains(XLAOptions, o) {
			return "", nil, fmt.Errorf("backend %q: unknown XLA option %q (want %s)", spec, o, strings.Join(XLAOptions, ", "))
		}
		options = append(options, o)
	}
	return plugin, options, nil
}

// OpenShared is Open for a backend that several trainings use, up to jobs of them at the same time
// (the tables queue total trainings on jobs workers). When more trainings than workers queue up,
// the pure-Go backend chosen by "go" or "auto" runs each training's ops one at a time (simplego
// ops_sequential): the workers keep the cores busy, and parallel op scheduling on top only adds
// goroutine overhead. With a worker per training the short ones finish first and the longest then
// runs alone, so ops stay parallel. The timings behind both rules are in docs/benchmarks.md,
// "Figures behind the code's choices". Explicit go:CONFIG specs are kept.
func OpenShared(spec string, jobs, total int) (*Choice, error) {
	c, err := Open(spec)
	if err != nil || jobs <= 1 || total <= jobs || c.Spec != "go" {
		return c, err
	}
	b, err := newSimpleGo("ops_sequential")
	if err != nil {
		return nil, fmt.Errorf("starting the pure-Go backend: %w", err)
	}
	c.Backend.Finalize()
	return &Choice{Backend: b, Spec: "go:ops_sequential", Reason: fmt.Sprintf("%s; ops one at a time within each of %d concurrent jobs", c.Reason, jobs)}, nil
}

// New returns the backend named by spec (see Open) without the reason.
func New(spec string) (backends.Backend, error) {
	c, err := Open(spec)
	if err != nil {
		return nil, err
	}
	return c.Backend, nil
}

// candidates are the PJRT plugins an auto or bare xla spec tries, in order (see pluginCandidates):
// the plugins GoMLX finds by name, and JAX's CUDA plugins under the usual Python prefixes.
func candidates() []string {
	return pluginCandidates(xlaSupport.plugins(), jaxCUDAPlugins(pythonPrefixes()))
}

// openFirst starts the first of plugins (names or absolute paths) that starts with options, and
// returns it with a reason naming it; nil and one line per plugin that failed otherwise. A CUDA
// plugin fails to start on a machine without a GPU, so the next candidate (e.g. cpu) is tried.
func openFirst(plugins, options []string) (*Choice, []string) {
	var failures []string
	for _, p := range plugins {
		c, err := openPlugin(p, options)
		if err != nil {
			failures = append(failures, fmt.Sprintf("PJRT plugin %q failed to start (%v)", p, err))
			continue
		}
		reason := fmt.Sprintf("%q found", p)
		if len(failures) > 0 {
			reason += " after " + strings.Join(failures, "; ")
		}
		c.Reason = joinReason(reason, c.Reason)
		return c, nil
	}
	return nil, failures
}

// joinReason appends a non-empty note to a reason.
func joinReason(reason, note string) string {
	if note == "" {
		return reason
	}
	return reason + "; " + note
}

func pureGo() (backends.Backend, error) {
	b, err := newSimpleGo(GoConfig)
	if err != nil {
		return nil, fmt.Errorf("starting the pure-Go backend: %w", err)
	}
	return b, nil
}

// newSimpleGo starts simplego with config. simplego.New prints a line to standard output when
// config sets parallelism, which would corrupt the commands' JSON output; it is discarded.
func newSimpleGo(config string) (backends.Backend, error) {
	if err := checkGoConfig(config); err != nil {
		return nil, err
	}
	if !strings.Contains(config, "parallelism") {
		return simplego.New(config)
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return simplego.New(config)
	}
	defer devNull.Close()
	stdout := os.Stdout
	os.Stdout = devNull
	defer func() { os.Stdout = stdout }()
	return simplego.New(config)
}

// checkGoConfig refuses a simplego configuration known to deadlock in GoMLX v0.26.0: ops run in
// parallel (ops_parallel, or simplego's default, which runs them in parallel when one graph runs
// alone) on a bounded worker pool (simplego's default, or parallelism=N with N > 0); see GoConfig.
func checkGoConfig(config string) error {
	parallel, bounded := true, true
	for _, part := range strings.Split(config, ",") {
		key, value, _ := strings.Cut(part, "=")
		switch key {
		case "ops_sequential":
			parallel = false
		case "ops_parallel":
			parallel = true
		case "parallelism":
			n, err := strconv.Atoi(value)
			bounded = err != nil || n > 0
		}
	}
	if parallel && bounded {
		return fmt.Errorf("go:%s runs ops in parallel on a bounded worker pool, which deadlocked on 2 cores (GoMLX v0.26.0): add parallelism=-1 (unbounded, as the go spec does) or use ops_sequential", config)
	}
	return nil
}
