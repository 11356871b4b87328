package experiment

import (
	"bytes"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// TestBenchProfile: with BenchOptions.Profile the timed iterations leave a CPU profile (gzip,
// pprof's format) in the writer, and the timings are reported as without it.
func TestBenchProfile(t *testing.T) {
	x, mask, err := BenchData("oilflow", false, false)
	if err != nil {
		t.Fatal(err)
	}
	x = x[:40] // oilflow has no missing entries: mask is nil
	cfg := model.DefaultConfig("iwvi", 1)
	cfg.M, cfg.K, cfg.Q = 5, 2, 2
	var prof bytes.Buffer
	r, err := Bench(cfg, "oilflow", x, mask, testutil.Backend(), BenchOptions{Iters: 2, Profile: &prof})
	if err != nil {
		t.Fatal(err)
	}
	if b := prof.Bytes(); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("profile: %d bytes, not gzip", len(b))
	}
	if r.Iterations != 2 || !(r.MedianSecs > 0) {
		t.Errorf("bench result %+v", r)
	}
}
