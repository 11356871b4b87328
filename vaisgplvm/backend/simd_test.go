package backend

import (
	"strings"
	"testing"
)

// TestMatMulKernels checks the kernel family against compute v0.1.5's start-up choice
// (dot/matmul: avx512.go, avx2.go, nosimd.go): AVX-512 before AVX2 where both are compiled in and
// allowed, each switched off by its variable, all of them by GOMLX_DOT_MATMUL.
func TestMatMulKernels(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		name               string
		simd, avx2, avx512 bool
		getenv             func(string) string
		want               string
		wantNote           bool
	}{
		{"no simd build", false, true, true, env(), "portable", false},
		{"simd, AVX-512 CPU", true, true, true, env(), "avx512", false},
		{"simd, AVX2-only CPU", true, true, false, env(), "avx2", true},
		{"simd, AVX2 switched off", true, true, false, env(AVX2Env, "false"), "portable", false},
		{"simd, AVX2 switched off as 0", true, true, false, env(AVX2Env, "0"), "portable", false},
		{"simd, AVX2 switched on explicitly", true, true, false, env(AVX2Env, "TRUE"), "avx2", true},
		{"simd, AVX-512 switched off", true, true, true, env(AVX512Env, "off"), "avx2", true},
		{"simd, both off", true, true, true, env(AVX512Env, "no", AVX2Env, "false"), "portable", false},
		{"simd, old CPU", true, false, false, env(), "portable", false},
		{"tuned kernels off", true, true, true, env(MatMulEnv, "false"), "generic", false},
	} {
		got := matMulKernels(c.simd, c.avx2, c.avx512, c.getenv)
		if got != c.want {
			t.Errorf("%s: kernels %q, want %q", c.name, got, c.want)
		}
		note := simdNote(got)
		if (note != "") != c.wantNote {
			t.Errorf("%s: note %q, want one: %v", c.name, note, c.wantNote)
		}
		if note != "" && !strings.Contains(note, AVX2Env+"=false") {
			t.Errorf("%s: note %q does not name the fix", c.name, note)
		}
	}
	if k := MatMulKernels(); !simdBuild && k != "portable" && k != "generic" {
		t.Errorf("a build without GOEXPERIMENT=simd reports %q kernels", k)
	}
}
