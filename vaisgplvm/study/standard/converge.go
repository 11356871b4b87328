package standard

import (
	"context"
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// Converge fits the model to a local optimum of -log p(X, H) / N (nats per point; the exact GP
// marginal likelihood with H's N(0, I) prior, Lawrence 2005) over the latents H [N, Q], the
// kernel's and the noise's parameters, by L-BFGS from their current values (the PCA start, or
// where Run left them) until opt.Rule holds or a cap in opt stops it (converge.Minimize; the
// result says which), and leaves the best point in the model. L-BFGS is preconditioned in its
// tail, a group per latent dimension and per hyperparameter (converge.Options.Variables; opt.Plain
// turns it off; opt.Seed seeds the curvature probes). Iter grows by the L-BFGS
// iterations, Curve by their objectives, Seconds by the time taken. Errors: a graph that does not
// build, an objective not finite at the start.
func (m *Model) Converge(ctx context.Context, opt converge.Options) (*converge.Result, error) {
	var selected []*mlmodel.Variable
	exec, err := mlmodel.NewExec(m.backend, m.Ctx.Store(), func(ctx *mlmodel.Scope, xn *Node) []*Node {
		loss := DivScalar(Neg(m.GP.LogJoint(ctx, xn, m.latents(ctx, xn.Graph()))), float64(len(m.X)))
		selected = selected[:0]
		var nodes []*Node
		for v := range ctx.Store().IterVariables() {
			if trainedScope(v.Scope()) {
				selected, nodes = append(selected, v), append(nodes, v.ValueGraph(xn.Graph()))
			}
		}
		return append([]*Node{loss}, Gradient(loss, nodes...)...)
	})
	if err != nil {
		return nil, fmt.Errorf("standard: converge: %w", err)
	}
	x := tensors.FromValue(m.X)
	if _, err := exec.Exec(x); err != nil { // builds the graph: selected is known, every variable has a value
		return nil, fmt.Errorf("standard: converge: %w", err)
	}
	x0, err := vars.Flatten(selected)
	if err != nil {
		return nil, fmt.Errorf("standard: converge: %w", err)
	}
	dt := selected[0].Shape().DType
	obj := func(p, grad []float64) (float64, error) {
		if err := vars.Unflatten(selected, p, dt); err != nil {
			return 0, err
		}
		out, err := exec.Exec(x)
		if err != nil {
			return 0, err
		}
		off := 0
		for _, g := range out[1:] {
			off += copy(grad[off:], vars.Flat64(g))
		}
		return vars.Flat64(out[0])[0], nil
	}
	opt.Variables = selected // preconditioned in the tail as converge.Fit is, unless opt.Plain
	best, res, err := converge.Minimize(ctx, obj, x0, opt)
	if err != nil {
		return nil, fmt.Errorf("standard: %w", err)
	}
	if err := vars.Unflatten(selected, best, dt); err != nil {
		return nil, fmt.Errorf("standard: converge: %w", err)
	}
	m.Iter += res.Iterations
	m.Curve = append(m.Curve, res.Curve...)
	m.Seconds += res.Seconds
	return res, nil
}
