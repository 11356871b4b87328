package bounds

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// DefaultDamping is the underdamped bound's initial momentum damping gamma (setting "damping"); the
// measurements that chose it are in docs/design.md ("The underdamped bound").
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

// ChainDefaults implements Defaulted: the stop-gradient chain (eta adapted, as VAIS's): with the
// gradient through the whole chain the training spikes or diverges (measured in docs/results-log.md,
// "The underdamped bound").
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

// DampingVariable names the underdamped bound's damping parameter in its scope (bound/uha): the
// damping is gamma = sigmoid(value), so the value is DampingLogit(gamma).
const DampingVariable = "raw_damping"

// DampingLogit returns the damping parameter's value for gamma in [0, 1): its logit, with 0
// mapped to a tiny damping rather than -Inf.
func DampingLogit(gamma float64) float64 { return math.Log(max(gamma, 1e-6) / (1 - gamma)) }

// DampingOf returns the damping gamma of the parameter's value raw: sigmoid(raw).
func DampingOf(raw float64) float64 { return 1 / (1 + math.Exp(-raw)) }

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
	if in.Scope != nil {
		h.Damping = Sigmoid(vars.New(in.Scope, DampingVariable, DampingLogit(damping)).ValueGraph(g))
		h.LogMass = vars.New(in.Scope, "log_mass", make([]float64, q)).ValueGraph(g)
	} else {
		h.Damping = Scalar(g, in.Eps0.DType(), damping)
	}
	h.Damping = ConvertDType(h.Damping, in.Eps0.DType())
	if h.LogMass != nil {
		h.LogMass = ConvertDType(h.LogMass, in.Eps0.DType())
	}
	var xi []*Node // rho_0's noise, then one per step; none for K = 0 (importance sampling)
	for i := 0; in.Sizes.K > 0 && i <= in.Sizes.K; i++ {
		xi = append(xi, Squeeze(Slice(in.ChainEps, AxisElem(i)), 0))
	}
	betas, etas := in.Anneal()
	c := inWhitened(b, func(joint, ref anneal.LogDensity) *anneal.Chain {
		return anneal.RunHamiltonian(in.Eps0, xi, betas, etas, joint, ref, h)
	})
	return chainResult(b, c), c
}
