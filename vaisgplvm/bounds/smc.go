package bounds

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
)

// DefaultESSThreshold is the smc bound's default resampling threshold: a point's chains are
// resampled when their effective sample size falls below half of them.
const DefaultESSThreshold = 0.5

// smcMethod is VAIS's Samples chains per point resampling across each other (ours; a sequential
// Monte Carlo sampler with VAIS's Langevin moves, schedule and step sizes: anneal.RunResampled):
//
//	L_n = log Z^_n,  Z^_n = prod over resamplings of mean_s exp(W_s) x mean_s exp(W_s at the end),
//
// an unbiased estimator of p(x_n | f, u) whose log is a bound like VAIS's, which it equals when no
// chain is resampled (setting ess-threshold 0). With one chain nothing can be resampled, so it
// needs Samples >= 2. The chain noise carries K extra slices, of which the first value per point
// and step makes the resampling's uniform.
type smcMethod struct{ Base }

func (smcMethod) Name() string                           { return "smc" }
func (smcMethod) ChainSteps(s Sizes) int                 { return 2 * max(s.K, 1) }
func (smcMethod) Evaluations(s Sizes) int                { return s.Samples * (s.K + 1) }
func (smcMethod) CeilingDraws(s Sizes) int               { return s.K + 1 }
func (smcMethod) Annealed() bool                         { return true }
func (smcMethod) Particles(s Sizes, n int) (Sizes, bool) { s.Samples = n; return s, true }
func (smcMethod) Recon(s Sizes, chains int) Sizes {
	s.Samples = max(s.Samples, chains)
	return s
}

// DefaultSMCChains is the smc bound's default number of chains per point.
const DefaultSMCChains = 4

// ChainDefaults implements Defaulted: VAIS's stop-gradient chain with eta adapted, and
// DefaultSMCChains chains per point.
func (smcMethod) ChainDefaults() ChainDefaults {
	return ChainDefaults{AdaptEta: true, StopGrad: true, Samples: DefaultSMCChains}
}

// Validate implements Method: K >= 1 annealed steps and Samples >= 2 chains to resample among.
func (smcMethod) Validate(s Sizes) error {
	if s.K < 1 || s.Samples < 2 {
		return fmt.Errorf("k = %d, samples = %d: smc needs K >= 1 annealed steps and Samples >= 2 chains per point to resample among", s.K, s.Samples)
	}
	return nil
}

// Settings implements Configurable: the resampling threshold.
func (smcMethod) Settings() []Setting {
	return []Setting{{Name: "ess-threshold", Default: DefaultESSThreshold,
		Usage: "resample a point's chains when their effective sample size falls below this share of them, in [0, 1] (0: never, VAIS with Samples chains; 1: at every step)",
		Check: func(v float64) error {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("want a share in [0, 1]")
			}
			return nil
		}}}
}

// Evaluate implements Method.
func (smcMethod) Evaluate(b *Batch, in Inputs) (*Result, *anneal.Chain) {
	k := in.Sizes.K
	var eps, us []*Node
	for i := range k {
		eps = append(eps, Squeeze(Slice(in.ChainEps, AxisElem(i)), 0))
		z := Squeeze(Slice(in.ChainEps, AxisElem(k+i), AxisElem(0), AxisRange(), AxisElem(0)), 0, 1, -1) // [B]
		us = append(us, MulScalar(OnePlus(Erf(MulScalar(z, 1/math.Sqrt2))), 0.5))                        // Phi(z): uniform on (0, 1)
	}
	threshold := DefaultESSThreshold
	if v, ok := in.Settings["ess-threshold"]; ok {
		threshold = v
	}
	betas, etas := in.Anneal()
	var r *anneal.Resampled
	run := func(h0 *Node, joint, ref anneal.LogDensity) *anneal.Chain {
		r = anneal.RunResampled(h0, eps, us, betas, etas, joint, ref, threshold, in.Options)
		return r.Chain
	}
	var c *anneal.Chain
	if in.Options.Precondition {
		c = inWhitened(b, func(joint, ref anneal.LogDensity) *anneal.Chain { return run(in.Eps0, joint, ref) })
	} else {
		c = run(b.Q0.Sample(in.Eps0), b.LogJoint, b.Q0.LogProb)
	}
	per := r.LogZ
	return &Result{PerPoint: per, ELBO: b.ELBO(per), Recon: WeightedMean(c.LogW, c.HK), LogW: c.LogW, Particles: c.HK}, c
}
