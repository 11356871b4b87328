package evidence

import (
	"context"
	"fmt"
	"math"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/ais"
)

// Convergence compares the evidence estimate at T temperatures with an independent one at
// T_c < T (T/4 by default). AIS's log-weight is biased low by about c/T, so -log evidence per point
// E_T sits above its limit E_inf by about c/T: the shift E_T - E_c estimates c, and
//
//	E_inf ≈ E_T + Shift T_c / (T - T_c)        (E_T + Shift / 3 at T_c = T/4)
//
// is the Richardson extrapolation to infinitely many temperatures. The extrapolation is an
// estimate, not a bound: the gaps of Decompose stay measured to E_T, which remains (in expectation)
// an upper bound on -log evidence, so that they are lower bounds on the true gaps, short of them by
// about RemainingBias.
type Convergence struct {
	Temps                  int     `json:"temperatures"`                  // T_c
	NegLogEvidencePerPoint float64 `json:"neg_log_evidence_per_point"`    // E_c, nats per point
	SE                     float64 `json:"neg_log_evidence_per_point_se"` // its standard error
	// Shift is E_T - E_c: negative when the T temperatures found more evidence, as AIS should.
	Shift   float64 `json:"shift"`
	ShiftSE float64 `json:"shift_se"`
	// Extrapolated is E_inf under the 1/T law, and RemainingBias = E_T - Extrapolated the part of
	// E_T still above it (nats per point, positive when Shift is negative).
	Extrapolated  float64 `json:"neg_log_evidence_per_point_extrapolated"`
	RemainingBias float64 `json:"remaining_bias"`
}

// check runs the convergence check's estimate at temps temperatures (0: r.Temps/4, at least 1)
// with o's other options and a seed of its own.
func (r *Result) check(ctx context.Context, s *ais.Sampler, o ais.Options, temps int) (*Convergence, error) {
	if temps == 0 {
		temps = max(1, r.Temps/4)
	}
	if temps >= r.Temps {
		return nil, fmt.Errorf("evidence: the convergence check's %d temperatures must be fewer than the estimate's %d", temps, r.Temps)
	}
	o.Temps, o.Seed = temps, o.Seed^0x5bd1e9955bd1e995
	if p := o.Progress; p != nil {
		o.Progress = func(stage string, done, total int) { p("check "+stage, done, total) }
	}
	est, err := s.Estimate(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("evidence: convergence check at %d temperatures: %w", temps, err)
	}
	c := &Convergence{Temps: temps}
	c.NegLogEvidencePerPoint, c.SE = r.perPoint(est)
	c.Shift, c.ShiftSE = r.NegLogEvidencePerPoint-c.NegLogEvidencePerPoint, math.Hypot(r.SE, c.SE)
	c.RemainingBias = -c.Shift * float64(temps) / float64(r.Temps-temps)
	c.Extrapolated = r.NegLogEvidencePerPoint - c.RemainingBias
	return c, nil
}

// NotConverged returns a warning when the convergence check of r estimates that its -log evidence
// per point still lies more than tol nats above the limit of many temperatures, and the shift
// behind that estimate is more than 3 of its standard errors; "" otherwise (and without a check).
func NotConverged(r *Result, tol float64) string {
	if r == nil {
		return ""
	}
	c := r.Check
	if c == nil || c.RemainingBias <= tol || math.Abs(c.Shift) <= 3*c.ShiftSE {
		return ""
	}
	return fmt.Sprintf("the evidence estimate moved by %.3f ± %.3f nats per point from %d to %d temperatures: "+
		"if AIS's bias falls as 1/T it is still about %.3f above its limit (%.3f), and every gap is understated "+
		"by about as much; rerun with --temps %d", c.Shift, c.ShiftSE, c.Temps, r.Temps, c.RemainingBias, c.Extrapolated, 4*r.Temps)
}

// Stuck returns a warning when the estimate's AIS chains barely moved (mean acceptance below
// ais.MinAccept: the value and its standard error then mean nothing), "" otherwise or for nil.
func Stuck(r *Result) string {
	if r == nil {
		return ""
	}
	return (&ais.Result{Accept: r.AcceptRate, Temps: r.Temps}).Warning()
}
