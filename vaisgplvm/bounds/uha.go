package bounds

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// DefaultDamping is the underdamped bound's initial momentum damping gamma (setting "damping"):
// on Frey (500 iterations, seed 1) initial dampings 0 / 0.3 / 0.5 / 0.9 reached -ELBO -492 / -494 /
// -445 / -283 per image (docs/design.md).
const DefaultDamping = 0.3

// uhaMethod is the underdamped annealed bound (UHA; Geffner & Domke 2021, Zhang et al. 2021):
// Samples independent chains per point, each K annealed steps of uncorrected Hamiltonian Monte
// Carlo (anneal.RunHamiltonian) in q0's whitened coordinates, its momentum kicked by the tamed score
// unless --tamed=false, at the same cost as VAIS (K + 1
// evaluations of the likelihood and its score per chain). Its own trainable parameters, under
// bound/uha: the damping gamma = sigmoid(raw_damping) (initial value: the setting "damping") and a
// diagonal mass log_mass [Q] (initially 0: M = I, i.e. q0's own covariance as mass in h). The
// schedule beta_k and the step sizes (eta_k, leapfrog step e_k = sqrt(2 eta_k)) are the annealed
// bounds' own: --schedule, --eta, --adapt-eta (toward a target Metropolis-Hastings acceptance of
// the Hamiltonian move), --learn-eta.
type uhaMethod struct{ Base }

func (uhaMethod) Name() string                           { return "uha" }
func (uhaMethod) ChainSteps(s Sizes) int                 { return s.K + 1 }
func (uhaMethod) Evaluations(s Sizes) int                { return s.Samples * (s.K + 1) }
func (uhaMethod) CeilingDraws(s Sizes) int               { return s.K + 2 }
func (uhaMethod) Annealed() bool                         { return true }
func (uhaMethod) Particles(s Sizes, n int) (Sizes, bool) { s.Samples = n; return s, true }
func (uhaMethod) Recon(s Sizes, chains int) Sizes {
	s.Samples = max(s.Samples, chains)
	return s
}

// ChainDefaults implements Defaulted: the stop-gradient chain (eta adapted, as VAIS's). Measured
// (seed 1, docs/results.md "The underdamped bound"): with the gradient through the whole chain the
// training spikes or diverges (oil flow, full batch: -ELBO 1.7 -> 21 at iteration 800 with a fixed
// eta; Frey: 75000 nats per image at 500 iterations with the adapted one); with the stop-gradient
// chain and the tamed kick it trains (damping 0.9: oil flow at 1000 iterations -0.00 adapted, -0.35
// fixed; Frey at 500 -283 adapted, -154 fixed).
func (uhaMethod) ChainDefaults() ChainDefaults { return ChainDefaults{AdaptEta: true, StopGrad: true} }

// Settings implements Configurable: the initial damping.
func (uhaMethod) Settings() []Setting {
	return []Setting{{Name: "damping", Default: DefaultDamping,
		Usage: "initial momentum damping gamma of the underdamped chain, in [0, 1) (0: full refresh, the Langevin move; learned)",
		Check: func(v float64) error {
			if !(v >= 0 && v < 1) {
				return fmt.Errorf("want a damping in [0, 1)")
			}
			return nil
		}}}
}

// Evaluate implements Method.
func (uhaMethod) Evaluate(b *Batch, in Inputs) (*Result, *anneal.Chain) {
	g := in.Eps0.Graph()
	q := in.Eps0.Shape().Dim(-1)
	damping := DefaultDamping
	if v, ok := in.Settings["damping"]; ok {
		damping = v
	}
	var h anneal.Hamiltonian
	h.StopScoreGradient, h.Tamed = in.Options.StopScoreGradient, in.Options.Tamed
	// The damping's logit: 0 maps to a tiny damping rather than -Inf.
	raw := math.Log(max(damping, 1e-6) / (1 - damping))
	if in.Scope != nil {
		h.Damping = Sigmoid(vars.New(in.Scope, "raw_damping", raw).ValueGraph(g))
		h.LogMass = vars.New(in.Scope, "log_mass", make([]float64, q)).ValueGraph(g)
	} else {
		h.Damping = Scalar(g, in.Eps0.DType(), damping)
	}
	h.Damping = ConvertDType(h.Damping, in.Eps0.DType())
	if h.LogMass != nil {
		h.LogMass = ConvertDType(h.LogMass, in.Eps0.DType())
	}
	xi := make([]*Node, in.Sizes.K+1)
	for i := range xi {
		xi[i] = Squeeze(Slice(in.ChainEps, AxisElem(i)), 0)
	}
	if in.Sizes.K == 0 {
		xi = nil
	}
	betas, etas := in.Anneal()
	toH := b.Q0.Sample // h = a + L z
	joint := func(z *Node) *Node { return b.LogJoint(toH(z)) }
	c := anneal.RunHamiltonian(in.Eps0, xi, betas, etas, joint, b.Q0.LogProbWhitened, h)
	c.H0, c.HK = toH(c.H0), toH(c.HK)
	for i, z := range c.Path {
		c.Path[i] = toH(z)
	}
	per := LogMeanExp(c.LogW)
	return &Result{PerPoint: per, ELBO: b.ELBO(per), Recon: WeightedMean(c.LogW, c.HK), LogW: c.LogW, HK: c.HK}, c
}
