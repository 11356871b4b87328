package train

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// ClipDecay is the decay of the running mean of squared gradient norms that gradient clipping
// compares each step's norm with: a memory of about 1 / (1 - ClipDecay) = 100 steps.
const ClipDecay = 0.99

// clipScope is the context scope of the clipping state: "sq_norm", the running mean of the squared
// (clipped) global gradient norms, and "clipped", the number of steps clipped so far (both
// scalars, not trainable, saved with the checkpoint).
const clipScope = "gradient_clip"

// gradientClip is the state of gradient clipping: the running mean of squared global gradient
// norms and the count of clipped steps (see clipScope).
type gradientClip struct {
	sqNorm, clipped *mlmodel.Variable
}

// newGradientClip returns the clipping state under ctx, created at zero if new, not trainable.
// Call it before the training gradients are built, so that the state is never among them.
func newGradientClip(ctx *mlmodel.Scope) *gradientClip {
	c := &gradientClip{sqNorm: vars.New(ctx.At(clipScope), "sq_norm", 0.0), clipped: vars.New(ctx.At(clipScope), "clipped", 0.0)}
	c.sqNorm.SetTrainable(false)
	c.clipped.SetTrainable(false)
	return c
}

// apply scales the training gradients grads (one per trainable variable, in the model dtype) by
// min(1, kappa r / |g|), where |g| is their global Euclidean norm over all variables and r the
// root of the running mean of past squared norms (decay ClipDecay, updated with the clipped norm,
// so a spike does not raise the threshold), and adds the state's update to the graph. The first
// step only starts the running mean; a zero gradient is left alone.
//
// Why: a mini-batch gradient of the annealed bound, taken through the K Langevin steps, is heavy
// tailed; one step with a norm 10^3 times the usual (it happens: docs/benchmarks.md, "Figures behind
// the code's choices") makes Adam move every parameter by about 3 learning rates, and its second moment then holds the spike for ~1/(1-beta2) = 1000
// steps, shrinking the normal updates. Clipping the norm (a standard remedy, Pascanu et al. 2013)
// at a multiple of its own recent scale needs no data-dependent constant.
func (c *gradientClip) apply(grads []*Node, kappa float64) []*Node {
	g := grads[0].Graph()
	norm2 := ReduceAllSum(Square(grads[0]))
	for _, gr := range grads[1:] {
		norm2 = Add(norm2, ReduceAllSum(Square(gr)))
	}
	norm := Sqrt(norm2)
	mean := c.sqNorm.ValueGraph(g)
	started := GreaterThan(mean, ZerosLike(mean))
	limit := MulScalar(Sqrt(mean), kappa)
	scale := Where(And(started, GreaterThan(norm, limit)), Div(limit, Max(norm, limit)), OnesLike(norm))
	next := Where(started, Add(MulScalar(mean, ClipDecay), MulScalar(Mul(norm2, Square(scale)), 1-ClipDecay)), norm2)
	c.sqNorm.SetValueGraph(next)
	c.clipped.SetValueGraph(Add(c.clipped.ValueGraph(g), ConvertDType(LessThan(scale, OnesLike(scale)), mean.DType())))
	out := make([]*Node, len(grads))
	for i, gr := range grads {
		out[i] = Mul(gr, scale)
	}
	return out
}

// ClippedSteps returns how many training steps had their gradient clipped (model.Config.ClipGrad);
// 0 when clipping is off or no step ran.
func (t *Trainer) ClippedSteps() int {
	if t == nil || t.Ctx == nil {
		return 0
	}
	v := t.Ctx.At(clipScope).GetVariable("clipped")
	if v == nil {
		return 0
	}
	val, err := v.Value()
	if err != nil {
		return 0
	}
	return int(vars.Scalar(val) + 0.5)
}
