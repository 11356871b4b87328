// Package ais estimates normalising constants of latent-variable posteriors by annealed importance
// sampling (Neal 2001): for B independent targets (one per data point) with a standard normal
// prior over h [Q] and a log-likelihood l_b(h),
//
//	Z_b = ∫ exp(l_b(h)) N(h | 0, I) dh,
//
// it follows the geometric path pi_t(h) ∝ N(h | 0, I) exp(beta_t l_b(h)) from the prior (beta_0 =
// 0) to the posterior (beta_T = 1) with one Metropolis-adjusted Langevin (MALA) transition per
// temperature. Every transition leaves its pi_t invariant, so the exponentiated log weight of each
// run is an unbiased estimate of Z_b; log of the mean weight over independent runs is the estimate
// (below log Z_b in expectation by Jensen's inequality, by less as temperatures are added) and its
// standard error comes from the delta method on the weights.
//
// The MALA step sizes come from a pilot run with its own seed, tuned per target and temperature
// toward an acceptance rate, and are then fixed for the main runs (so that the main runs'
// transitions do not depend on their own states' history).
//
// Package evidence uses it for the GPLVM's local evidence, package cmf for a decoder's
// log-likelihood log p(y) (Wu, Burda, Salakhutdinov & Grosse 2017 evaluate decoder-based models
// this way).
package ais

import (
	"context"
	"fmt"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/memory"
	"math"
	"math/rand/v2"

	backends "github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/floats"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// Target is B independent posteriors ∝ N(h | 0, I_Q) exp(l_b(h)), b = 0..B-1.
type Target struct {
	Backend backends.Backend
	// Ctx holds the variables LogLik reads; AIS never changes them.
	Ctx   *mlmodel.Scope
	DType dtypes.DType // of h and of LogLik's value (float64 or float32)
	B, Q  int          // targets and latent dimensions
	// LogLik builds l_b(h) [R, B] for states h [R, B, Q] (R runs of each target). It must be
	// differentiable in h; constants (data) may be built into the graph with ConstTensor.
	LogLik func(ctx *mlmodel.Scope, h *Node) *Node
}

// Options of Estimate; zero values take the defaults.
type Options struct {
	Temps  int     `json:"temps"`  // temperatures T (default 1000), on Schedule's sigmoid path
	Runs   int     `json:"runs"`   // independent runs per target (default 8)
	Seed   uint64  `json:"seed"`   // seeds the runs (default 1); the pilot run uses a seed derived from it
	Accept float64 `json:"accept"` // the pilot's target MALA acceptance rate (default 0.65)
	// Betas, when set, is the path's temperatures beta_0 = 0 < beta_1 < ... < beta_T = 1 in place
	// of Schedule(Temps) (Temps is then len(Betas) - 1, or must equal it), e.g. a linear schedule
	// for a short path whose steps should be equal.
	Betas []float64 `json:"betas,omitempty"`
	// PilotPasses is the number of pilot runs that tune the step sizes (default 1). The first
	// tunes each target's step size along the path, each temperature's from the acceptance at the
	// one before; every further pass reruns the path with the step sizes found and moves each
	// temperature's own by exp(2 (a - Accept)), a its acceptance there. A short path needs them:
	// one pass of a few temperatures cannot move far from its starting step size.
	PilotPasses int `json:"pilot_passes,omitempty"`
	// Progress, when not nil, is called after every temperature of the pilot ("pilot") and of the
	// main runs ("main") with the temperatures done and in all.
	Progress func(stage string, done, total int) `json:"-"`
}

func (o Options) withDefaults() Options {
	if o.Temps <= 0 {
		o.Temps = 1000
	}
	if o.Runs <= 0 {
		o.Runs = 8
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Accept <= 0 || o.Accept >= 1 {
		o.Accept = 0.65
	}
	if o.PilotPasses <= 0 {
		o.PilotPasses = 1
	}
	return o
}

// Result is the AIS estimate of every target's log Z_b.
type Result struct {
	LogZ   []float64   // log Z_b, nats [B]
	LogZSE []float64   // their delta-method standard errors [B] (NaN with one run)
	LogW   [][]float64 // the runs' log weights [B][Runs]
	Accept float64     // mean MALA acceptance of the main runs
	Temps  int
	Runs   int
}

// MinAccept is the mean MALA acceptance below which an AIS estimate is no estimate: chains that
// (almost) never move leave every sample where the start drew it, and the weights, their mean and
// their spread then describe the path's start, not log Z.
const MinAccept = 0.01

// Warning returns a warning when the main runs' mean acceptance is below MinAccept ("" otherwise):
// the value and its standard error mean nothing, and more temperatures (shorter steps between
// neighbouring targets) are the fix.
func (r *Result) Warning() string {
	if r.Accept >= MinAccept {
		return ""
	}
	return fmt.Sprintf("AIS accepted %.2g of its moves (below %g): its chains did not move, so its log Z and standard error "+
		"describe the path's start, not the target; raise the temperatures (now %d)", r.Accept, MinAccept, r.Temps)
}

// Mean returns the mean over the targets of log Z_b (nats per target) and its standard error
// sqrt(sum_b se_b^2) / B: the targets' runs are independent.
func (r *Result) Mean() (mean, se float64) {
	ss := 0.0
	for b, v := range r.LogZ {
		mean += v
		ss += r.LogZSE[b] * r.LogZSE[b]
	}
	n := float64(len(r.LogZ))
	return mean / n, math.Sqrt(ss) / n
}

// Sampler evaluates l(h), its gradient and MALA transitions for one Target.
type Sampler struct {
	t          Target
	eval, step *mlmodel.Exec
	progress   func(done, total int) // the running stage's Options.Progress, or nil
}

// New compiles nothing yet: graphs are built on first use.
// Errors: B or Q not positive, no LogLik, or a dtype other than float64/float32.
func New(t Target) (*Sampler, error) {
	if t.B <= 0 || t.Q <= 0 || t.LogLik == nil || t.Backend == nil || t.Ctx == nil {
		return nil, fmt.Errorf("ais: need B > 0, Q > 0, a LogLik, a backend and a context; got B %d, Q %d", t.B, t.Q)
	}
	if t.DType != dtypes.Float64 && t.DType != dtypes.Float32 {
		return nil, fmt.Errorf("ais: dtype %s: want float64 or float32", t.DType)
	}
	s := &Sampler{t: t}
	logLik := func(ctx *mlmodel.Scope, h *Node) (*Node, *Node) {
		ll := t.LogLik(ctx, h)
		return ll, Gradient(ReduceAllSum(ll), h)[0]
	}
	var err error
	s.eval, err = mlmodel.NewExec(t.Backend, t.Ctx.Store(), func(ctx *mlmodel.Scope, h *Node) []*Node {
		ll, g := logLik(ctx, h)
		return []*Node{ll, g}
	})
	if err != nil {
		return nil, err
	}
	// step is one MALA transition at temperature beta with step sizes eta [B]: the proposal
	// h' = h + eta grad log pi(h) + sqrt(2 eta) xi, accepted when log u < log pi(h') - log pi(h) +
	// log q(h | h') - log q(h' | h), log pi(h) = -|h|^2/2 + beta l(h).
	s.step, err = mlmodel.NewExec(t.Backend, t.Ctx.Store(), func(ctx *mlmodel.Scope, in []*Node) []*Node {
		h, ll, g, beta, eta, xi, logU := in[0], in[1], in[2], in[3], in[4], in[5], in[6]
		e := InsertAxes(InsertAxes(eta, 0), -1) // [1, B, 1]
		drift := func(h, g *Node) *Node { return Add(Neg(h), Mul(beta, g)) }
		hp := Add(Add(h, Mul(e, drift(h, g))), Mul(Sqrt(MulScalar(e, 2)), xi))
		llp, gp := logLik(ctx, hp)
		logPi := func(h, ll *Node) *Node { return Sub(Mul(beta, ll), MulScalar(ReduceSum(Square(h), -1), 0.5)) }
		logQ := func(to, from, gFrom *Node) *Node { // log q(to | from) up to a constant shared by both directions
			d := Sub(to, Add(from, Mul(e, drift(from, gFrom))))
			return Neg(Div(ReduceSum(Square(d), -1), MulScalar(Squeeze(e, -1), 4)))
		}
		logA := Add(Sub(logPi(hp, llp), logPi(h, ll)), Sub(logQ(h, hp, gp), logQ(hp, h, g)))
		// A proposal whose log-likelihood is not finite is rejected.
		acc := And(LessThan(logU, logA), IsFinite(llp)) // [R, B]
		sel := func(a, b *Node) *Node {
			c := acc
			if a.Rank() == 3 {
				c = BroadcastToDims(InsertAxes(acc, -1), a.Shape().Dimensions...)
			}
			return Where(c, a, b)
		}
		return []*Node{sel(hp, h), sel(llp, ll), sel(gp, g), ConvertDType(acc, h.DType())}
	})
	return s, err
}

// Eval returns l(h) [R, B] and its gradient [R, B, Q] for states h [R, B, Q].
func (s *Sampler) Eval(h *tensors.Tensor) (ll, grad *tensors.Tensor, err error) {
	out, err := s.eval.Exec(vars.Convert(h, s.t.DType))
	if err != nil {
		return nil, nil, err
	}
	return out[0], out[1], nil
}

// stage returns progress for one stage (nil when progress is nil).
func stage(progress func(string, int, int), name string) func(int, int) {
	if progress == nil {
		return nil
	}
	return func(done, total int) { progress(name, done, total) }
}

// Estimate runs the pilot and then o.Runs independent runs for every target. A cancelled ctx stops
// it between two temperatures. Errors: a backend failure, a non-finite log weight (the likelihood
// or the step sizes failed), or ctx's error (wrapped) when it was cancelled.
func (s *Sampler) Estimate(ctx context.Context, o Options) (*Result, error) {
	if o.Runs == 1 || o.Runs < 0 || o.Temps < 0 {
		return nil, fmt.Errorf("ais: %d runs and %d temperatures: want at least 2 runs (for a standard error) and 1 temperature, or 0 for the defaults", o.Runs, o.Temps)
	}
	if o.Betas != nil {
		if err := checkBetas(o.Betas, o.Temps); err != nil {
			return nil, err
		}
		o.Temps = len(o.Betas) - 1
	}
	o = o.withDefaults()
	if err := memory.Check(fmt.Sprintf("AIS with %d temperatures and %d runs of %d targets", o.Temps, o.Runs, s.t.B),
		memory.Floats(o.Temps+1)+8*memory.Floats(s.t.B, o.Runs, s.t.Q), "Temps", "Runs"); err != nil {
		return nil, fmt.Errorf("ais: %w", err)
	}
	betas := o.Betas
	if betas == nil {
		betas = Schedule(o.Temps)
	}
	s.progress = stage(o.Progress, "pilot")
	var etas [][]float64
	for p := 0; p < o.PilotPasses; p++ {
		var err error
		if etas, _, _, err = s.run(ctx, betas, etas, 2, (o.Seed^0x9e3779b97f4a7c15)+uint64(p), o.Accept); err != nil {
			return nil, fmt.Errorf("ais: pilot run %d: %w", p+1, err)
		}
	}
	s.progress = stage(o.Progress, "main")
	_, logW, accept, err := s.run(ctx, betas, etas, o.Runs, o.Seed, 0)
	s.progress = nil
	if err != nil {
		return nil, fmt.Errorf("ais: %w", err)
	}
	res := &Result{LogW: logW, Accept: accept, Temps: o.Temps, Runs: o.Runs}
	for b := range logW {
		lz, se := LogMeanExpSE(logW[b])
		if math.IsNaN(lz) || math.IsInf(lz, 0) {
			return nil, fmt.Errorf("ais: target %d: log weight %g", b, lz)
		}
		res.LogZ, res.LogZSE = append(res.LogZ, lz), append(res.LogZSE, se)
	}
	return res, nil
}

// Schedule returns T + 1 temperatures beta_0 = 0 < ... < beta_T = 1 on the sigmoid schedule of
// Grosse et al. (2015): sigmoid(4 (2t/T - 1)), rescaled to [0, 1] (dense near both ends); nil
// for t < 1.
func Schedule(t int) []float64 {
	if t < 1 {
		return nil
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	lo, hi := sig(-4), sig(4)
	b := make([]float64, t+1)
	for i := range b {
		b[i] = (sig(4*(2*float64(i)/float64(t)-1)) - lo) / (hi - lo)
	}
	b[0], b[t] = 0, 1
	return b
}

// checkBetas returns an error unless b runs from 0 to 1, strictly increasing, with temps + 1
// entries (temps 0: any number of at least 2).
func checkBetas(b []float64, temps int) error {
	if len(b) < 2 || b[0] != 0 || b[len(b)-1] != 1 {
		return fmt.Errorf("ais: schedule %v: want beta_0 = 0, ..., beta_T = 1 with T >= 1", b)
	}
	if temps != 0 && temps != len(b)-1 {
		return fmt.Errorf("ais: %d temperatures and a schedule of %d: want Temps = len(Betas) - 1, or 0", temps, len(b)-1)
	}
	for t := 1; t < len(b); t++ {
		if !(b[t] > b[t-1]) {
			return fmt.Errorf("ais: schedule %v: beta_%d = %g does not exceed beta_%d = %g", b, t, b[t], t-1, b[t-1])
		}
	}
	return nil
}

// Linear returns the T + 1 equally spaced temperatures 0, 1/T, ..., 1 (nil for t < 1).
func Linear(t int) []float64 {
	if t < 1 {
		return nil
	}
	b := make([]float64, t+1)
	for i := range b {
		b[i] = float64(i) / float64(t)
	}
	return b
}

// LogMeanExpSE returns log (1/R) sum_r exp(v_r) and its delta-method standard error
// sd(w) / (sqrt(R) mean(w)) with w_r = exp(v_r - max v) (NaN for one value; both NaN for none).
func LogMeanExpSE(v []float64) (float64, float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	lse := floats.LogSumExp(v)
	r := float64(len(v))
	mean := 0.0
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = math.Exp(x-lse) * r // weights relative to their mean: mean 1
		mean += w[i] / r
	}
	if len(v) < 2 {
		return lse - math.Log(r), math.NaN()
	}
	ss := 0.0
	for _, x := range w {
		ss += (x - mean) * (x - mean)
	}
	return lse - math.Log(r), math.Sqrt(ss/(r-1)) / math.Sqrt(r) / mean
}

// run runs r AIS chains per target through betas. With target > 0 it is a pilot pass that returns
// step sizes [T][B]: with etas nil they start at 0.5 and follow each target's acceptance along the
// path toward target (the first pass); with etas given, each temperature's is moved by its own
// acceptance (a further pass). With target 0 the etas are used as they are (the main runs). It
// also returns the log weights [B][r] and the mean acceptance. It checks ctx before every
// temperature.
func (s *Sampler) run(ctx context.Context, betas []float64, etas [][]float64, r int, seed uint64, target float64) ([][]float64, [][]float64, float64, error) {
	b, q, dt := s.t.B, s.t.Q, s.t.DType
	rng := rand.New(rand.NewPCG(seed, 0xa15))
	h := vars.Normal(rng, r, b, q) // exact draws of pi_0 = N(0, I)
	hT := vars.Convert(h, dt)
	out, err := s.eval.Exec(hT)
	if err != nil {
		return nil, nil, 0, err
	}
	ll, g := out[0], out[1]
	logW := make([]float64, r*b)
	eta := make([]float64, b)
	for i := range eta {
		eta[i] = 0.5
	}
	var used [][]float64
	accSum := 0.0
	for t := 1; t < len(betas); t++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, 0, fmt.Errorf("stopped at temperature %d of %d: %w", t, len(betas)-1, err)
		}
		if s.progress != nil {
			s.progress(t, len(betas)-1)
		}
		llv := vars.Flat64(ll)
		for i := range logW {
			logW[i] += (betas[t] - betas[t-1]) * llv[i] // the weight increment at the state before the transition
		}
		if etas != nil {
			eta = etas[t-1]
		}
		xi, logU := vars.Normal(rng, r, b, q), uniformLog(rng, r*b)
		res, err := s.step.Exec(hT, ll, g, vars.Convert(tensors.FromValue(betas[t]), dt),
			vars.Convert(vec(eta), dt), vars.Convert(xi, dt), vars.Convert(tensors.FromFlatDataAndDimensions(logU, r, b), dt))
		if err != nil {
			return nil, nil, 0, err
		}
		hT, ll, g = res[0], res[1], res[2]
		acc := vars.Flat64(res[3])
		accSum += floats.Sum(acc) / float64(len(acc))
		if target > 0 { // pilot: move each target's step size toward the target acceptance
			rate := 0.5 // the first pass: along the path
			if etas != nil {
				rate = 2 // a further pass: each temperature's own
			}
			next := make([]float64, b)
			for j := 0; j < b; j++ {
				a := 0.0
				for k := 0; k < r; k++ {
					a += acc[k*b+j] / float64(r)
				}
				next[j] = eta[j] * math.Exp(rate*(a-target))
			}
			if etas == nil {
				used = append(used, eta)
				eta = next
			} else {
				used = append(used, next)
			}
		}
	}
	w := make([][]float64, b)
	for j := 0; j < b; j++ {
		for k := 0; k < r; k++ {
			w[j] = append(w[j], logW[k*b+j])
		}
	}
	return used, w, accSum / float64(len(betas)-1), nil
}

func uniformLog(rng *rand.Rand, n int) []float64 {
	u := make([]float64, n)
	for i := range u {
		u[i] = math.Log(rng.Float64())
	}
	return u
}

func vec(v []float64) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(append([]float64(nil), v...), len(v))
}
