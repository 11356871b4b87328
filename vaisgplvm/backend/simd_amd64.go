//go:build amd64 && goexperiment.simd

package backend

import "simd/archsimd"

// simdBuild: this binary was built with GOEXPERIMENT=simd on amd64, so GoMLX's SIMD matrix kernels
// are compiled in.
const simdBuild = true

func cpuAVX2() bool   { return archsimd.X86.AVX2() }
func cpuAVX512() bool { return archsimd.X86.AVX512() }
