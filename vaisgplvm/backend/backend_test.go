package backend

import (
	"strings"
	"testing"
)

func TestOpenSpecs(t *testing.T) {
	c, err := Open("go")
	if err != nil || c.Spec != "go" || c.Backend == nil {
		t.Fatalf("go: %+v, %v", c, err)
	}
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir()) // no plugins: auto must fall back to go
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

func TestPreferredPlugin(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"cpu", "cuda"}, "cuda"}, {[]string{"tpu", "cpu"}, "cpu"}, {[]string{"tpu"}, "tpu"}} {
		if got := preferredPlugin(c.in); got != c.want {
			t.Errorf("%v: got %q, want %q", c.in, got, c.want)
		}
	}
}
