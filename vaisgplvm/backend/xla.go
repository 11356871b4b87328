//go:build xla

package backend

import (
	backends "github.com/gomlx/compute"
	xla "github.com/gomlx/go-xla/compute/xla"
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
