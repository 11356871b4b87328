package experiment

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/evidence"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// ScheduleLab evaluates a trained annealed model at its fixed global parameters and q0 under an
// annealing schedule beta_k, step sizes and (for the underdamped chain, bound uha) a momentum
// damping set by hand: what notebook 02's sliders drive. Each setting costs one run of Chains
// chains on the lab's points (and, the first time a schedule or step-size factor is seen,
// compiling its graph). The lab works on a copy of the model's variables (train.Trainer.Scratch):
// nothing it evaluates changes the trained model.
type ScheduleLab struct {
	Points []int  // the points evaluated
	Chains int    // annealed chains per point (>= 1); with >= 2 the ESS of their weights is reported
	Seed   uint64 // the chains' noise: every setting sees the same draws

	tr      *train.Trainer  // a copy of the trained one with its own variables (Scratch)
	model   *model.Model    // a copy of the trained model, whose schedule and step sizes the lab sets
	sched   anneal.Schedule // the trained schedule, which LabSetting{} restores
	damping *float64        // the trained momentum damping of an underdamped model (nil: VAIS)
	uha     *model.Model    // a VAIS model's underdamped twin (made on first use), for Damping
	base    *LabResult      // the trained chain's result, View's reference (evaluated on first use)
	klu     float64         // KL(q(u) || p(u)) / N at the parameters
	trained *train.Params   // the trained schedule and step sizes
	logZ    map[int]float64 // log Z_n of the evidence reference (nil: none)
}

// LabSetting is one hand-set chain: Betas beta_1..beta_K (increasing in (0, 1], the last 1; nil:
// the trained schedule), EtaScale, a factor on every trained eta_k (0: 1), and Damping, the
// momentum damping gamma in [0, 1) of the underdamped chain (bound uha: partial momentum refresh,
// one leapfrog step per bridge, at the same evaluations as VAIS's Langevin step); nil: the trained
// chain (VAIS's Langevin move, or an underdamped model's trained damping). A Damping on a VAIS
// model runs the underdamped chain with VAIS's schedule and step sizes (leapfrog step
// sqrt(2 eta_k)) and an identity mass.
type LabSetting struct {
	Betas    []float64
	EtaScale float64
	Damping  *float64
}

// LabResult is the bound under one LabSetting on the lab's points.
type LabResult struct {
	// NegBound is -(mean over the points of L_n) + KL(q(u) || p(u)) / N, nats per point: the
	// -ELBO on these points with Chains chains; SE is its standard error over the points.
	NegBound, SE float64
	// Gap is the mean over the points of log Z_n - L_n (nats per point) and GapSE its standard
	// error, when the lab has an evidence reference; nil otherwise.
	Gap, GapSE *float64
	Accept     []float64 // mean Metropolis-Hastings acceptance of each transition k = 1..K
	ESS        float64   // mean over the points of the ESS of their Chains weights (Chains >= 2)
	Betas      []float64 // the schedule evaluated
	Etas       []float64 // the step sizes evaluated (the trained eta_k times EtaScale)
	Damping    *float64  // the momentum damping evaluated (nil: VAIS's Langevin chain)
	// PerPoint are the points' L_n (nats), in the order of the lab's Points: every setting sees
	// the same noise, so two settings' L_n pair point by point (Paired).
	PerPoint []float64
}

// Paired returns the mean over the points of r's -L_n minus base's, with its standard error: the
// difference of two settings' bounds, paired point by point (same points, same noise), whose
// error is far smaller than either bound's own spread over the points.
func (r *LabResult) Paired(base *LabResult) (diff, se float64) {
	d := make([]float64, len(r.PerPoint))
	for i := range d {
		d[i] = base.PerPoint[i] - r.PerPoint[i]
	}
	return metrics.MeanSE(d)
}

// NewScheduleLab returns a lab for the trained annealed model of tr on the given points, with
// chains chains per point and noise from seed; ev, when not nil, is an evidence estimate
// (evidence.Estimate) covering every one of the points, for the gap. Errors: a model without an
// annealed chain, no points or a point out of range, chains < 1, points the evidence lacks.
func NewScheduleLab(tr *train.Trainer, points []int, chains int, seed uint64, ev *evidence.Result) (*ScheduleLab, error) {
	if err := tr.Ready(); err != nil {
		return nil, err
	}
	if !tr.Model.Method.Annealed() {
		return nil, fmt.Errorf("schedule lab: the %s bound has no annealed chain", tr.Model.Cfg.Method)
	}
	if len(points) == 0 || chains < 1 {
		return nil, fmt.Errorf("schedule lab: %d points and %d chains: want at least one of each", len(points), chains)
	}
	p, err := tr.Params()
	if err != nil {
		return nil, err
	}
	e, err := eval.Evaluate(tr, 2, nil)
	if err != nil {
		return nil, err
	}
	l := &ScheduleLab{Points: points, Chains: chains, Seed: seed, trained: p, klu: e.KLUPerPoint}
	if ev != nil {
		l.logZ = map[int]float64{}
		for i, n := range ev.Points {
			l.logZ[n] = ev.LogZ[i]
		}
		for _, n := range points {
			if _, ok := l.logZ[n]; !ok {
				return nil, fmt.Errorf("schedule lab: the evidence estimate does not cover point %d", n)
			}
		}
	}
	if l.tr, err = tr.Scratch(); err != nil {
		return nil, fmt.Errorf("schedule lab: %w", err)
	}
	mm := *tr.Model
	l.model, l.sched = &mm, tr.Model.Schedule
	if tr.Model.Cfg.Method == "uha" {
		v := l.dampingVar().GetVariable(bounds.DampingVariable)
		if v == nil {
			return nil, fmt.Errorf("schedule lab: the underdamped model has no trained damping (bound/uha/%s)", bounds.DampingVariable)
		}
		t, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("schedule lab: reading the trained damping: %w", err)
		}
		d := bounds.DampingOf(vars.Flat64(t)[0])
		l.damping = &d
	}
	return l, nil
}

// dampingVar is the scope of the underdamped chain's damping in the lab's variables.
func (l *ScheduleLab) dampingVar() *mlmodel.Scope { return model.BoundScope(l.tr.Ctx, "uha") }

// TrainedDamping returns the trained momentum damping of an underdamped model, or nil for VAIS.
func (l *ScheduleLab) TrainedDamping() *float64 {
	if l == nil {
		return nil
	}
	return l.damping
}

// Trained returns the trained schedule beta_k and step sizes eta_k.
func (l *ScheduleLab) Trained() (betas, etas []float64) {
	if l == nil || l.trained == nil {
		return nil, nil
	}
	return l.trained.Betas, l.trained.Etas
}

// Evaluate runs the lab's chains under s and returns the bound, its gap to the evidence, the
// acceptance per transition and the ESS. Errors: a schedule of the wrong length, not increasing,
// outside (0, 1] or not ending at 1; a step-size factor that is not positive and finite.
func (l *ScheduleLab) Evaluate(s LabSetting) (*LabResult, error) {
	if l == nil || l.trained == nil {
		return nil, fmt.Errorf("schedule lab: nil ScheduleLab: make one with NewScheduleLab")
	}
	k := len(l.trained.Betas)
	betas := l.trained.Betas
	if s.Betas != nil {
		if len(s.Betas) != k {
			return nil, fmt.Errorf("schedule lab: %d betas for a chain of K = %d steps", len(s.Betas), k)
		}
		fx := anneal.Fixed{Kind: "custom", Values: s.Betas}
		if _, err := fx.BetaValues(k); err != nil {
			return nil, fmt.Errorf("schedule lab: %w", err)
		}
		l.model.Schedule, betas = fx, s.Betas
	} else {
		l.model.Schedule = l.sched
	}
	scale := s.EtaScale
	if scale == 0 {
		scale = 1
	}
	if !(scale > 0) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("schedule lab: step-size factor %g: want a positive number", scale)
	}
	l.model.Step.Scale = scale
	damping := s.Damping
	if damping == nil {
		damping = l.damping
	}
	if err := l.useChain(damping); err != nil {
		return nil, err
	}
	w, err := eval.Weights(l.tr, l.Points, l.Chains, l.Seed)
	if err != nil {
		return nil, err
	}
	r := &LabResult{Accept: w.Accept, Betas: betas, PerPoint: w.PerPointBound, Damping: damping}
	for _, e := range l.trained.Etas {
		r.Etas = append(r.Etas, e*scale)
	}
	mean, se := metrics.MeanSE(w.PerPointBound)
	r.NegBound, r.SE = -mean+l.klu, se
	if !finite(r.NegBound, r.SE) {
		return nil, fmt.Errorf("schedule lab: the bound of this setting is %g ± %g, not finite (step-size factor %g): its chain's steps overflow; lower the step sizes",
			r.NegBound, r.SE, scale)
	}
	if l.Chains >= 2 {
		r.ESS = w.ESS
	}
	if l.logZ != nil {
		gaps := make([]float64, len(l.Points))
		for i, p := range l.Points {
			gaps[i] = l.logZ[p] - w.PerPointBound[i]
		}
		g, gse := metrics.MeanSE(gaps)
		r.Gap, r.GapSE = &g, &gse
	}
	return r, nil
}

// useChain points the lab's trainer at the Langevin chain (damping nil: the lab's model as it is)
// or at the underdamped chain with the given damping, set in the lab's own variables. The
// underdamped model keeps the bound settings of the trained one (or the defaults), so a new
// damping reuses the compiled graph: only the variable's value changes.
func (l *ScheduleLab) useChain(damping *float64) error {
	if damping == nil {
		l.tr.Model = l.model
		return nil
	}
	d := *damping
	if !(d >= 0 && d < 1) {
		return fmt.Errorf("schedule lab: damping %g: want a damping in [0, 1)", d)
	}
	m := l.model
	if m.Cfg.Method != "uha" {
		if l.uha == nil { // one twin, so that its graphs are cached like the model's own
			var err error
			if l.uha, err = l.model.WithBound("uha", l.model.Cfg.K, nil); err != nil {
				return fmt.Errorf("schedule lab: %w", err)
			}
		}
		l.uha.Schedule, l.uha.Step = l.model.Schedule, l.model.Step
		m = l.uha
	}
	l.tr.Model = m
	raw := bounds.DampingLogit(d)
	if v := l.dampingVar().GetVariable(bounds.DampingVariable); v != nil {
		if err := v.SetValue(vars.Convert(tensors.FromScalar(raw), v.DType())); err != nil {
			return fmt.Errorf("schedule lab: setting the damping: %w", err)
		}
		return nil
	}
	vars.New(l.dampingVar(), bounds.DampingVariable, raw)
	return nil
}

// finite reports whether every value is neither NaN nor ±Inf.
func finite(v ...float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
