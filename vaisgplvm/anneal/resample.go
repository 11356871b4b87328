package anneal

import (
	"math"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

// Resampled is a run of S annealed chains per point that resample across each other (a sequential
// Monte Carlo sampler with Langevin moves; Del Moral, Doucet & Jasra 2006): the Chain (its
// LogW the weights since the last resampling, HK the final particles) and LogZ [B], the SMC
// estimate of each point's log evidence.
type Resampled struct {
	*Chain
	// LogZ is log Z^_n = sum over resamplings of log mean_s exp(W_s) + log mean_s exp(W_s at
	// the end): Z^_n is an unbiased estimator of p(x_n) (for any resampling rule that depends only
	// on the past), so LogZ is a stochastic lower bound on log p(x_n), as VAIS's log-mean-exp.
	LogZ *Node
	// Resamplings counts, per point, the steps at which the particles were resampled: [B].
	Resamplings *Node
}

// RunResampled runs S chains per point from h0 [S, B, Q] through the transitions of Run (the same
// moves, backward kernels and noise eps), splitting each step's weight in two: before the move of
// step k every chain's weight W_s gains (beta_k - beta_{k-1}) (log p(x, h) - log q0(h)) at its
// current point, then, for the points whose effective sample size (sum_s w_s)^2 / sum_s w_s^2
// has fallen below threshold x S, the chains are resampled (systematic resampling, one uniform
// per point and step from uniforms[k] [B]) and their weights reset; after the move the weight gains
// log a_k (Chain.LogAccept). threshold 0 never resamples (LogZ is then VAIS's log-mean-exp of
// Run's LogW over the S chains), 1 resamples at every step. The ancestor choice is a constant in
// the gradient (the gradient flows through each chosen ancestor; Zenn & Bamler 2023).
func RunResampled(h0 *Node, eps, uniforms []*Node, betas, etas *Node, logJoint, logQ0 LogDensity, threshold float64, opt Options) *Resampled {
	s := h0.Shape().Dim(0)
	c := &Chain{H0: h0, Path: []*Node{h0}}
	cur := evaluate(h0, logJoint, logQ0, opt)
	c.LogQ0H0 = cur.logQ0
	h := h0
	w := ZerosLike(cur.logJoint)       // W_s [S, B]
	logZ := ReduceSum(ZerosLike(w), 0) // [B]
	count := ZerosLike(logZ)           // resamplings per point
	prevBeta := ScalarZero(h0.Graph(), h0.DType())
	for k, e := range eps {
		beta := element(betas, k)
		w = Add(w, Mul(Sub(beta, prevBeta), Sub(cur.logJoint, cur.logQ0)))
		prevBeta = beta
		if k > 0 && threshold > 0 { // at k = 0 every weight is the same function of q0's draws: nothing to gain
			do := resampleWhere(w, threshold, s)
			a := StopGradient(ancestors(w, uniforms[k]))
			pick := func(v *Node) *Node { return Where(broadcastTo(do, v), gather(a, v), v) }
			h = pick(h)
			cur = state{logJoint: pick(cur.logJoint), logQ0: pick(cur.logQ0), gradJ: pick(cur.gradJ), gradQ: pick(cur.gradQ)}
			logZ = Add(logZ, Where(do, logMeanExp(w), ZerosLike(logZ)))
			count = Add(count, ConvertDType(do, count.DType()))
			w = Where(broadcastTo(do, w), ZerosLike(w), w)
		}
		var mv transition
		h, cur, mv = move(h, cur, beta, etas, k, e, logJoint, logQ0, opt)
		c.Scores = append(c.Scores, mv.score)
		c.LogAccept = append(c.LogAccept, StopGradient(mv.logA))
		w = Add(w, mv.logA)
		c.Path = append(c.Path, h)
	}
	w = Add(w, Mul(OneMinus(prevBeta), Sub(cur.logJoint, cur.logQ0))) // 0 when beta_K = 1
	c.HK, c.Target, c.LogW = h, cur.logJoint, w
	return &Resampled{Chain: c, LogZ: Add(logZ, logMeanExp(w)), Resamplings: StopGradient(count)}
}

// resampleWhere is, per point, whether the effective sample size of the weights w [S, B] is below
// threshold x S: [B] bool (constant in the gradient).
func resampleWhere(w *Node, threshold float64, s int) *Node {
	n := StopGradient(Softmax(w, 0))
	ess := Inverse(ReduceSum(Square(n), 0)) // [B]
	return LessThan(ess, Scalar(w.Graph(), w.DType(), threshold*float64(s)))
}

// ancestors returns the one-hot ancestor matrix [S_new, S_old, B] of systematic resampling of the
// weights w [S, B] with one uniform u [B] per point: new particle i takes the old particle j whose
// cumulative normalised weight interval holds (i + u) / S.
func ancestors(w, u *Node) *Node {
	s, b := w.Shape().Dim(0), w.Shape().Dim(1)
	g := w.Graph()
	cum := CumSum(Softmax(w, 0), 0) // [S_old, B]
	pos := DivScalar(Add(Iota(g, shapes.Make(w.DType(), s, b), 0), InsertAxes(u, 0)), float64(s))
	below := ConvertDType(LessOrEqual(InsertAxes(cum, 0), InsertAxes(pos, 1)), w.DType()) // [S_new, S_old, B]
	idx := MinScalar(ReduceSum(below, 1), float64(s-1))                                   // [S_new, B]: #{j: cum_j <= pos_i}
	old := Iota(g, shapes.Make(w.DType(), 1, s, b), 1)
	return ConvertDType(Equal(InsertAxes(idx, 1), old), w.DType())
}

// gather returns the particles the one-hot ancestors a [S_new, S_old, B] choose of v [S, B] or
// [S, B, Q].
func gather(a, v *Node) *Node {
	if v.Rank() == 2 {
		return Einsum("ijb,jb->ib", a, v)
	}
	return Einsum("ijb,jbq->ibq", a, v)
}

// broadcastTo broadcasts the per-point flags do [B] to v's shape [S, B] or [S, B, Q].
func broadcastTo(do, v *Node) *Node {
	f := InsertAxes(do, 0)
	if v.Rank() == 3 {
		f = InsertAxes(f, -1)
	}
	return BroadcastToDims(f, v.Shape().Dimensions...)
}

// logMeanExp returns log mean_s exp(x_s) of x [S, B]: [B], the largest term factored out.
func logMeanExp(x *Node) *Node {
	m := StopGradient(ReduceMax(x, 0))
	return AddScalar(Add(Log(ReduceSum(Exp(Sub(x, InsertAxes(m, 0))), 0)), m), -math.Log(float64(x.Shape().Dim(0))))
}
