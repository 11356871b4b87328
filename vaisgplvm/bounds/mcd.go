package bounds

import (
	"fmt"
	"math"
	"math/rand/v2"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// DefaultMCDHidden is the mcd bound's default hidden width of its backward-drift network.
const DefaultMCDHidden = 32

// mcdMethod is VAIS with a learned backward kernel (ours; after Monte Carlo diffusions, Doucet et
// al. 2022, and Langevin diffusion VI, Geffner & Domke 2023): each step's backward kernel adds to
// the reversed drift a correction c(h, beta_k) = W2 tanh(W1 [h, beta_k] + b1) + b2 [S, B, Q] in the
// chain's coordinates, one small network shared over points and steps, trained with the model
// through the bound (anneal.Options.Backward). Its output starts at 0 (W2 = b2 = 0), so the bound
// starts as VAIS's; any c keeps it a bound. Its parameters live under the bound's scope
// (bound/mcd: w1, b1, w2, b2). It trains with VAIS's defaults (eta adapted, the gradient through
// the whole chain: on oil flow, seed 1, 1000 iterations, the stop-gradient chain left its -ELBO
// 0.6 nats per point above the full gradient's).
type mcdMethod struct{ vaisMethod }

func (mcdMethod) Name() string           { return "mcd" }
func (mcdMethod) SupportsSTL(Sizes) bool { return false }

// Settings implements Configurable: the network's hidden width.
func (mcdMethod) Settings() []Setting {
	return []Setting{{Name: "hidden", Default: DefaultMCDHidden,
		Usage: "hidden width of the learned backward-drift network, an integer in [1, 1024]",
		Check: func(v float64) error {
			if v != math.Trunc(v) || v < 1 || v > 1024 {
				return fmt.Errorf("want an integer in [1, 1024]")
			}
			return nil
		}}}
}

// Evaluate implements Method: VAIS's chain with the learned backward drift (none without a scope:
// then it is VAIS's bound).
func (m mcdMethod) Evaluate(b *Batch, in Inputs) (*Result, *anneal.Chain) {
	if in.Scope != nil && in.Sizes.K > 0 {
		hidden := DefaultMCDHidden
		if v, ok := in.Settings["hidden"]; ok {
			hidden = int(v)
		}
		betas, etas := in.Anneal()
		in.Anneal = func() (*Node, *Node) { return betas, etas }
		q := in.Eps0.Shape().Dim(-1)
		g, dt := in.Eps0.Graph(), in.Eps0.DType()
		param := func(name string, init [][]float64) *Node {
			return ConvertDType(vars.New(in.Scope, name, init).ValueGraph(g), dt)
		}
		w1 := param("w1", mcdInit(q+1, hidden))
		b1 := param("b1", [][]float64{make([]float64, hidden)})
		w2 := param("w2", zeros(hidden, q))
		b2 := param("b2", [][]float64{make([]float64, q)})
		in.Options.Backward = func(h *Node, k int) *Node {
			s, n := h.Shape().Dim(0), h.Shape().Dim(1)
			beta := BroadcastToDims(Reshape(Slice(betas, AxisRange(k, k+1)), 1, 1, 1), s, n, 1)
			x := Concatenate([]*Node{h, beta}, -1)                                    // [S, B, Q+1]
			hid := Tanh(Add(Einsum("sbi,ih->sbh", x, w1), Reshape(b1, 1, 1, hidden))) // [S, B, H]
			return Add(Einsum("sbh,hq->sbq", hid, w2), Reshape(b2, 1, 1, q))          // [S, B, Q]
		}
	}
	return m.vaisMethod.Evaluate(b, in)
}

// mcdInit is the first layer's initial weights [in, out]: uniform on +-1/sqrt(in) from a fixed
// seed, so that every run starts from the same network (the output layer starts at 0).
func mcdInit(in, out int) [][]float64 {
	rng := rand.New(rand.NewPCG(0x6d6364, uint64(in*out)))
	w := zeros(in, out)
	for i := range w {
		for j := range w[i] {
			w[i][j] = (2*rng.Float64() - 1) / math.Sqrt(float64(in))
		}
	}
	return w
}

func zeros(r, c int) [][]float64 {
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
	}
	return out
}
