package cmf

import (
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/ml/layers"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// mlp is a one-hidden-layer tanh network from x [..., In] to outputs of the given widths
// [..., out_j], under ctx's scope name: h = tanh(W1 x + b1), out_j = W_j h + b_j (eqs. 9-11 and
// 19 of the derivation; r(X | z) and the encoder have the same form).
func mlp(ctx *mlmodel.Scope, name string, x *Node, hidden int, outs ...int) []*Node {
	ctx = ctx.At("%s", name)
	h := Tanh(layers.Dense(ctx.At("hidden"), x, true, hidden))
	res := make([]*Node, len(outs))
	for j, w := range outs {
		res[j] = layers.Dense(ctx.At("out%d", j), h, true, w)
	}
	return res
}

// decode returns the decoder's outputs for latents z [..., Dz]: the Gaussian decoder's mean and
// log variance [..., P] (eqs. 9-11), or the Bernoulli decoder's logits [..., P] and nil (eq. 19).
func (m *Model) decode(ctx *mlmodel.Scope, z *Node) (mean, logVar *Node) {
	if m.Cfg.Likelihood == "bernoulli" {
		return mlp(ctx, "decoder", z, m.Cfg.Hidden, m.P)[0], nil
	}
	out := mlp(ctx, "decoder", z, m.Cfg.Hidden, m.P, m.P)
	return out[0], out[1]
}

// logLik returns log p(y | z) [S, B] for latents z [S, B, Dz] and data y [B, P] (eqs. 8 and 18).
func (m *Model) logLik(ctx *mlmodel.Scope, z, y *Node) *Node {
	mean, logVar := m.decode(ctx, z)
	yb := InsertAxes(y, 0) // [1, B, P]
	if logVar == nil {     // Bernoulli with logits a: y a - log(1 + e^a)
		return ReduceSum(Sub(Mul(yb, mean), Softplus(mean)), -1)
	}
	return logNormal(yb, mean, logVar)
}

// logNormal returns log N(x | mean, diag exp(logVar)) summed over the last axis.
func logNormal(x, mean, logVar *Node) *Node {
	r := Sub(x, mean)
	terms := Add(AddScalar(logVar, math.Log(2*math.Pi)), Mul(Square(r), Exp(Neg(logVar))))
	return MulScalar(ReduceSum(terms, -1), -0.5)
}

// logStdNormal returns log N(x | 0, I) summed over the last axis.
func logStdNormal(x *Node) *Node {
	d := float64(x.Shape().Dim(-1))
	return AddScalar(MulScalar(ReduceSum(Square(x), -1), -0.5), -0.5*d*math.Log(2*math.Pi))
}
