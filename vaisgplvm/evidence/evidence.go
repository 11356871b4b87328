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
// Estimate uses annealed importance sampling (Neal 2001) from the prior N(0, I) to the posterior
// of h_n, through the geometric path pi_t(h) ∝ N(h | 0, I) exp(beta_t l_n(h)), with one
// Metropolis-adjusted Langevin (MALA) transition per temperature, so that every transition leaves
// its pi_t invariant and exp(log w) is an unbiased estimate of Z_n. The MALA step sizes come from
// a pilot run with its own seed, tuned per point and temperature toward an acceptance rate, and
// are then fixed. log of the mean weight over Runs independent runs is the estimate (its
// expectation is below log Z_n by Jensen's inequality, by less as temperatures are added: docs/results.md
// measures it); the standard error comes from the delta method on the weights.
package evidence

import (
	"fmt"
	"math"
	"math/rand/v2"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"gonum.org/v1/gonum/floats"

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
	Runs       int     `json:"runs"`
}

// Estimate runs AIS for the points of o (default all) at the trainer's current parameters.
// Errors: a point out of range, or a non-finite weight (the model or the step sizes failed).
func Estimate(tr *train.Trainer, o Options) (*Result, error) {
	o = o.withDefaults(tr.Model.N)
	for _, n := range o.Points {
		if n < 0 || n >= tr.Model.N {
			return nil, fmt.Errorf("evidence: point %d out of range [0, %d)", n, tr.Model.N)
		}
	}
	s, err := newSampler(tr, o.Points)
	if err != nil {
		return nil, err
	}
	betas := Schedule(o.Temps)
	etas, _, _, err := s.run(betas, nil, 2, o.Seed^0x9e3779b97f4a7c15, o.Accept)
	if err != nil {
		return nil, fmt.Errorf("evidence: pilot run: %w", err)
	}
	_, logW, accept, err := s.run(betas, etas, o.Runs, o.Seed, 0)
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	res := &Result{Points: o.Points, N: tr.Model.N, Temps: o.Temps, Runs: o.Runs, AcceptRate: accept}
	if res.KL, err = s.kl(); err != nil {
		return nil, err
	}
	sumVar, sum := 0.0, 0.0
	for b := range o.Points {
		lz, se := logMeanExpSE(logW[b])
		if math.IsNaN(lz) || math.IsInf(lz, 0) {
			return nil, fmt.Errorf("evidence: point %d: log weight %g", o.Points[b], lz)
		}
		res.LogZ, res.LogZSE = append(res.LogZ, lz), append(res.LogZSE, se)
		sum += lz
		sumVar += se * se
	}
	p := float64(len(o.Points))
	res.NegLogEvidencePerPoint = -sum/p + res.KL/float64(res.N)
	res.SE = math.Sqrt(sumVar) / p
	return res, nil
}

func (o Options) withDefaults(n int) Options {
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
	if o.Points == nil {
		for i := 0; i < n; i++ {
			o.Points = append(o.Points, i)
		}
	}
	return o
}

// Schedule returns T + 1 temperatures beta_0 = 0 < ... < beta_T = 1 on the sigmoid schedule of
// Grosse et al. (2015): sigmoid(4 (2t/T - 1)), rescaled to [0, 1] (dense near both ends).
func Schedule(t int) []float64 {
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	lo, hi := sig(-4), sig(4)
	b := make([]float64, t+1)
	for i := range b {
		b[i] = (sig(4*(2*float64(i)/float64(t)-1)) - lo) / (hi - lo)
	}
	b[0], b[t] = 0, 1
	return b
}

// logMeanExpSE returns log (1/R) sum_r exp(v_r) and its delta-method standard error
// sd(w) / (sqrt(R) mean(w)) with w_r = exp(v_r - max v).
func logMeanExpSE(v []float64) (float64, float64) {
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

// sampler evaluates l_n(h) and its gradient, and MALA transitions, for a fixed set of points.
type sampler struct {
	tr         *train.Trainer
	points     []int
	x, mask    *tensors.Tensor
	idx        []int32
	eval, step *context.Exec
	q          int
}

func newSampler(tr *train.Trainer, points []int) (*sampler, error) {
	m := tr.Model
	s := &sampler{tr: tr, points: points, q: m.Cfg.Q}
	rows := make([][]float64, len(points))
	mask := make([][]float64, len(points))
	for i, n := range points {
		rows[i] = make([]float64, m.D)
		mask[i] = make([]float64, m.D)
		for j, v := range m.X[n] {
			if m.Mask == nil || m.Mask[n][j] != 0 {
				rows[i][j], mask[i][j] = v, 1
			}
		}
		s.idx = append(s.idx, int32(n))
	}
	var err error
	if s.x, err = vars.Matrix(rows, m.DType()); err != nil {
		return nil, err
	}
	if s.mask, err = vars.Matrix(mask, m.DType()); err != nil {
		return nil, err
	}
	// logLik builds l_n(h) [R, B] and its gradient [R, B, Q] for h [R, B, Q].
	logLik := func(ctx *context.Context, x, mk, idx, h *Node) (*Node, *Node) {
		if !m.HasMask() {
			mk = nil
		}
		ll := m.BatchFor(ctx, x, mk, idx).LogLik(h)
		return ll, Gradient(ReduceAllSum(ll), h)[0]
	}
	s.eval, err = context.NewExec(tr.Backend, tr.Ctx, func(ctx *context.Context, x, mk, idx, h *Node) []*Node {
		ll, g := logLik(ctx, x, mk, idx, h)
		return []*Node{ll, g}
	})
	if err != nil {
		return nil, err
	}
	// step is one MALA transition at temperature beta with step sizes eta [B]: the proposal
	// h' = h + eta grad log pi(h) + sqrt(2 eta) xi, accepted when log u < log pi(h') - log pi(h) +
	// log q(h | h') - log q(h' | h), log pi(h) = -|h|^2/2 + beta l(h).
	s.step, err = context.NewExec(tr.Backend, tr.Ctx, func(ctx *context.Context, in []*Node) []*Node {
		x, mk, idx, h, ll, g, beta, eta, xi, logU := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], in[8], in[9]
		e := InsertAxes(InsertAxes(eta, 0), -1) // [1, B, 1]
		drift := func(h, g *Node) *Node { return Add(Neg(h), Mul(beta, g)) }
		hp := Add(Add(h, Mul(e, drift(h, g))), Mul(Sqrt(MulScalar(e, 2)), xi))
		llp, gp := logLik(ctx, x, mk, idx, hp)
		logPi := func(h, ll *Node) *Node { return Sub(Mul(beta, ll), MulScalar(ReduceSum(Square(h), -1), 0.5)) }
		logQ := func(to, from, gFrom *Node) *Node { // log q(to | from) up to a constant shared by both directions
			d := Sub(to, Add(from, Mul(e, drift(from, gFrom))))
			return Neg(Div(ReduceSum(Square(d), -1), MulScalar(Squeeze(e, -1), 4)))
		}
		logA := Add(Sub(logPi(hp, llp), logPi(h, ll)), Sub(logQ(h, hp, gp), logQ(hp, h, g)))
		acc := LessThan(logU, logA) // [R, B]
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

// kl returns KL(q(u) || p(u)) at the trainer's parameters.
func (s *sampler) kl() (float64, error) {
	m := s.tr.Model
	exec, err := context.NewExec(s.tr.Backend, s.tr.Ctx, func(ctx *context.Context, x *Node) *Node {
		return ConvertDType(gp.NewPosterior(ctx, x.Graph(), m.Inducing, m.Kernel).KL(), x.DType())
	})
	if err != nil {
		return 0, err
	}
	out, err := exec.Exec(s.x)
	if err != nil {
		return 0, err
	}
	return vars.Flat64(out[0])[0], nil
}

// run runs r AIS chains per point through betas. With etas nil it is the pilot: the step sizes
// start at 0.5 and follow each point's acceptance toward target, and are returned [T][B]; with
// etas given they are used as they are. It returns the log weights [B][r] and the mean acceptance.
func (s *sampler) run(betas []float64, etas [][]float64, r int, seed uint64, target float64) ([][]float64, [][]float64, float64, error) {
	b, q := len(s.points), s.q
	dt := s.tr.Model.DType()
	rng := rand.New(rand.NewPCG(seed, 0xa15))
	h := vars.Normal(rng, r, b, q) // exact draws of pi_0 = N(0, I)
	hT := vars.Convert(h, dt)
	out, err := s.eval.Exec(s.x, s.mask, s.idx, hT)
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
		llv := vars.Flat64(ll)
		for i := range logW {
			logW[i] += (betas[t] - betas[t-1]) * llv[i] // the weight increment at the state before the transition
		}
		if etas != nil {
			eta = etas[t-1]
		}
		xi, logU := vars.Normal(rng, r, b, q), uniformLog(rng, r*b)
		res, err := s.step.Exec(s.x, s.mask, s.idx, hT, ll, g, vars.Convert(tensors.FromValue(betas[t]), dt),
			vars.Convert(vec(eta), dt), vars.Convert(xi, dt), vars.Convert(tensors.FromFlatDataAndDimensions(logU, r, b), dt))
		if err != nil {
			return nil, nil, 0, err
		}
		hT, ll, g = res[0], res[1], res[2]
		acc := vars.Flat64(res[3])
		accSum += floats.Sum(acc) / float64(len(acc))
		if etas == nil { // pilot: move each point's step size toward the target acceptance
			next := make([]float64, b)
			for j := 0; j < b; j++ {
				a := 0.0
				for k := 0; k < r; k++ {
					a += acc[k*b+j] / float64(r)
				}
				next[j] = eta[j] * math.Exp(0.5*(a-target))
			}
			used = append(used, eta)
			eta = next
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
