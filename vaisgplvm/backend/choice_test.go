package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecide: a forced choice is taken without measuring (and refused when the build cannot run
// it); one available family is taken as it is; otherwise the probe measures each family once, the
// fastest is kept and cached, and the next call reads the cache without measuring; a damaged
// cache file, or one of another key (another CPU, Go or GoMLX), is measured again and rewritten.
func TestDecide(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "sub", "choice.json")
	avail := []string{"portable", "avx2", "avx512"}
	calls := 0
	probe := func(k string) (float64, error) {
		calls++
		return map[string]float64{"portable": 0.2, "avx2": 0.6, "avx512": 0.5}[k], nil
	}
	c, err := Decide("avx512", avail, cache, "key1", probe)
	if err != nil || c.Kernels != "avx512" || !strings.Contains(c.Why, "forced") || calls != 0 {
		t.Fatalf("forced: %+v, %v, %d probes", c, err, calls)
	}
	if _, err := Decide("avx512", []string{"portable"}, cache, "key1", probe); err == nil || !strings.Contains(err.Error(), ChoiceEnv) {
		t.Errorf("forcing kernels the build lacks: %v", err)
	}
	if c, _ := Decide("", []string{"portable"}, cache, "key1", probe); c.Kernels != "portable" || calls != 0 {
		t.Errorf("one family: %+v, %d probes", c, calls)
	}
	c, err = Decide("auto", avail, cache, "key1", probe)
	if err != nil || c.Kernels != "portable" || c.Why != "measured" || calls != 3 || c.Seconds["avx512"] != 0.5 {
		t.Fatalf("measured: %+v, %v, %d probes", c, err, calls)
	}
	c, err = Decide("", avail, cache, "key1", probe)
	if err != nil || c.Kernels != "portable" || !strings.HasPrefix(c.Why, "cached") || calls != 3 {
		t.Errorf("cached: %+v, %v, %d probes (want none more)", c, err, calls)
	}
	for name, content := range map[string]string{"damaged": "{not json", "stale": `{"kernels": "avx512", "key": "another CPU"}`} {
		if err := os.WriteFile(cache, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		before := calls
		c, err := Decide("", avail, cache, "key1", probe)
		if err != nil || c.Kernels != "portable" || c.Why != "measured" || calls != before+3 {
			t.Errorf("%s cache: %+v, %v, %d probes", name, c, err, calls-before)
		}
		if buf, _ := os.ReadFile(cache); !strings.Contains(string(buf), `"key": "key1"`) {
			t.Errorf("%s cache not rewritten: %s", name, buf)
		}
	}
}

// TestAvailable: portable always; the SIMD families only in a simd build on a CPU with them.
func TestAvailable(t *testing.T) {
	for _, c := range []struct {
		simd, avx2, avx512 bool
		want               string
	}{
		{false, true, true, "portable"},
		{true, false, false, "portable"},
		{true, true, false, "portable avx2"},
		{true, true, true, "portable avx2 avx512"},
	} {
		if got := strings.Join(available(c.simd, c.avx2, c.avx512), " "); got != c.want {
			t.Errorf("available(%v, %v, %v) = %s, want %s", c.simd, c.avx2, c.avx512, got, c.want)
		}
	}
	for _, k := range []string{"portable", "avx2", "avx512"} {
		if got := matMulKernels(true, true, true, func(name string) string {
			for _, e := range EnvFor(k) {
				if n, v, _ := strings.Cut(e, "="); n == name {
					return v
				}
			}
			return ""
		}); got != k {
			t.Errorf("EnvFor(%s) selects %s", k, got)
		}
	}
}
