//go:build !(amd64 && goexperiment.simd)

package backend

// simdBuild: without GOEXPERIMENT=simd on amd64 GoMLX's SIMD matrix kernels are not compiled in,
// whatever the CPU has.
const simdBuild = false

func cpuAVX2() bool   { return false }
func cpuAVX512() bool { return false }
