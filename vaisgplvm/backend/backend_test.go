package backend

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

func TestOpenSpecs(t *testing.T) {
	c, err := Open("go")
	if err != nil || c.Spec != "go" || c.Backend == nil {
		t.Fatalf("go: %+v, %v", c, err)
	}
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir()) // no plugins: auto must fall back to go
	hidePythonPlugins(t)
	c, err = Open("auto")
	if err != nil || c.Spec != "go" || !strings.HasPrefix(c.Reason, "auto:") {
		t.Fatalf("auto: %+v, %v", c, err)
	}
	t.Setenv(EnvVar, "go")
	if c, err := Open(""); err != nil || c.Spec != "go" || c.Reason != "requested" {
		t.Errorf("empty spec with $%s=go: %+v, %v", EnvVar, c, err)
	}
	for _, bad := range []string{"gpu", "xla:relative/plugin.so", "xla:/nonexistent/plugin.so"} {
		if _, err := Open(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	if xlaSupport == nil {
		if _, err := Open("xla"); err == nil || !strings.Contains(err.Error(), "-tags xla") {
			t.Errorf("xla without XLA support: error %v should name -tags xla", err)
		}
	}
}

// hidePythonPlugins makes the plugin search see no Python prefix, so that a machine with JAX
// installed (the GPU machines run these tests too) gives the same answers as one without.
func hidePythonPlugins(t *testing.T) {
	t.Setenv("VIRTUAL_ENV", "")
	t.Setenv("CONDA_PREFIX", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PATH", t.TempDir()) // no python3 whose prefix could hold a real plugin
	saved := systemPrefixes
	systemPrefixes = nil
	t.Cleanup(func() { systemPrefixes = saved })
}

func TestPluginCandidates(t *testing.T) {
	jax := []string{"/venv/jax_plugins/xla_cuda13/xla_cuda_plugin.so"}
	for _, c := range []struct {
		named, jax, want []string
	}{
		{nil, nil, nil},
		{[]string{"cpu", "cuda"}, jax, []string{"cuda", jax[0], "cpu"}},
		{[]string{"tpu", "cpu"}, nil, []string{"cpu", "tpu"}},
		{[]string{"tpu", "cpu"}, jax, []string{jax[0], "cpu", "tpu"}},
		{nil, jax, jax},
	} {
		if got := pluginCandidates(c.named, c.jax); !slices.Equal(got, c.want) {
			t.Errorf("named %v, jax %v: got %v, want %v", c.named, c.jax, got, c.want)
		}
	}
}

// TestJAXCUDAPlugins builds pip layouts of JAX's CUDA plugin in temporary prefixes: a virtual
// environment with cuda12 and cuda13 plugins (newest first), a Debian dist-packages prefix, a
// symbolic link to an already found plugin (reported once), and a prefix without JAX.
func TestJAXCUDAPlugins(t *testing.T) {
	venv, system, empty := t.TempDir(), t.TempDir(), t.TempDir()
	put := func(root, rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c12 := put(venv, "lib/python3.12/site-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so")
	c13 := put(venv, "lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so")
	deb := put(system, "lib/python3/dist-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so")
	put(venv, "lib/python3.12/site-packages/jax_plugins/xla_cuda13/other.so")
	link := filepath.Join(empty, "lib/python3.11/site-packages/jax_plugins/xla_cuda13")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(c13), link); err != nil {
		t.Fatal(err)
	}
	got := jaxCUDAPlugins([]string{venv, empty, system, t.TempDir()})
	if want := []string{c13, c12, deb}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	t.Setenv("VIRTUAL_ENV", venv)
	if p := pythonPrefixes(); len(p) == 0 || p[0] != venv {
		t.Errorf("pythonPrefixes %v should start with $VIRTUAL_ENV %s", p, venv)
	}
	hidePythonPlugins(t) // only the fake plugins from here on
	// An environment that is not activated is found through its bin/python3 on $PATH (the GPU
	// machines' /opt/torch/.venv: seen there, 2026-11-22).
	if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(venv, "bin", "python3"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(venv, "bin"))
	if p := pythonPrefixes(); !slices.Contains(p, venv) {
		t.Errorf("pythonPrefixes %v should hold %s, the prefix of the python3 on $PATH", p, venv)
	}
	t.Setenv("PATH", t.TempDir())
	t.Setenv("VIRTUAL_ENV", venv)
	if xlaSupport != nil { // the fake plugins are not PJRT plugins: auto falls back to go and says why
		t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir())
		c, err := Open("auto")
		if err != nil || c.Spec != "go" || !strings.Contains(c.Reason, c13) || !strings.Contains(c.Reason, "failed to start") {
			t.Errorf("auto with a broken JAX plugin: %+v, %v", c, err)
		}
		if _, err := Open("xla"); err == nil || !strings.Contains(err.Error(), c12) {
			t.Errorf("xla with broken JAX plugins: error %v should name each one", err)
		}
	}
}

// TestGoConfigs: go:CONFIG passes CONFIG to simplego (an unknown option is an error naming the
// spec), and the default go backend writes nothing to standard output (the commands print JSON).
func TestGoConfigs(t *testing.T) {
	if c, err := Open("go:ops_sequential"); err != nil || c.Spec != "go:ops_sequential" {
		t.Fatalf("go:ops_sequential: %+v, %v", c, err)
	}
	if _, err := Open("go:no_such_option"); err == nil || !strings.Contains(err.Error(), "go:no_such_option") {
		t.Errorf("go:no_such_option: error %v should name the spec", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	_, err = Open("go")
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	if err != nil || len(out) != 0 {
		t.Errorf("Open(go): err %v, wrote %q to standard output", err, out)
	}
}

// TestParallelScheduleIsBitIdentical: the default (parallel) go backend computes exactly the same
// values as one op at a time, on a graph with independent branches, matrix products of both
// DotGeneral paths (small and blocked) and a gradient.
func TestParallelScheduleIsBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([][]float64, 100)
	for i := range a {
		a[i] = make([]float64, 560)
		for j := range a[i] {
			a[i][j] = rng.NormFloat64()
		}
	}
	fn := func(x *graph.Node) []*graph.Node {
		g := x.Graph()
		w := graph.MulScalar(graph.Iota(g, shapes.Make(dtypes.Float64, 560, 50), 0), 1e-3)
		h := graph.Tanh(graph.MatMul(x, w))                                  // [100, 50], blocked path
		k := graph.Exp(graph.Neg(graph.MatMul(h, graph.Transpose(h, 0, 1)))) // [100, 100]
		v := graph.Add(graph.ReduceAllSum(graph.Mul(k, k)), graph.ReduceAllSum(graph.Sin(h)))
		return []*graph.Node{v, graph.Gradient(v, x)[0]}
	}
	run := func(spec string) []float64 {
		c, err := Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		outs := graph.MustExecOnceN(c.Backend, fn, a)
		return append([]float64{outs[0].Value().(float64)}, outs[1].Value().([][]float64)[7]...)
	}
	seq, par := run("go:ops_sequential"), run("go")
	for i := range seq {
		if seq[i] != par[i] {
			t.Fatalf("value %d: parallel %v, sequential %v", i, par[i], seq[i])
		}
	}
}

// TestParseXLA: xla specs split into plugin and options; unknown options and relative paths are
// errors that name the spec, before any plugin is loaded.
func TestParseXLA(t *testing.T) {
	for _, c := range []struct {
		spec, plugin string
		options      []string
	}{
		{"xla", "", nil},
		{"xla,tf32", "", []string{"tf32"}},
		{"xla:cuda", "cuda", nil},
		{"xla:cuda,tf32", "cuda", []string{"tf32"}},
		{"xla:/opt/p/xla_cuda_plugin.so,tf32,noshared_buffers", "/opt/p/xla_cuda_plugin.so", []string{"tf32", "noshared_buffers"}},
	} {
		plugin, options, err := parseXLA(c.spec)
		if err != nil || plugin != c.plugin || strings.Join(options, ",") != strings.Join(c.options, ",") {
			t.Errorf("%q: got %q %q %v, want %q %q", c.spec, plugin, options, err, c.plugin, c.options)
		}
	}
	for _, bad := range []string{"xla:cuda,fp8", "xla:rel/p.so", "xla,"} {
		if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: error %v should name the spec", bad, err)
		}
	}
	if xlaSupport == nil {
		if _, err := Open("xla:cuda,tf32"); err == nil || !strings.Contains(err.Error(), "-tags xla") {
			t.Errorf("xla:cuda,tf32 without XLA support: error %v should name -tags xla", err)
		}
	}
}

// TestOpenShared: trainings queued on several workers get the pure-Go backend with one op at a time
// per training; one worker, a worker per training, or an explicit go:CONFIG keep the spec as given.
func TestOpenShared(t *testing.T) {
	if c, err := OpenShared("go", 2, 6); err != nil || c.Spec != "go:ops_sequential" || !strings.Contains(c.Reason, "2 concurrent jobs") {
		t.Errorf("go, 2 jobs, 6 trainings: %+v, %v", c, err)
	}
	for _, c := range [][2]int{{1, 6}, {2, 2}, {4, 3}} {
		if ch, err := OpenShared("go", c[0], c[1]); err != nil || ch.Spec != "go" {
			t.Errorf("go, %d jobs, %d trainings: %+v, %v", c[0], c[1], ch, err)
		}
	}
	if c, err := OpenShared("go:ops_parallel,parallelism=-1", 2, 6); err != nil || c.Spec != "go:ops_parallel,parallelism=-1" {
		t.Errorf("explicit config: %+v, %v", c, err)
	}
	if _, err := OpenShared("nope", 2, 6); err == nil {
		t.Error("bad spec: want an error")
	}
}

// TestRefusesDeadlockingGoConfig: simplego configurations that run ops in parallel on a bounded
// worker pool (known to deadlock in GoMLX v0.26.0 on 2 cores) are refused, naming the fix; the
// sequential and unbounded ones start.
func TestRefusesDeadlockingGoConfig(t *testing.T) {
	for _, spec := range []string{"go:ops_parallel", "go:ops_parallel,parallelism=2", "go:parallelism=4", "go:dependency_order"} {
		if _, err := Open(spec); err == nil || !strings.Contains(err.Error(), "deadlock") || !strings.Contains(err.Error(), "parallelism=-1") {
			t.Errorf("%s: %v, want a refusal naming the deadlock and parallelism=-1", spec, err)
		}
	}
	for _, spec := range []string{"go:ops_sequential", "go:ops_parallel,parallelism=-1", "go:parallelism=0", "go:ops_sequential,parallelism=2"} {
		if _, err := Open(spec); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
}
