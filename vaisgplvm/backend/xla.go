//go:build xla

package backend

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/xla"
)

// Compiled with -tags xla: XLA through PJRT plugins loaded with dlopen, never downloaded.
func init() {
	xla.EnableAutoInstall(false)
	xlaSupport = &struct {
		plugins func() []string
		open    func(plugin string) (backends.Backend, error)
	}{
		plugins: xla.GetAvailablePlugins,
		open:    func(plugin string) (backends.Backend, error) { return xla.New(plugin) },
	}
}
