// Package evidence estimates, for a trained model's global parameters (kernel, noise, Z, q(u)),
// the local evidence that no choice of q0 or chain can exceed:
//
//	log Z_n = log ∫ exp(l_n(h)) N(h | 0, I) dh,    E = sum_n log Z_n - KL(q(u) || p(u)),
//
// with l_n(h) the expected log-likelihood of point n under q(f) (the term every bound of package
// bounds averages or weights). MF, IWVI and VAIS are all lower bounds on E at the same global
// parameters, so -E / N (nats per point, the scale of train's -ELBO) is the reference every
// bound's -ELBO sits above; the difference is what the local approximation loses.
//
// Estimate uses annealed importance sampling from the prior N(0, I) to the posterior of h_n
// (package ais: a geometric path, one Metropolis-adjusted Langevin transition per temperature,
// pilot-tuned step sizes), so that exp(log w) of every run is an unbiased estimate of Z_n. Its log
// is biased low, by an amount that falls with the number of temperatures T (about as 1/T), and
// that grows with the posterior's sharpness: Estimate checks it by a second estimate at T/4
// temperatures (Convergence).
package evidence

import (
	"context"
	"fmt"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/memory"
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/ais"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Options of Estimate; zero values take the defaults.
type Options struct {
	Temps  int     // AIS temperatures T (default 1000), on a sigmoid schedule
	Runs   int     // independent AIS runs per point (default 8)
	Seed   uint64  // seeds the runs (default 1); the pilot run uses a seed derived from it
	Points []int   // the points to estimate (default all N)
	Accept float64 // the pilot's target MALA acceptance rate (default 0.65)
	// CheckTemps are the temperatures of the convergence check's independent estimate (default
	// Temps/4, at least 1; negative: no check). It costs CheckTemps/Temps of the main estimate.
	CheckTemps int
	// Start is where the annealing path starts: "prior" (default, also ""), N(h | 0, I), or "q0",
	// each point's trained q0(h_n) = N(a_n, L_n L_n^T). Both estimates are unbiased for Z_n; from
	// q0, which is already near the posterior, the path is shorter, so fewer temperatures leave a
	// smaller bias. The chain runs in q0's whitened coordinates z (h = a_n + L_n z) with the base
	// N(z | 0, I) and the log-likelihood l_n(h) + log N(h | 0, I) - log q0(h).
	Start string
	// Progress, when not nil, is called after every AIS temperature (ais.Options.Progress) of the
	// pilot, the main runs and the convergence check ("check pilot", "check main").
	Progress func(stage string, done, total int)
}

// Result is the evidence estimate at a trained model's global parameters.
type Result struct {
	Points []int     `json:"-"`        // the points estimated
	LogZ   []float64 `json:"-"`        // log Z_n per point, nats
	LogZSE []float64 `json:"-"`        // their standard errors
	KL     float64   `json:"kl_qu_pu"` // KL(q(u) || p(u)), nats
	N      int       `json:"n"`        // the model's number of points
	// NegLogEvidencePerPoint is -(mean over the points estimated of log Z_n) + KL / N: -E / N when
	// every point is estimated, the scale of train's neg_elbo_per_point.
	NegLogEvidencePerPoint float64 `json:"neg_log_evidence_per_point"`
	// SE is its standard error: sqrt(sum_n se_n^2) / (points estimated).
	SE         float64 `json:"neg_log_evidence_per_point_se"`
	AcceptRate float64 `json:"accept_rate"` // mean MALA acceptance of the main runs
	Temps      int     `json:"temperatures"`
	Start      string  `json:"start"` // where the annealing path starts: prior or q0 (Options.Start)
	Runs       int     `json:"runs"`
	// Sampled reports that Points are a uniform random sample of the N points (the caller's draw,
	// set by the caller): the bounds' gaps on them estimate the gaps on all points, and their
	// standard errors include the sampling's.
	Sampled bool `json:"random_sample,omitempty"`
	// Check is the convergence check (nil when Options.CheckTemps < 0).
	Check *Convergence `json:"convergence,omitempty"`
}

// Estimate runs AIS for the points of o (default all) at the trainer's current parameters. A
// cancelled ctx stops it between two temperatures. Errors: a point out of range, a non-finite
// weight (the model or the step sizes failed), ctx's error (wrapped).
func Estimate(ctx context.Context, tr *train.Trainer, o Options) (*Result, error) {
	if err := tr.Ready(); err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	if o.Temps < 0 || o.Runs < 0 || o.Runs == 1 {
		return nil, fmt.Errorf("evidence: %d temperatures and %d runs: want temperatures >= 0 and runs >= 2 (for a standard error; 0 = the defaults)", o.Temps, o.Runs)
	}
	if o.Points == nil {
		for i := 0; i < tr.Model.N; i++ {
			o.Points = append(o.Points, i)
		}
	}
	for _, n := range o.Points {
		if n < 0 || n >= tr.Model.N {
			return nil, fmt.Errorf("evidence: point %d out of range [0, %d)", n, tr.Model.N)
		}
	}
	if math.IsNaN(o.Accept) || o.Accept < 0 || o.Accept >= 1 {
		return nil, fmt.Errorf("evidence: acceptance target %g: want one in (0, 1) (0: the default 0.65)", o.Accept)
	}
	m := tr.Model
	runs, temps := o.Runs, o.Temps
	if runs <= 0 {
		runs = 8
	}
	if temps <= 0 {
		temps = 1000
	}
	// The runs' states, and the pilot's step size per temperature and point with the schedule
	// (kept for the main runs: T x points, the part that grows with the temperatures).
	need := 8 * (memory.Floats(len(o.Points), runs)*float64(m.Cfg.M+m.D+m.Cfg.Q) + 2*memory.Floats(temps, len(o.Points)+1))
	if err := memory.Check(fmt.Sprintf("the evidence's AIS (%d points x %d runs, %d temperatures)", len(o.Points), runs, temps),
		need, "Runs", "Points", "Temps"); err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	if o.Start != "" && o.Start != "prior" && o.Start != "q0" {
		return nil, fmt.Errorf("evidence: start %q: want prior or q0", o.Start)
	}
	s, err := newSampler(tr, o.Points, o.Start == "q0")
	if err != nil {
		return nil, err
	}
	ao := ais.Options{Temps: o.Temps, Runs: o.Runs, Seed: o.Seed, Accept: o.Accept, Progress: o.Progress}
	est, err := s.Estimate(ctx, ao)
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	res := &Result{Points: o.Points, N: tr.Model.N, Temps: est.Temps, Runs: est.Runs, AcceptRate: est.Accept,
		LogZ: est.LogZ, LogZSE: est.LogZSE, Start: "prior"}
	if o.Start == "q0" {
		res.Start = "q0"
	}
	if res.KL, err = kl(tr); err != nil {
		return nil, err
	}
	res.NegLogEvidencePerPoint, res.SE = res.perPoint(est)
	if o.CheckTemps >= 0 {
		if res.Check, err = res.check(ctx, s, ao, o.CheckTemps); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// perPoint returns -(mean log Z_n) + KL / N of est and its standard error.
func (r *Result) perPoint(est *ais.Result) (float64, float64) {
	mean, se := est.Mean()
	return -mean + r.KL/float64(r.N), se
}

// newSampler returns the AIS sampler of the points' l_n(h) at the trainer's parameters: the
// points' rows and masks are constants of its graphs. With fromQ0 the sampler's states are q0's
// whitened coordinates z and its log-likelihood l_n(a_n + L_n z) + log N(h | 0, I) - log q0(h)
// (Options.Start): the same Z_n, with q0 as the path's start.
func newSampler(tr *train.Trainer, points []int, fromQ0 bool) (*ais.Sampler, error) {
	m := tr.Model
	rows := make([][]float64, len(points))
	mask := make([][]float64, len(points))
	idx := make([]int32, len(points))
	for i, n := range points {
		rows[i] = make([]float64, m.D)
		mask[i] = make([]float64, m.D)
		for j, v := range m.X[n] {
			if m.Mask == nil || m.Mask[n][j] != 0 {
				rows[i][j], mask[i][j] = v, 1
			}
		}
		idx[i] = int32(n)
	}
	x, err := vars.Matrix(rows, m.DType())
	if err != nil {
		return nil, err
	}
	mk, err := vars.Matrix(mask, m.DType())
	if err != nil {
		return nil, err
	}
	idxT := tensors.FromValue(idx)
	return ais.New(ais.Target{Backend: tr.Backend, Ctx: tr.Ctx, DType: m.DType(), B: len(points), Q: m.Cfg.Q,
		LogLik: func(ctx *mlmodel.Scope, h *Node) *Node {
			g := h.Graph()
			var mkN *Node
			if m.HasMask() {
				mkN = ConstTensor(g, mk)
			}
			b := m.BatchFor(ctx, ConstTensor(g, x), mkN, ConstTensor(g, idxT))
			if !fromQ0 {
				return b.LogLik(h)
			}
			return Sub(b.LogJoint(b.Q0.Sample(h)), b.Q0.LogProbWhitened(h))
		}})
}

// kl returns KL(q(u) || p(u)) at the trainer's parameters.
func kl(tr *train.Trainer) (float64, error) {
	m := tr.Model
	exec, err := mlmodel.NewExec(tr.Backend, tr.Ctx.Store(), func(ctx *mlmodel.Scope, x *Node) *Node {
		return ConvertDType(gp.NewPosterior(ctx, x.Graph(), m.Inducing, m.Kernel).KL(), x.DType())
	})
	if err != nil {
		return 0, err
	}
	out, err := exec.Exec(vars.Convert(tensors.FromValue(0.0), m.DType()))
	if err != nil {
		return 0, err
	}
	return vars.Flat64(out[0])[0], nil
}
