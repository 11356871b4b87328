package backend

import backends "github.com/gomlx/compute"

// pluginNamer is the XLA backend's PluginName (go-xla's compute/xla.Backend).
type pluginNamer interface{ PluginName() string }

// Label names b for provenance (a table's settings, a store's trainings): "xla:PLUGIN" for an XLA
// backend, naming its PJRT plugin (XLA's Name alone is "xla" on CPU and GPU alike), else b.Name().
func Label(b backends.Backend) string {
	if p, ok := b.(pluginNamer); ok && p.PluginName() != "" {
		return b.Name() + ":" + p.PluginName()
	}
	return b.Name()
}

// ConcurrentTrainings is how many trainings may share b at the same time: 1 on a CUDA PJRT plugin,
// 0 (no limit) otherwise. On an H100 with JAX 0.11.2's CUDA 13 plugin, eight Table 3 trainings
// sharing one GPU client failed at random iterations inside cuBLASLt ("cublasLtMatmul ...: the
// requested functionality is not supported"; the same trainings one at a time finished), and
// together they did about 1.3 times the work of one at a time (docs/gpu.md, "Trainings share the
// GPU one at a time").
func ConcurrentTrainings(b backends.Backend) int {
	if p, ok := b.(pluginNamer); ok && isCUDAPlugin(p.PluginName()) {
		return 1
	}
	return 0
}
