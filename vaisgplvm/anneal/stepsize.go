package anneal

import (
	"fmt"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// StepSize gives the Langevin step size eta (latent units squared), one per transition: [K].
type StepSize struct {
	Eta0    float64 // initial (or fixed) eta > 0
	Learned bool    // learn log eta_k, one per transition (variable "anneal/log_eta" [K])
}

// Validate reports a non-positive eta.
func (s StepSize) Validate() error {
	if !(s.Eta0 > 0) || math.IsInf(s.Eta0, 0) {
		return fmt.Errorf("anneal: step size eta must be positive and finite, got %g", s.Eta0)
	}
	return nil
}

// Etas returns eta_1..eta_K as a [K] node.
func (s StepSize) Etas(ctx *context.Context, g *Graph, k int) *Node {
	init := make([]float64, k)
	for i := range init {
		init[i] = math.Log(s.Eta0)
	}
	if !s.Learned {
		return Exp(Const(g, init))
	}
	return Exp(vars.New(ctx.In("anneal"), "log_eta", init).ValueGraph(g))
}
