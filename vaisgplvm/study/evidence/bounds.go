package evidence

import (
	"context"
	"fmt"
	"math"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// BoundValue is one bound evaluated at a trained model's global parameters and q0: its -ELBO per
// point on all N points and Monte Carlo standard error, and its gap to the evidence reference.
type BoundValue struct {
	Name    string  `json:"bound"`
	NegELBO float64 `json:"neg_elbo_per_point"`
	SE      float64 `json:"neg_elbo_mc_se"`
	// KLU is KL(q(u) || p(u)) / N (nats per point), part of NegELBO and of the evidence alike.
	KLU float64 `json:"kl_u_per_point"`
	// Gap is the bound's distance below the evidence (nats per point) and GapSE its standard
	// error: with every point estimated, NegELBO - NegLogEvidencePerPoint with s.e.
	// sqrt(SE^2 + evidence SE^2); with some (Result.Points), the mean over them of log Z_n - L_n
	// (gapTo). Nil when the bound was evaluated without an estimate.
	Gap       *float64 `json:"gap_to_evidence,omitempty"`
	GapSE     *float64 `json:"gap_to_evidence_se,omitempty"`
	Reference string   `json:"what"` // what the bound keeps of the local approximation
	// Accept is a Metropolis-adjusted chain's mean acceptance (Adjusted; nil for the others).
	Accept *float64 `json:"mean_acceptance,omitempty"`
}

// Decompose evaluates, at the trainer's parameters (the same q0, kernel, noise, Z and q(u)), the
// bounds that split a model's gap to the evidence ev into its parts: q0 alone (MF's ELBO with
// closed-form KL, Samples draws), q0 with importance weighting (IWVI with the model's K samples),
// and, for an annealed model, the trained chain (its own bound), each on all N points, averaged
// over draws noise draws. The gaps to ev are set when ev covers all N points. The differences
// between consecutive lines are the importance-weighting gain and the chain's gain over q0. See
// Collapsed for how high a bound built differently on the same q0 and global parameters reaches.
func Decompose(ctx context.Context, tr *train.Trainer, ev *Result, draws int) ([]BoundValue, error) {
	if err := checkArgs(tr, draws); err != nil {
		return nil, err
	}
	if err := sameModel(tr, ev); err != nil {
		return nil, err
	}
	m := tr.Model
	type variant struct {
		method, what string
		k            int
	}
	iw := max(m.Cfg.K, 1)
	vs := []variant{{"mf", "q0 alone (ELBO)", m.Cfg.K}, {"iwvi", fmt.Sprintf("q0 with %d importance samples (IWVI)", iw), iw}}
	if m.Method.Annealed() {
		vs = append(vs, variant{m.Cfg.Method, fmt.Sprintf("the trained chain: %d chain(s) of %d annealed steps (%s)",
			m.Cfg.Samples, m.Cfg.K, m.Cfg.Method), m.Cfg.K})
	}
	var out []BoundValue
	for _, v := range vs {
		t, err := withBound(tr, v.method, v.k)
		if err != nil {
			return nil, err
		}
		b, err := evaluate(ctx, t, ev, draws, v.method, v.what)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// ChainVariants evaluates, at the trainer's parameters, the trained annealed chain with other
// settings than it was trained with: for each s in etaScales the same chain with every eta_k
// multiplied by s (anneal.StepSize.Scale; s > 0), and for each c in chains, c independent chains
// per point whose weights are averaged as importance weights (the bound of Samples = c). Each is
// averaged over draws noise draws on all N points, with its gap to ev as in Decompose. They show
// whether a trained chain's step sizes or its number of chains leave bound on the table: a scale
// near 0 gives q0 alone (the chain does not move), scale 1 and one chain the trained bound.
// Errors: a model without an annealed chain, a scale that is not positive and finite, c < 1.
func ChainVariants(ctx context.Context, tr *train.Trainer, ev *Result, draws int, etaScales []float64, chains []int) ([]BoundValue, error) {
	if err := checkArgs(tr, draws); err != nil {
		return nil, err
	}
	m := tr.Model
	if !m.Method.Annealed() {
		return nil, fmt.Errorf("evidence: the %s bound has no annealed chain to vary", m.Cfg.Method)
	}
	var out []BoundValue
	vary := func(what string, set func(*model.Model)) error {
		mm := *m
		set(&mm)
		if err := mm.Step.Validate(); err != nil {
			return fmt.Errorf("evidence: %s: %w", what, err)
		}
		t := *tr
		t.Model = &mm
		b, err := evaluate(ctx, &t, ev, draws, m.Cfg.Method, what)
		if err != nil {
			return err
		}
		out = append(out, b)
		return nil
	}
	for _, s := range etaScales {
		if !(s > 0) {
			return nil, fmt.Errorf("evidence: step-size scale %g: want a positive factor", s)
		}
		what := fmt.Sprintf("the trained chain with every eta_k x %g: %d chain(s) of %d steps", s, m.Cfg.Samples, m.Cfg.K)
		if err := vary(what, func(mm *model.Model) { mm.Step.Scale = s }); err != nil {
			return nil, err
		}
	}
	for _, c := range chains {
		if c < 1 {
			return nil, fmt.Errorf("evidence: %d chains: want at least 1", c)
		}
		what := fmt.Sprintf("%d weighted chain(s) of %d annealed steps, the trained eta_k", c, m.Cfg.K)
		if err := vary(what, func(mm *model.Model) { mm.Cfg.Samples = c }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Underdamped evaluates, at the trainer's parameters, the underdamped annealed bound (bounds "uha")
// against the trained chain at equal cost: the model's K, chains per point, schedule and step
// sizes (eta_k times each of etaScales; nil: 1 only) with each damping gamma in dampings and the
// checkpoint's mass (unit mass unless it was trained with uha), then IWVI with as many importance
// samples as a chain evaluates the likelihood (K + 1 per chain). Each on all N points averaged over
// draws noise draws, with its gap to ev as in Decompose. The trainer's variables are not changed
// (the bound's own parameters are made in a copy of its store). Errors: a model without an
// annealed chain, a damping outside [0, 1), a scale that is not positive.
func Underdamped(ctx context.Context, tr *train.Trainer, ev *Result, draws int, etaScales, dampings []float64) ([]BoundValue, error) {
	if err := checkArgs(tr, draws); err != nil {
		return nil, err
	}
	m := tr.Model
	if !m.Method.Annealed() {
		return nil, fmt.Errorf("evidence: the %s bound has no annealed chain (schedule, step sizes) to compare with", m.Cfg.Method)
	}
	if etaScales == nil {
		etaScales = []float64{1}
	}
	t, err := tr.Scratch() // resets the damping, keeps a trained mass (the trained step sizes go with it)
	if err != nil {
		return nil, err
	}
	var out []BoundValue
	for _, s := range etaScales {
		if !(s > 0) {
			return nil, fmt.Errorf("evidence: step-size scale %g: want a positive factor", s)
		}
		for _, d := range dampings {
			mm, err := m.WithBound("uha", m.Cfg.K, map[string]float64{"damping": d})
			if err != nil {
				return nil, fmt.Errorf("evidence: damping %g: %w", d, err)
			}
			mm.Step.Scale = s
			t.Model = mm
			_ = model.BoundScope(t.Ctx, "uha").DeleteVariable(bounds.DampingVariable) // start from d (none yet: nothing to do)
			what := fmt.Sprintf("underdamped, damping %g, eta_k x %g: %d chain(s) of %d steps", d, s, m.Cfg.Samples, m.Cfg.K)
			b, err := evaluate(ctx, t, ev, draws, "uha", what)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	iw := m.Cfg.Samples * (m.Cfg.K + 1)
	is, err := withBound(tr, "iwvi", iw)
	if err != nil {
		return nil, err
	}
	b, err := evaluate(ctx, is, ev, draws, "iwvi", fmt.Sprintf("q0 with %d importance samples (IWVI at the chain's evaluations)", iw))
	if err != nil {
		return nil, err
	}
	return append(out, b), nil
}

// ImportanceWeighted evaluates, at the trainer's parameters (its q0 and global parameters,
// whatever bound trained them), IWVI with each number of importance samples in ks (each >= 1):
// the comparison at equal seconds per iteration, where ks are the K that cost what the model's own
// bound costs (measured with bench). Each on all N points averaged over draws noise draws, with
// its gap to ev as in Decompose. Errors: a K below 1, an evaluation that does not fit in memory.
func ImportanceWeighted(ctx context.Context, tr *train.Trainer, ev *Result, draws int, ks []int) ([]BoundValue, error) {
	if err := checkArgs(tr, draws); err != nil {
		return nil, err
	}
	var out []BoundValue
	for _, k := range ks {
		if k < 1 {
			return nil, fmt.Errorf("evidence: IWVI with %d samples: want at least 1", k)
		}
		t, err := withBound(tr, "iwvi", k)
		if err != nil {
			return nil, err
		}
		b, err := evaluate(ctx, t, ev, draws, "iwvi", fmt.Sprintf("q0 with %d importance samples (IWVI, --iwvi-k)", k))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Resampled evaluates, at the trainer's parameters, the trained annealed chain run as the smc
// bound (bounds "smc": chains that resample across each other when their ESS falls below
// threshold of them) with each count of chains per point in chains, the model's K, schedule and
// step sizes, and beside each IWVI with as many importance samples as those chains evaluate the
// likelihood (chains x (K + 1)): the comparison at equal evaluations that resampling has to win.
// Each on all N points averaged over draws noise draws, with its gap to ev as in Decompose.
// Errors: a model without an annealed chain, fewer than 2 chains, a threshold outside [0, 1].
func Resampled(ctx context.Context, tr *train.Trainer, ev *Result, draws int, chains []int, threshold float64) ([]BoundValue, error) {
	if err := checkArgs(tr, draws); err != nil {
		return nil, err
	}
	m := tr.Model
	if !m.Method.Annealed() {
		return nil, fmt.Errorf("evidence: the %s bound has no annealed chain (schedule, step sizes) to resample", m.Cfg.Method)
	}
	var out []BoundValue
	for _, c := range chains {
		withC := *m
		withC.Cfg.Samples = c
		mm, err := withC.WithBound("smc", m.Cfg.K, map[string]float64{"ess-threshold": threshold})
		if err != nil {
			return nil, fmt.Errorf("evidence: %d resampled chains: %w", c, err)
		}
		t := *tr
		t.Model = mm
		b, err := evaluate(ctx, &t, ev, draws, "smc", fmt.Sprintf("%d chains of %d steps resampling below ESS %g x %d, the trained eta_k", c, m.Cfg.K, threshold, c))
		if err != nil {
			return nil, err
		}
		iw := c * (m.Cfg.K + 1)
		is, err := withBound(tr, "iwvi", iw)
		if err != nil {
			return nil, err
		}
		ib, err := evaluate(ctx, is, ev, draws, "iwvi", fmt.Sprintf("q0 with %d importance samples (IWVI at those chains' evaluations)", iw))
		if err != nil {
			return nil, err
		}
		out = append(out, b, ib)
	}
	return out, nil
}

// evaluate returns t's bound averaged over draws noise draws (eval.NewPointBounds: the
// bound on all N points, split into its points' terms) with its gap to ev (gapTo); ev may be nil.
// A cancelled ctx stops it before the evaluation (each is one graph execution per draw).
func evaluate(ctx context.Context, t *train.Trainer, ev *Result, draws int, name, what string) (BoundValue, error) {
	if err := ctx.Err(); err != nil {
		return BoundValue{}, fmt.Errorf("evidence: stopped before evaluating %s: %w", what, err)
	}
	pb, err := eval.NewPointBounds(t, draws)
	if err != nil {
		return BoundValue{}, fmt.Errorf("evidence: evaluating %s: %w", what, err)
	}
	return boundOf(pb, ev, name, what), nil
}

// boundOf returns the bound of point terms pb (one row per noise draw, all N points): its -ELBO
// per point with the draws' standard error and, with ev, its gap to the evidence (gapTo).
func boundOf(pb *eval.PointBounds, ev *Result, name, what string) BoundValue {
	per := make([]float64, len(pb.L))
	for k := range per {
		per[k] = pb.NegELBO(k)
	}
	mean, twoSE := metrics.MeanAndTwoSE(per)
	b := BoundValue{Name: name, NegELBO: mean, SE: twoSE / 2, KLU: pb.KLU / float64(len(pb.L[0])), Reference: what}
	if ev != nil {
		gap, se := gapTo(pb, ev, b.NegELBO, b.SE)
		b.Gap, b.GapSE = &gap, &se
	}
	return b
}

// gapTo returns the gap between the evidence ev and the bound of point terms pb (nats per point)
// with its standard error. On all N points it is the distance of the bound's -ELBO per point
// (negELBO, s.e. se) to -E / N, whose s.e. combines the bound's and the estimate's. On some of them (ev.Points) it is the mean over
// those points of log Z_n - L_n, the KL terms cancelling, with the s.e. of the draws and of the
// estimate; for a random sample of the points (ev.Sampled), which estimates the all-point gap, also
// that of the sampling: the spread of the points' gaps over sqrt(points), finite-population
// corrected.
func gapTo(pb *eval.PointBounds, ev *Result, negELBO, se float64) (gap, gapSE float64) {
	n := len(pb.L[0])
	if len(ev.Points) == n {
		return negELBO - ev.NegLogEvidencePerPoint, math.Hypot(se, ev.SE)
	}
	draws := make([]float64, len(pb.L))
	for k, l := range pb.L {
		for i, p := range ev.Points {
			draws[k] += (ev.LogZ[i] - l[p]) / float64(len(ev.Points))
		}
	}
	gap, twoSE := metrics.MeanAndTwoSE(draws)
	gapSE = math.Hypot(twoSE/2, ev.SE)
	if ev.Sampled && len(ev.Points) > 1 {
		perPoint := make([]float64, len(ev.Points))
		for i, p := range ev.Points {
			for _, l := range pb.L {
				perPoint[i] += (ev.LogZ[i] - l[p]) / float64(len(pb.L))
			}
		}
		_, twoSampling := metrics.MeanAndTwoSE(perPoint)
		gapSE = math.Hypot(gapSE, twoSampling/2*math.Sqrt(1-float64(len(ev.Points))/float64(n)))
	}
	return gap, gapSE
}

// withBound returns a trainer that evaluates the bound method with K = k at tr's parameters (a
// copy of tr and of its model, model.WithBound; tr is unchanged). The model's own bound keeps its
// settings; another takes its defaults.
func withBound(tr *train.Trainer, method string, k int) (*train.Trainer, error) {
	var settings map[string]float64
	if method == tr.Model.Cfg.Method {
		settings = tr.Model.Cfg.BoundSettings
	}
	m, err := tr.Model.WithBound(method, k, settings)
	if err != nil {
		return nil, err
	}
	t := *tr
	t.Model = m
	return &t, nil
}

// Unconverged returns one warning per bound of bs that lies above the evidence estimate by more
// than 3 of its gap's standard errors (Gap < -3 GapSE), nil when none does. A valid bound cannot
// exceed log p(y); AIS's estimate is itself a stochastic lower bound, biased low when its
// temperatures are too few for the posterior's sharpness, so such a bound means the estimate has not
// converged: rerun with more temperatures (Options.Temps).
func Unconverged(bs []BoundValue) []string {
	var out []string
	for _, b := range bs {
		if b.Gap != nil && b.GapSE != nil && *b.Gap < -3**b.GapSE {
			out = append(out, fmt.Sprintf("%s is %.3f ± %.3f nats per point above the evidence estimate: "+
				"the AIS estimate has not converged; rerun with more temperatures (--temps)", b.Reference, -*b.Gap, *b.GapSE))
		}
	}
	return out
}

// checkArgs checks the trainer and the noise draws of Decompose and ChainVariants.
// sameModel returns an error unless ev (nil allowed: no gaps) was estimated at tr's model: the
// same number of points and the same KL(q(u) || p(u)) to 1e-9 relative (a fingerprint of the
// trained q(u) and kernel), so that no gap mixes two models.
func sameModel(tr *train.Trainer, ev *Result) error {
	if ev == nil {
		return nil
	}
	if ev.N != tr.Model.N {
		return fmt.Errorf("evidence: the estimate is of a model of %d points, the trainer's has %d: give the trainer it was estimated at", ev.N, tr.Model.N)
	}
	k, err := kl(tr)
	if err != nil {
		return err
	}
	if math.Abs(k-ev.KL) > 1e-9*max(1, math.Abs(k)) {
		return fmt.Errorf("evidence: the estimate was made at other parameters (KL(q(u) || p(u)) %.10g there, %.10g here): give the trainer it was estimated at", ev.KL, k)
	}
	return nil
}

func checkArgs(tr *train.Trainer, draws int) error {
	if err := tr.Ready(); err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	if draws < 2 || draws > eval.MaxDraws {
		return fmt.Errorf("evidence: %d noise draws: want 2..%d (two at least, for a standard error)", draws, eval.MaxDraws)
	}
	return nil
}
