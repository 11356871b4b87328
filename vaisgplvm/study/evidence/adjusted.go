package evidence

import (
	"context"
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/ais"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// AdjustedPilotPasses is the number of pilot runs that tune Adjusted's step sizes.
const AdjustedPilotPasses = 12

// Adjusted evaluates, at the trainer's parameters, the Metropolis-adjusted annealed chain as a
// bound: for each T in temps, one chain per point from its trained q0 along the geometric path
// with T equal steps (beta_t = t / T, ais.Linear) and one MALA transition per step (package ais,
// started at q0 as Options.Start "q0" does), whose log weight
//
//	log w_n = sum_t (beta_t - beta_{t-1}) f_n(z_{t-1}),   f_n(z) = log p(y_n, h) - log q0(h),  h = a_n + L_n z,
//
// is below log Z_n in expectation (Jensen's inequality on the unbiased weight). It is the
// annealed bound of T steps without a backward kernel to fit: every transition leaves its
// intermediate target invariant, so the weight needs no reversal, and T = 1 is q0's own ELBO.
// Its cost per step is VAIS's (one gradient and one likelihood per step) plus the accept test;
// the step sizes are tuned per point and step toward an acceptance of 0.65 by AdjustedPilotPasses
// pilot runs (ais.Options.PilotPasses: a path of a few steps cannot tune them in one). Each is
// evaluated on all N points with draws independent chains per point, with its gap to ev as in
// Decompose and the chain's mean acceptance (BoundValue.Accept).
//
// It is the chain that would pay no backward-kernel mismatch: with exact transitions its gap is
// about sum_t (beta_t - beta_{t-1})^2 Var(f) / 2 = Var(f) / (2T) where f varies little, which is
// also IWVI's gap with T samples, so it measures how much of an annealed chain's gap the Langevin
// weights' mismatch costs and how much the T steps themselves.
// A cancelled ctx stops it between two temperatures of a chain.
// Errors: a T below 1, fewer than 2 draws, ev of another model, an AIS failure, ctx's error.
func Adjusted(ctx context.Context, tr *train.Trainer, ev *Result, draws int, temps []int, seed uint64) ([]BoundValue, error) {
	if err := checkArgs(tr, draws); err != nil {
		return nil, err
	}
	if err := sameModel(tr, ev); err != nil {
		return nil, err
	}
	all := make([]int, tr.Model.N)
	for i := range all {
		all[i] = i
	}
	s, err := newSampler(tr, all, true)
	if err != nil {
		return nil, err
	}
	klu, err := kl(tr)
	if err != nil {
		return nil, err
	}
	var out []BoundValue
	for _, t := range temps {
		if t < 1 {
			return nil, fmt.Errorf("evidence: an adjusted chain of %d steps: want at least 1", t)
		}
		res, err := s.Estimate(ctx, ais.Options{Betas: ais.Linear(t), Runs: draws, Seed: seed, PilotPasses: AdjustedPilotPasses})
		if err != nil {
			return nil, fmt.Errorf("evidence: the adjusted chain of %d steps: %w", t, err)
		}
		pb := &eval.PointBounds{L: make([][]float64, draws), KLU: klu}
		for k := range pb.L {
			pb.L[k] = make([]float64, tr.Model.N)
			for n := range pb.L[k] {
				pb.L[k][n] = res.LogW[n][k]
			}
		}
		acc := res.Accept
		b := boundOf(pb, ev, "adjusted", fmt.Sprintf("q0 with a Metropolis-adjusted Langevin chain of %d equal steps (no backward kernel; step sizes tuned by %d pilot runs)", t, AdjustedPilotPasses))
		b.Accept = &acc
		out = append(out, b)
	}
	return out, nil
}
