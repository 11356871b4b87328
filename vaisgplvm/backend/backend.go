// Package backend chooses the GoMLX backend that runs the model graphs.
//
// Spec strings (also read from $VAISGPLVM_BACKEND when the spec is empty):
//
//	go     the pure-Go backend, always available, runs offline. It is started with ops_sequential:
//	       GoMLX v0.26.0's parallel op scheduler can deadlock on 2-core machines when a parallel
//	       op (DotGeneral) waits for workers held by other ops (seen in our benchmarks).
//	auto   same as go in this build (XLA support is added by the GPU work; see README).
package backend

import (
	"fmt"
	"os"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
)

// EnvVar names the environment variable read when no spec is given.
const EnvVar = "VAISGPLVM_BACKEND"

// New returns the backend named by spec ("" reads $VAISGPLVM_BACKEND, then defaults to "go").
// Errors name the unknown spec.
func New(spec string) (backends.Backend, error) {
	if spec == "" {
		spec = os.Getenv(EnvVar)
	}
	switch spec {
	case "", "go", "auto":
		b, err := simplego.New("ops_sequential")
		if err != nil {
			return nil, fmt.Errorf("starting the pure-Go backend: %w", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown backend %q: this build supports \"go\" and \"auto\"", spec)
}
