package train

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
)

// naturalStepQU adds to the training step the natural-gradient update of q(u)
// (model.Config.NatGrad, gp.NaturalStep) with step gamma, from the gradients of loss = -ELBO / n,
// and takes q(u)'s variables (inducing/q_mu, inducing/q_sqrt) out of the trainable ones. It returns
// the gradients of every remaining trainable variable in use, in the order Adam's
// UpdateGraphWithGradients reads them: one backward pass gives both. Call it after the bound is
// built (the variables exist) and before Adam's update.
func naturalStepQU(ctx *mlmodel.Scope, loss *Node, n int, gamma float64) []*Node {
	g := loss.Graph()
	in := ctx.At("inducing")
	mu, sqrt := in.GetVariable("q_mu"), in.GetVariable("q_sqrt")
	var rest []*mlmodel.Variable
	var nodes []*Node
	for v := range ctx.IterVariables() {
		if v.Trainable && v.InUseByGraph(g) && v != mu && v != sqrt {
			rest = append(rest, v)
			nodes = append(nodes, v.NodeValue(g))
		}
	}
	muV, sqrtV := mu.NodeValue(g), sqrt.NodeValue(g)
	grads := Gradient(loss, append(nodes, muV, sqrtV)...)
	mu.SetTrainable(false)
	sqrt.SetTrainable(false)
	scale := -float64(n) // dF/d. of F = ELBO = -n loss
	k := len(nodes)
	newMu, newSqrt := gp.NaturalStep(muV, sqrtV, MulScalar(grads[k], scale), MulScalar(grads[k+1], scale), Scalar(g, loss.DType(), gamma))
	mu.SetValueGraph(newMu)
	sqrt.SetValueGraph(newSqrt)
	return grads[:k]
}
