package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/evidence"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// EvidenceSummary is the evidence reference at a checkpoint's parameters and the bounds that split
// the checkpoint's gap to it (the command's evidence.json).
type EvidenceSummary struct {
	Checkpoint string `json:"checkpoint"`
	Method     string `json:"method"` // the checkpoint's bound
	Iterations int    `json:"iterations"`
	Points     int    `json:"points"` // points estimated (the first ones, or the damaged ones; all by default)
	*evidence.Result
	Bounds []evidence.BoundValue `json:"bounds"` // q0 alone, IWVI, the trained chain (annealed bounds)
	// ChainVariants are the trained chain at EtaScales and Chains (evidence.ChainVariants).
	ChainVariants []evidence.BoundValue `json:"chain_variants,omitempty"`
	// Underdamped are the underdamped chain at Dampings (and EtaScales) and IWVI at the chain's
	// evaluations (evidence.Underdamped).
	Underdamped []evidence.BoundValue `json:"underdamped,omitempty"`
	// ImportanceWeighted is IWVI at the checkpoint's q0 with each of IWVIKs samples
	// (evidence.ImportanceWeighted): the K of equal seconds per iteration.
	ImportanceWeighted []evidence.BoundValue `json:"iwvi_at_k,omitempty"`
	// Resampled are the trained chain resampling across Resample chains (the smc bound) and IWVI
	// at the same evaluations (evidence.Resampled).
	Resampled []evidence.BoundValue `json:"resampled,omitempty"`
	// LearnedBackward are the trained chain with the mcd bound's backward kernel before and after
	// fitting it at the checkpoint's parameters (evidence.LearnedBackward).
	LearnedBackward []evidence.BoundValue `json:"learned_backward,omitempty"`
	// Adjusted are the Metropolis-adjusted annealed chains from q0 with AdjustedSteps equal steps
	// (evidence.Adjusted).
	Adjusted []evidence.BoundValue `json:"adjusted_chain,omitempty"`
	// Collapsed is the collapsed bound at the checkpoint's q0 and global parameters
	// (evidence.Collapsed: the optimal q(u) integrated out); nil for data with missing entries.
	Collapsed *evidence.BoundValue `json:"collapsed,omitempty"`
	// ESSGap pairs each estimated point's ESS with its gap to the evidence (EvidenceOptions.ESSK;
	// evidence.PairESS): the method's own weights, then K samples of q0.
	ESSGap []evidence.ESSGap `json:"ess_gap,omitempty"`
	// Warnings name the bounds above the evidence estimate (evidence.Unconverged), an estimate
	// its convergence check puts more than Tolerance above its limit (evidence.NotConverged), and
	// each extra bound asked for that failed to run and is left out (e.g. a backward-kernel fit
	// that diverged), with its error.
	Warnings []string `json:"warnings,omitempty"`
	// Config is the checkpoint's configuration; Provenance how the estimate was made (a command's
	// line, the commit, the machine: Provenance), set by the caller.
	Config     model.Config   `json:"config"`
	Provenance map[string]any `json:"provenance,omitempty"`
	Seconds    float64        `json:"seconds"`
}

// EvidenceOptions are Evidence's settings besides the AIS run's own (evidence.Options; its Points
// are filled from Points).
type EvidenceOptions struct {
	evidence.Options
	Checkpoint string // recorded in the summary
	Points     int    // estimate the first this many points (0: all)
	// Sample estimates a uniform random sample of this many points instead, drawn with Seed: the
	// bounds' gaps on them estimate the all-point gaps (their s.e. include the sampling's).
	Sample int
	// Damaged estimates the points with missing entries instead (the damaged images of Tables 2
	// and 3); an error for data without any.
	Damaged bool
	// ESSK > 0 pairs each estimated point's ESS of ESSK importance weights with its gap to the
	// evidence (evidence.PairESS; Table 3 uses the model's K).
	ESSK      int
	Draws     int       // noise draws of each bound, >= 2
	Tolerance float64   // nats per point the convergence check may put the estimate above its limit
	EtaScales []float64 // annealed checkpoints: the trained chain with every eta_k times each factor
	Chains    []int     // annealed checkpoints: this many weighted chains per point
	Dampings  []float64 // annealed checkpoints: the underdamped chain at these dampings in [0, 1)
	// Resample: annealed checkpoints: the trained chain with this many chains per point resampling
	// across each other (>= 2 each) when their ESS falls below ResampleESS of them (in [0, 1];
	// 0 means bounds.DefaultESSThreshold).
	Resample    []int
	ResampleESS float64
	// IWVIKs: also evaluate IWVI at the checkpoint's q0 with each of these numbers of samples
	// (>= 1 each; any checkpoint), e.g. the K whose seconds per iteration equal the model's bound's.
	IWVIKs []int
	// LearnBackward > 0 fits a learned backward kernel (bounds "mcd") for this many Adam steps at
	// the checkpoint's parameters, all frozen, and evaluates it (annealed checkpoints).
	LearnBackward int
	// AdjustedSteps: also evaluate the Metropolis-adjusted annealed chain from q0 with each of
	// these numbers of equal steps (>= 1 each; any checkpoint; evidence.Adjusted).
	AdjustedSteps []int
}

// Check refuses, before any work, options Evidence cannot use: each an *option.Error naming the
// field (Temps >= 1, Runs >= 2, Points >= 0 and not with Damaged, Draws 2..eval.MaxDraws, Seed
// >= 1, ESSK 0 or 2..100000, Start prior or q0, CheckTemps -1, 0 or below Temps, Tolerance > 0,
// EtaScales > 0, Chains >= 1, Dampings in [0, 1)).
func (opt EvidenceOptions) Check() error {
	type rule struct {
		field string
		ok    bool
		msg   string
	}
	for _, r := range []rule{
		{"Temps", opt.Temps >= 1, fmt.Sprintf("Temps %d: want >= 1", opt.Temps)},
		{"Runs", opt.Runs >= 2, fmt.Sprintf("Runs %d: want >= 2 (for a standard error)", opt.Runs)},
		{"Points", opt.Points >= 0, fmt.Sprintf("Points %d: want >= 0 (0: all)", opt.Points)},
		{"Draws", opt.Draws >= 2 && opt.Draws <= eval.MaxDraws, fmt.Sprintf("Draws %d: want 2..%d (2 or more for a standard error)", opt.Draws, eval.MaxDraws)},
		{"Seed", opt.Seed >= 1, fmt.Sprintf("Seed %d: want >= 1", opt.Seed)},
		{"ESSK", opt.ESSK == 0 || (opt.ESSK >= 2 && opt.ESSK <= 100000), fmt.Sprintf("ESSK %d: want 0 (off) or 2..100000 weights per point", opt.ESSK)},
		{"Damaged", !opt.Damaged || opt.Points == 0, fmt.Sprintf("Damaged chooses the points itself: leave out Points %d", opt.Points)},
		{"Sample", opt.Sample >= 0 && (opt.Sample == 0 || (opt.Points == 0 && !opt.Damaged)), fmt.Sprintf("Sample %d: want >= 0 (0: off), without Points or Damaged", opt.Sample)},
		{"Start", opt.Start == "" || opt.Start == "prior" || opt.Start == "q0", fmt.Sprintf("Start %q: want prior or q0", opt.Start)},
		{"CheckTemps", opt.CheckTemps >= -1 && opt.CheckTemps < opt.Temps && (opt.CheckTemps != 0 || opt.Temps >= 2),
			fmt.Sprintf("CheckTemps %d with Temps %d: want -1 (no check), 0 (a quarter of the temperatures; needs 2 or more) or 1..%d", opt.CheckTemps, opt.Temps, opt.Temps-1)},
		{"Tolerance", opt.Tolerance > 0 && !math.IsInf(opt.Tolerance, 0), fmt.Sprintf("Tolerance %g: want a finite number of nats > 0", opt.Tolerance)},
	} {
		if !r.ok {
			return option.Errorf(append([]string{r.field}, "Temps", "Points"), "%s", r.msg)
		}
	}
	for _, s := range opt.EtaScales {
		if !(s > 0) || math.IsInf(s, 0) {
			return option.Of("EtaScales", "EtaScales: %g is not a positive number", s)
		}
	}
	for _, c := range opt.Chains {
		if c < 1 {
			return option.Of("Chains", "Chains: %d is not a positive integer", c)
		}
	}
	for _, d := range opt.Dampings {
		if !(d >= 0 && d < 1) {
			return option.Of("Dampings", "Dampings %g: want dampings in [0, 1)", d)
		}
	}
	for _, k := range opt.IWVIKs {
		if k < 1 {
			return option.Of("IWVIKs", "IWVIKs: %d samples is not a positive integer", k)
		}
	}
	for _, t := range opt.AdjustedSteps {
		if t < 1 {
			return option.Of("AdjustedSteps", "AdjustedSteps: %d steps is not a positive integer", t)
		}
	}
	for _, c := range opt.Resample {
		if c < 2 {
			return option.Of("Resample", "Resample: %d chains: want >= 2 to resample among", c)
		}
	}
	if !(opt.ResampleESS >= 0 && opt.ResampleESS <= 1) {
		return option.Of("ResampleESS", "ResampleESS %g: want a share in [0, 1]", opt.ResampleESS)
	}
	if opt.LearnBackward < 0 {
		return option.Of("LearnBackward", "LearnBackward %d: want >= 0 steps (0: off)", opt.LearnBackward)
	}
	variants := opt.EtaScales != nil || opt.Chains != nil || opt.Dampings != nil || opt.Resample != nil || opt.LearnBackward > 0
	if cfg, _, err := train.ReadCheckpointInfo(opt.Checkpoint); variants && opt.Checkpoint != "" && err == nil && !annealed(cfg.Method) {
		return option.Errorf([]string{"EtaScales", "Chains", "Dampings", "Resample", "LearnBackward", "Checkpoint"}, "EtaScales, Chains, Dampings, Resample and LearnBackward vary an annealed chain; Checkpoint %s (%s) has none", opt.Checkpoint, cfg.Method)
	}
	return nil
}

// annealed reports whether the registered bound named method runs an annealed chain (an unknown
// one counts as annealed: loading its checkpoint reports it).
func annealed(method string) bool {
	m, err := bounds.Lookup(method)
	return err != nil || m.Annealed()
}

// Outputs returns the files Evidence's results take in a run directory (WriteESSGap's with ESSK).
func (opt EvidenceOptions) Outputs() []string {
	if opt.ESSK > 0 {
		return append([]string{"evidence.json"}, ESSGapOutputs...)
	}
	return []string{"evidence.json"}
}

// CheckChains refuses, before any work, chain counts whose evaluation on all of tr's points would
// not fit in memory (an *option.Error naming the count).
func CheckChains(tr *train.Trainer, counts []int) error {
	if err := tr.Ready(); err != nil {
		return err
	}
	for _, c := range counts {
		if me := drawsTooBig(tr, c, tr.Model.N); me != nil {
			return option.Memory(fmt.Sprintf("Chains %d: evaluating that many chains on all %d points", c, tr.Model.N),
				me.Need, me.Have, "Chains")
		}
	}
	return nil
}

// drawsTooBig returns the memory error of evaluating tr's bound with samples draws on n points at
// once, nil when it fits.
func drawsTooBig(tr *train.Trainer, samples, n int) *option.Error {
	cfg := tr.Model.Cfg
	cfg.Samples = samples
	return tooBig(cfg, n, tr.Model.D)
}

// tooBig returns the memory error of evaluating a model of configuration cfg on n points of d
// dimensions at once (full batch), nil when it fits.
func tooBig(cfg model.Config, n, d int) *option.Error {
	cfg.Batch = 0
	var me *option.Error
	if err := cfg.CheckMemory(n, d); errors.As(err, &me) {
		return me
	}
	return nil
}

// Evidence estimates the evidence of tr's model at its parameters (evidence.Estimate) and
// evaluates beside it the bounds that split the gap (evidence.Decompose, and the variants opt
// asks for), with the warnings of bounds above the estimate or an unconverged estimate. A variant
// that fails at run time is left out with a warning (keepGoing); an *option.Error for a setting
// it cannot use, or a failure of the estimate or of the checkpoint's own bound, is returned; so
// is ctx's error, which stops the estimate between two temperatures and every variant after it.
func Evidence(ctx context.Context, tr *train.Trainer, opt EvidenceOptions) (*EvidenceSummary, error) {
	if err := tr.Ready(); err != nil {
		return nil, err
	}
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if err := CheckChains(tr, slices.Concat(opt.Chains, opt.Resample)); err != nil { // refused now, not after the AIS runs
		return nil, err
	}
	for _, k := range opt.IWVIKs { // refused now, not after the AIS runs
		cfg := tr.Model.Cfg
		cfg.Method, cfg.K, cfg.Samples = "iwvi", k, 1
		if me := tooBig(cfg, tr.Model.N, tr.Model.D); me != nil {
			return nil, option.Memory(fmt.Sprintf("IWVIKs %d: IWVI with that many samples on all %d points", k, tr.Model.N), me.Need, me.Have, "IWVIKs")
		}
	}
	o := opt.Options
	n := tr.Model.N
	switch {
	case opt.Points > n:
		return nil, option.Of("Points", "Points %d: %s was trained on %d points; want at most %d (or 0 for all)", opt.Points, opt.Checkpoint, n, n)
	case opt.Damaged:
		if o.Points = data.DamagedRows(tr.Model.Mask); len(o.Points) == 0 {
			return nil, option.Of("Damaged", "Damaged: the data has no missing entries (no damaged points to estimate)")
		}
		n = len(o.Points)
	case opt.Sample > n:
		return nil, option.Of("Sample", "Sample %d: %s was trained on %d points; want at most %d", opt.Sample, opt.Checkpoint, n, n)
	case opt.Sample > 0:
		rng := rand.New(rand.NewPCG(opt.Seed, 0x5a4d91e))
		o.Points = rng.Perm(n)[:opt.Sample]
		slices.Sort(o.Points)
		n = opt.Sample
	case opt.Points > 0:
		n = min(opt.Points, n)
		o.Points = make([]int, n)
		for i := range o.Points {
			o.Points[i] = i
		}
	}
	if opt.ESSK > 0 && n < evidence.MinESSPoints {
		return nil, option.Errorf([]string{"ESSK", "Points"}, "ESSK %d: pairing the ESS with the gap needs >= %d points, not %d; raise Points", opt.ESSK, evidence.MinESSPoints, n)
	}
	if opt.ESSK > 0 { // the weights of every point are drawn at once: refused now, not after the AIS runs
		if me := drawsTooBig(tr, opt.ESSK, n); me != nil {
			return nil, option.Memory(fmt.Sprintf("ESSK %d: drawing that many weights for %d points at once", opt.ESSK, n),
				me.Need, me.Have, "ESSK", "Points", "Damaged")
		}
	}
	start := time.Now()
	res, err := evidence.Estimate(ctx, tr, o)
	if err != nil {
		return nil, err
	}
	res.Sampled = opt.Sample > 0
	sum := &EvidenceSummary{Checkpoint: opt.Checkpoint, Method: tr.Model.Cfg.Method, Iterations: tr.Iter, Points: n, Result: res,
		Config: tr.Model.Cfg}
	if sum.Bounds, err = evidence.Decompose(ctx, tr, res, opt.Draws); err != nil {
		return nil, err
	}
	if err := extraBounds(ctx, sum, tr, res, opt); err != nil {
		return nil, err
	}
	if !tr.Model.HasMask() {
		c, err := evidence.Collapsed(tr, max(20, 200_000/tr.Model.N), 3, opt.Seed)
		if err != nil {
			return nil, err
		}
		b := c.BoundValue()
		sum.Collapsed = &b
	}
	if opt.ESSK > 0 {
		if sum.ESSGap, err = evidence.PairESS(tr, res, opt.ESSK, opt.Seed); err != nil {
			return nil, err
		}
	}
	sum.Warnings = append(sum.Warnings, evidence.Unconverged(sum.All())...)
	if w := evidence.Stuck(res); w != "" {
		sum.Warnings = append(sum.Warnings, "the evidence estimate: "+w+" (--temps)")
	} else if w := evidence.NotConverged(res, opt.Tolerance); w != "" {
		sum.Warnings = append(sum.Warnings, w)
	}
	sum.Seconds = time.Since(start).Seconds()
	return sum, nil
}

// extraBounds fills the summary's bounds beyond the checkpoint's own that opt asks for (chain
// variants, IWVI at other K, underdamped, resampled, learned backward, adjusted chains). Each runs
// through keepGoing: one that fails is a warning, and the evidence estimate and the others stay.
func extraBounds(ctx context.Context, sum *EvidenceSummary, tr *train.Trainer, res *evidence.Result, opt EvidenceOptions) error {
	th := opt.ResampleESS
	if th == 0 {
		th = bounds.DefaultESSThreshold
	}
	for _, b := range []struct {
		asked bool
		what  string
		run   func() error
	}{
		{opt.EtaScales != nil || opt.Chains != nil, "the chain variants (EtaScales, Chains)", func() (err error) {
			sum.ChainVariants, err = evidence.ChainVariants(ctx, tr, res, opt.Draws, opt.EtaScales, opt.Chains)
			return err
		}},
		{opt.IWVIKs != nil, "IWVI at IWVIKs", func() (err error) {
			sum.ImportanceWeighted, err = evidence.ImportanceWeighted(ctx, tr, res, opt.Draws, opt.IWVIKs)
			return err
		}},
		{opt.Dampings != nil, "the underdamped chains (Dampings)", func() (err error) {
			sum.Underdamped, err = evidence.Underdamped(ctx, tr, res, opt.Draws, opt.EtaScales, opt.Dampings)
			return err
		}},
		{opt.Resample != nil, "the resampled chains (Resample)", func() (err error) {
			sum.Resampled, err = evidence.Resampled(ctx, tr, res, opt.Draws, opt.Resample, th)
			return err
		}},
		{opt.LearnBackward > 0, "the learned backward kernel (LearnBackward)", func() (err error) {
			sum.LearnedBackward, err = evidence.LearnedBackward(ctx, tr, res, opt.Draws, opt.LearnBackward)
			return err
		}},
		{opt.AdjustedSteps != nil, "the adjusted chains (AdjustedSteps)", func() (err error) {
			sum.Adjusted, err = evidence.Adjusted(ctx, tr, res, opt.Draws, opt.AdjustedSteps, opt.Seed)
			return err
		}},
	} {
		if !b.asked {
			continue
		}
		if err := keepGoing(sum, b.what, b.run); err != nil {
			return err
		}
	}
	return nil
}

// keepGoing runs one extra bound named what. A setting the library refuses (*option.Error: a
// size beyond memory, a bad value) is returned, since no run with it can succeed; any other
// failure (a fit that diverged, a non-finite estimate) becomes a warning in sum ("WHAT failed and
// is left out: ERROR") and keepGoing returns nil, so that one failing candidate does not lose
// the evidence estimate and the bounds already computed.
func keepGoing(sum *EvidenceSummary, what string, run func() error) error {
	err := run()
	var oe *option.Error
	if err == nil || errors.As(err, &oe) {
		return err
	}
	sum.Warnings = append(sum.Warnings, fmt.Sprintf("%s failed and is left out: %v", what, err))
	return nil
}

// All returns every bound of the summary: Bounds, ImportanceWeighted, ChainVariants, Underdamped,
// Resampled, LearnedBackward, Adjusted.
func (s *EvidenceSummary) All() []evidence.BoundValue {
	return slices.Concat(s.Bounds, s.ImportanceWeighted, s.ChainVariants, s.Underdamped, s.Resampled, s.LearnedBackward, s.Adjusted)
}

// Report writes the summary for a reader on w: the evidence estimate with its convergence check,
// then each bound with its gap to the evidence, the collapsed bound and the ESS pairings.
func (s *EvidenceSummary) Report(w io.Writer) {
	res, n := s.Result, s.Points
	fmt.Fprintf(w, "-log evidence per point %.4f ± %.4f (%d points, %d temperatures x %d runs, acceptance %.2f)\n",
		res.NegLogEvidencePerPoint, res.SE, n, res.Temps, res.Runs, res.AcceptRate)
	if c := res.Check; c != nil {
		fmt.Fprintf(w, "  at %d temperatures %.4f ± %.4f: extrapolated to many temperatures %.4f (remaining bias %.4f)\n",
			c.Temps, c.NegLogEvidencePerPoint, c.SE, c.Extrapolated, c.RemainingBias)
	}
	for _, b := range s.All() {
		gap := ""
		if b.Gap != nil {
			gap = fmt.Sprintf("gap %.4f ± %.4f", *b.Gap, *b.GapSE)
			if n < res.N {
				gap += fmt.Sprintf(" on the %d points", n)
			}
		}
		if b.Accept != nil {
			gap += fmt.Sprintf("  (mean acceptance %.2f)", *b.Accept)
		}
		fmt.Fprintf(w, "  %-70s -ELBO %.4f ± %.4f (KL(q(u))/N %.4f)  %s\n", b.Reference, b.NegELBO, b.SE, b.KLU, gap)
	}
	if c := s.Collapsed; c != nil {
		fmt.Fprintf(w, "  %-70s -bound %.4f ± %.4f  (u integrated out: not comparable with the evidence, which is at the trained q(u))\n", c.Reference, c.NegELBO, c.SE)
	}
	for _, g := range s.ESSGap {
		fmt.Fprintf(w, "  ESS of %d %s weights %.2f ± %.2f, gap %.3f ± %.3f nats per point; Kendall tau (ESS, gap) %.2f (sd %.2f if unrelated); gap by ESS quartile, lowest first: %.3f\n",
			g.K, g.Weights, g.MeanESS, g.MeanESSSE, g.MeanGap, g.MeanGapSE, g.Kendall, g.KendallNullSD, g.GapByESSQuartile)
	}
}
