package anneal_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// TestPerPointEtasMatchScalarChains: a chain run with step sizes etas [K, B] gives every point the
// path and log weight of a chain run with that point's column of etas as scalar step sizes (tamed
// drift included, so the per-point eta reaches the drift's norm too).
func TestPerPointEtasMatchScalarChains(t *testing.T) {
	const k, s, b = 3, 4, 3
	etas := [][]float64{{0.3, 0.02, 1.1}, {0.1, 0.05, 0.7}, {0.05, 0.2, 0.4}} // [K, B]
	rng := rand.New(rand.NewPCG(11, 12))
	e0 := vars.Normal(rng, s, b, accDim)
	ek := vars.Normal(rng, k, s, b, accDim)
	betas, _ := anneal.Fixed{Kind: "linear"}.BetaValues(k)
	run := func(etas *Node, e0, ek *Node) (*Node, *Node) {
		var eps []*Node
		for i := 0; i < k; i++ {
			eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
		}
		c := anneal.Run(e0, eps, Const(e0.Graph(), betas), etas,
			func(h *Node) *Node { return accLogN(h, accMu, accSigma) },
			func(h *Node) *Node { return accLogN(h, 0, 1) }, anneal.Options{Tamed: true})
		return c.HK, c.LogW
	}
	out := MustExecOnceN(testutil.Backend(), func(e0, ek *Node) []*Node {
		hk, lw := run(Const(e0.Graph(), etas), e0, ek)
		res := []*Node{hk, lw}
		for n := 0; n < b; n++ {
			col := make([]float64, k)
			for i := range col {
				col[i] = etas[i][n]
			}
			hkN, lwN := run(Const(e0.Graph(), col), e0, ek) // every point with point n's step sizes
			res = append(res, hkN, lwN)
		}
		return res
	}, e0, ek)
	hk, lw := vars.Flat64(out[0]), vars.Flat64(out[1])
	worst := 0.0
	for n := 0; n < b; n++ {
		hkN, lwN := vars.Flat64(out[2+2*n]), vars.Flat64(out[3+2*n])
		for c := 0; c < s; c++ {
			i := c*b + n
			worst = math.Max(worst, math.Abs(lw[i]-lwN[i])/(1+math.Abs(lwN[i])))
			for q := 0; q < accDim; q++ {
				worst = math.Max(worst, math.Abs(hk[i*accDim+q]-hkN[i*accDim+q]))
			}
		}
		if n > 0 && math.Abs(vars.Flat64(out[3+2*n])[n]-vars.Flat64(out[3])[n]) < 1e-6 {
			t.Errorf("point %d: its weight does not depend on its step sizes (the test cannot tell them apart)", n)
		}
	}
	if worst > 1e-12 {
		t.Errorf("per-point chains differ from scalar chains by %.3g, want <= 1e-12", worst)
	}
}

// TestAdaptPointsRule: one call of AdaptPoints moves log s_n of the batch's points by
// AdaptRate (N / B) (r_n - mean r), r_n = mean over transitions and chains of min(1, a_k,n), leaves the other
// points alone, and keeps log s_n within its clip range over repeated calls.
func TestAdaptPointsRule(t *testing.T) {
	const n = 6
	idx := []int32{4, 1, 3}
	la := [][][]float64{ // [K][S][B] log a_k
		{{0, -1, -30}, {-0.2, 0.5, -2}},
		{{-3, 0.1, -50}, {0, -0.7, -4}},
	}
	step := anneal.StepSize{Eta0: 0.1, Adaptive: true, PerPoint: true, AdaptRate: 0.3}
	if err := step.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx := mlmodel.NewStore().RootScope()
	exec := mlmodel.MustNewExec(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, idx *Node) *Node {
		c := &anneal.Chain{}
		for _, l := range la {
			c.LogAccept = append(c.LogAccept, Const(idx.Graph(), l))
		}
		step.AdaptPoints(ctx, c, idx, n)
		return anneal.PointScales(ctx, idx.Graph(), n, idx)
	})
	var r [3]float64
	for i := range r {
		for _, l := range la {
			for _, row := range l {
				r[i] += math.Min(1, math.Exp(row[i])) / float64(len(la)*len(l))
			}
		}
	}
	mean := (r[0] + r[1] + r[2]) / 3
	want := make([]float64, n)
	for i, j := range idx {
		want[j] = 0.3 * 2 * (r[i] - mean) // N / B = 2
	}
	exec.MustExec(idx)
	got := vars.Flat64(ctx.GetVariable("log_eta_scale").MustValue())
	if d := testutil.MaxAbsDiff(got, want); d > 1e-12 {
		t.Errorf("log s after one update %.6f, want %.6f", got, want)
	}
	for i := 0; i < 80; i++ {
		exec.MustExec(idx)
	}
	got = vars.Flat64(ctx.GetVariable("log_eta_scale").MustValue())
	t.Logf("after 81 updates: log s %.4f (point 3 accepts least)", got)
	if !slices.Equal(got, []float64{0, 4, 0, -12, 4, 0}) {
		t.Errorf("after 81 updates log s = %.4f: want points 4 and 1 clipped at 4, point 3 at -12, 0, 2, 5 at 0", got)
	}
	if v := ctx.GetVariable("log_eta_scale"); v.Trainable {
		t.Error("log_eta_scale must not be trainable")
	}
	if (anneal.StepSize{Eta0: 0.1, PerPoint: true}).Validate() == nil {
		t.Error("PerPoint without Adaptive should be rejected")
	}
}

// TestPerPointFactorsEqualiseAcceptance: two points whose targets differ tenfold in spread (standard
// deviation 0.5 and 0.05) share the transitions' eta_k. Adapted without per-point factors, the
// sharp point's chain accepts far less than the broad one's; with them, both reach the target
// acceptance 0.7 on average over the transitions. Rates are checked by an independent float64
// simulation of 100000 chains per point at the adapted step sizes.
func TestPerPointFactorsEqualiseAcceptance(t *testing.T) {
	const k, s, iters = 3, 200, 400
	sigmas := []float64{0.5, 0.05}
	betas, _ := anneal.Fixed{Kind: "linear"}.BetaValues(k)
	adapt := func(perPoint bool) [2]float64 {
		step := anneal.StepSize{Eta0: 0.5, Adaptive: true, TargetAccept: 0.7, AdaptRate: 0.05, PerPoint: perPoint}
		ctx := mlmodel.NewStore().RootScope()
		exec := mlmodel.MustNewExec(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, e0, ek *Node) *Node {
			g := e0.Graph()
			var eps []*Node
			for i := 0; i < k; i++ {
				eps = append(eps, Squeeze(Slice(ek, AxisElem(i)), 0))
			}
			sd := Const(g, [][][]float64{{{sigmas[0]}, {sigmas[1]}}}) // [1, B, 1]
			target := func(h *Node) *Node {
				z := Div(AddScalar(h, -accMu), sd)
				return Sub(MulScalar(ReduceSum(Square(z), -1), -0.5), ReduceSum(Log(sd), -1)) // up to a constant
			}
			etas := step.Etas(ctx, g, k)
			idx := Const(g, []int32{0, 1})
			if perPoint {
				etas = Mul(InsertAxes(etas, -1), InsertAxes(anneal.PointScales(ctx, g, 2, idx), 0))
			}
			c := anneal.Run(e0, eps, Const(g, betas), etas, target,
				func(h *Node) *Node { return accLogN(h, 0, 1) }, anneal.Options{})
			step.Adapt(ctx, c)
			step.AdaptPoints(ctx, c, idx, 2)
			return c.AcceptRates()
		})
		rng := rand.New(rand.NewPCG(21, 22))
		for it := 0; it < iters; it++ {
			exec.MustExec(vars.Normal(rng, s, 2, accDim), vars.Normal(rng, k, s, 2, accDim))
		}
		logEta := vars.Flat64(ctx.At("anneal").GetVariable("log_eta").MustValue())
		logS := []float64{0, 0}
		if perPoint {
			logS = vars.Flat64(ctx.GetVariable("log_eta_scale").MustValue())
		}
		var mean [2]float64
		for n := range sigmas {
			etas := make([]float64, k)
			for i := range etas {
				etas[i] = math.Exp(logEta[i] + logS[n])
			}
			for _, r := range goAcceptRates(betas, etas, sigmas[n], 100000, uint64(30+n)) {
				mean[n] += r / k
			}
		}
		t.Logf("per-point %v: log eta_k %.3f, log s_n %.3f: mean acceptance (float64 reference) broad %.3f, sharp %.3f",
			perPoint, logEta, logS, mean[0], mean[1])
		return mean
	}
	shared, own := adapt(false), adapt(true)
	if shared[0]-shared[1] < 0.3 {
		t.Errorf("shared eta_k: acceptance broad %.3f vs sharp %.3f, want the sharp point far behind (the test needs it)", shared[0], shared[1])
	}
	for n, r := range own {
		if math.Abs(r-0.7) > 0.05 {
			t.Errorf("per-point factors: point %d (sd %g) accepts %.3f on average, want 0.7 ± 0.05", n, sigmas[n], r)
		}
	}
}
