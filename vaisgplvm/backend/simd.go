package backend

import (
	"os"
	"strings"

	backends "github.com/gomlx/compute"
	simplego "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/support/envutil"
)

// Environment variables that GoMLX's pure-Go backend (github.com/gomlx/compute v0.1.5, package
// internal/gobackend/dot/matmul) reads once, when the process starts, to choose its matrix-product
// kernels: each "false" switches one family off.
const (
	MatMulEnv = "GOMLX_DOT_MATMUL"  // false: none of the tuned kernels, GoMLX's generic DotGeneral
	AVX512Env = "GOMLX_SIMD_AVX512" // false: no AVX-512 kernels
	AVX2Env   = "GOMLX_SIMD_AVX2"   // false: no AVX2 kernels
)

// MatMulKernels names the family of matrix-product kernels the pure-Go backend runs in this
// process: "avx512" or "avx2" (a GOEXPERIMENT=simd build on an amd64 CPU with those instructions,
// not switched off by AVX512Env / AVX2Env), "portable" (GoMLX's kernels without SIMD: any other
// build or CPU), or "generic" (MatMulEnv=false). It mirrors the choice compute v0.1.5 makes at
// start-up, from the build, the CPU and the environment; XLA backends do not use these kernels.
func MatMulKernels() string {
	return matMulKernels(simdBuild, cpuAVX2(), cpuAVX512(), os.Getenv)
}

// KernelsOf is MatMulKernels when b is the pure-Go backend, "" for any other (XLA).
func KernelsOf(b backends.Backend) string {
	if b == nil || b.String() != simplego.BackendName {
		return ""
	}
	return MatMulKernels()
}

// SIMDNote returns a one-line advice for the log when this process's matrix products are likely
// about twice as slow as they could be, "" otherwise. That is the case of a GOEXPERIMENT=simd build
// on a CPU with AVX2 and no AVX-512: compute v0.1.5's AVX2 kernels for small products (every
// product of a GPLVM step is small) made a full-batch oil-flow VAIS K = 5 process 2.1 times as
// long as the portable kernels in float64 and 1.9 times in float32, on an AMD EPYC with AVX2 only
// (docs/cpu-performance.md). Setting AVX2Env=false, or building without GOEXPERIMENT=simd,
// gives the portable kernel.
func SIMDNote() string { return simdNote(MatMulKernels()) }

func simdNote(kernels string) string {
	if kernels != "avx2" {
		return ""
	}
	return "the GOEXPERIMENT=simd build's AVX2 matrix kernels run here (no AVX-512); they make a step about 2x slower than the portable ones: set " + AVX2Env + "=false (or build without GOEXPERIMENT=simd)"
}

// matMulKernels is MatMulKernels with the build, the CPU and the environment given.
func matMulKernels(simd, avx2, avx512 bool, getenv func(string) string) string {
	on := func(name string) bool { return !envutil.FalseValues.Has(strings.ToLower(getenv(name))) }
	switch {
	case !on(MatMulEnv):
		return "generic"
	case simd && avx512 && on(AVX512Env):
		return "avx512"
	case simd && avx2 && on(AVX2Env):
		return "avx2"
	}
	return "portable"
}
