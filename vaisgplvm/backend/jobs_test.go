package backend

import (
	"testing"

	backends "github.com/gomlx/compute"
)

// xlaNamed is a backend that answers Name and PluginName as go-xla's does (the rest is unused).
type xlaNamed struct {
	backends.Backend
	plugin string
}

func (xlaNamed) Name() string         { return "xla" }
func (f xlaNamed) PluginName() string { return f.plugin }

// TestConcurrentTrainings: one training at a time on a CUDA plugin (by name or JAX's path), no
// limit on the pure-Go backend or a CPU plugin; Label names the plugin.
func TestConcurrentTrainings(t *testing.T) {
	goB, err := New("go")
	if err != nil {
		t.Fatal(err)
	}
	defer goB.Finalize()
	for _, c := range []struct {
		b     backends.Backend
		jobs  int
		label string
	}{
		{goB, 0, goB.Name()},
		{xlaNamed{plugin: "cuda"}, 1, "xla:cuda"},
		{xlaNamed{plugin: "/opt/venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"}, 1, "xla:/opt/venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"},
		{xlaNamed{plugin: "cpu"}, 0, "xla:cpu"},
	} {
		if got := ConcurrentTrainings(c.b); got != c.jobs {
			t.Errorf("ConcurrentTrainings(%s) = %d, want %d", Label(c.b), got, c.jobs)
		}
		if got := Label(c.b); got != c.label {
			t.Errorf("Label = %q, want %q", got, c.label)
		}
	}
}
