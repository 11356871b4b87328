package converge

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// shapesInt is the shape of n int32 indices.
func shapesInt(n int) shapes.Shape { return shapes.Make(dtypes.Int32, n) }

// mustTensor returns the tensor of a Go value.
func mustTensor(v any) *tensors.Tensor { return tensors.MustFromAnyValue(v) }

// smallData returns N points of D = 3 smooth functions of a 1-D latent plus noise.
func smallData(n int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([][]float64, n)
	for i := range x {
		t := 3 * (float64(i)/float64(n) - 0.5)
		x[i] = []float64{math.Sin(2*t) + 0.05*rng.NormFloat64(), math.Cos(t) + 0.05*rng.NormFloat64(), t*t/2 + 0.05*rng.NormFloat64()}
	}
	return x
}

// smallTrainer returns a trainer of an MF model (Q 2, M 5, full batch) on smallData with
// correlated q0 covariances (every L_n with strict-lower entries 0.3) and its variables made.
func smallTrainer(t *testing.T, whitened bool) *train.Trainer {
	t.Helper()
	c := model.DefaultConfig("mf", 2)
	c.M, c.Batch, c.Seed, c.Whitened, c.Samples = 5, 0, 3, whitened, 20
	m, err := model.New(c, smallData(14, 7), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eval.Evaluate(tr, 1, nil); err != nil { // makes the variables
		t.Fatal(err)
	}
	raw := tr.Ctx.At("latent").GetVariable("raw_scale")
	if err := raw.SetValue(vars.Convert(mustTensor(testutil.TriangularRawScale(14, 2, 0.4, 0.3)), m.DType())); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestCollapsedIsTheOptimalUncollapsedBound: at fixed q0, Z, kernel and noise, the collapsed bound
// equals (1e-10 relative) the uncollapsed mean-field bound, written out independently in float64
// gonum from the psi statistics, at the q(v) that maximises it (whitened: q(v_d) = N(Sigma L^-1
// Psi1^T y_d / s^2, Sigma), Sigma = (I + L^-1 Psi2 L^-T / s^2)^-1), and exceeds that bound at other
// q(v); setOptimalQU writes that q(v) (1e-9).
func TestCollapsedIsTheOptimalUncollapsedBound(t *testing.T) {
	tr := smallTrainer(t, true)
	m := tr.Model
	out := mlmodel.MustExecOnceN(tr.Backend, tr.Ctx.Store(), func(ctx *mlmodel.Scope, y *Node) []*Node {
		terms, err := Collapsed(ctx, m, y)
		if err != nil {
			panic(err)
		}
		g := y.Graph()
		q0 := latent.Batch(ctx, g, m.Latent, Iota(g, shapesInt(m.N), 0))
		psi, err := kernels.PsiStatisticsFull(ctx, m.Kernel, q0.Mean, q0.Scale, terms.Z)
		if err != nil {
			panic(err)
		}
		return []*Node{terms.ELBO, ReduceAllSum(psi.Psi0), psi.Psi1, ReduceSum(psi.Psi2, 0), terms.L,
			m.Lik.NoiseVariance(ctx, g), ReduceAllSum(q0.KLToPrior()), terms.LBInv, terms.C}
	}, m.X)
	collapsed, psi0, s2, klH := vars.Flat64(out[0])[0], vars.Flat64(out[1])[0], vars.Flat64(out[5])[0], vars.Flat64(out[6])[0]
	mm, n, d := m.Inducing.M, m.N, m.D
	psi1 := mat.NewDense(n, mm, vars.Flat64(out[2]))
	psi2 := mat.NewDense(mm, mm, vars.Flat64(out[3]))
	l := mat.NewTriDense(mm, mat.Lower, vars.Flat64(out[4]))
	y := mat.NewDense(n, d, testutil.FlattenRows(m.X))

	// P = L^-1 Psi2 L^-T, E = L^-1 Psi1^T [M, N].
	var lInv mat.TriDense
	if err := lInv.InverseTri(l); err != nil {
		t.Fatal(err)
	}
	var p, e, tmp mat.Dense
	tmp.Mul(&lInv, psi2)
	p.Mul(&tmp, lInv.T())
	e.Mul(&lInv, psi1.T())
	uncollapsed := func(means *mat.Dense, sqrt *mat.Dense) float64 { // q(v_d) = N(means[:, d], sqrt sqrt^T)
		var ss mat.Dense
		ss.Mul(sqrt, sqrt.T())
		var ps mat.Dense
		ps.Mul(&p, &ss)
		ell := -0.5 * float64(n*d) * math.Log(2*math.Pi*s2)
		kl := 0.0
		var ld mat.LU
		ld.Factorize(&ss)
		logDet, _ := ld.LogDet()
		for j := range d {
			yd := y.ColView(j)
			md := means.ColView(j)
			var ey, pm mat.VecDense
			ey.MulVec(&e, yd)
			pm.MulVec(&p, md)
			quad := mat.Dot(yd, yd) - 2*mat.Dot(&ey, md) + mat.Dot(md, &pm)
			ell -= (quad + mat.Trace(&ps) + psi0 - mat.Trace(&p)) / (2 * s2)
			kl += 0.5 * (mat.Trace(&ss) + mat.Dot(md, md) - float64(mm) - logDet)
		}
		return ell - kl - klH
	}
	var b mat.Dense
	b.Scale(1/s2, &p)
	for i := range mm {
		b.Set(i, i, b.At(i, i)+1)
	}
	var sigma mat.Dense
	if err := sigma.Inverse(&b); err != nil {
		t.Fatal(err)
	}
	var means mat.Dense
	var ey mat.Dense
	ey.Mul(&e, y)
	means.Mul(&sigma, &ey)
	means.Scale(1/s2, &means)
	var chol mat.Cholesky
	if !chol.Factorize(mat.NewSymDense(mm, symmetric(&sigma))) {
		t.Fatal("Sigma not positive definite")
	}
	var sq mat.TriDense
	chol.LTo(&sq)
	sqrt := mat.DenseCopyOf(&sq)
	best := uncollapsed(&means, sqrt)
	if rel := math.Abs(best-collapsed) / math.Abs(collapsed); rel > 1e-10 {
		t.Errorf("collapsed %.15g, uncollapsed at the optimal q(v) %.15g (relative %.2g)", collapsed, best, rel)
	}
	shifted := mat.DenseCopyOf(&means)
	shifted.Set(1, 2, shifted.At(1, 2)+0.05)
	scaled := mat.DenseCopyOf(sqrt)
	scaled.Scale(1.05, scaled)
	if a, c := uncollapsed(shifted, sqrt), uncollapsed(&means, scaled); a >= best || c >= best {
		t.Errorf("the uncollapsed bound at other q(v) (%.10g, %.10g) is not below its value at the optimum %.10g", a, c, best)
	}
	if err := setOptimalQU(tr.Ctx, m, out[7], out[8], out[4]); err != nil {
		t.Fatal(err)
	}
	qmu, _ := tr.Ctx.At("inducing").GetVariable("q_mu").Value()
	qsqrt, _ := tr.Ctx.At("inducing").GetVariable("q_sqrt").Value()
	if dm := testutil.MaxAbsDiff(vars.Flat64(qmu), means.RawMatrix().Data); dm > 1e-9 {
		t.Errorf("setOptimalQU's q_mu differs from the optimum by %g", dm)
	}
	if ds := testutil.MaxAbsDiff(vars.Flat64(qsqrt)[:mm*mm], sqrt.RawMatrix().Data); ds > 1e-9 {
		t.Errorf("setOptimalQU's q_sqrt differs from the optimum's Cholesky factor by %g", ds)
	}
}

// symmetric returns the entries of a's symmetric part, row-major.
func symmetric(a *mat.Dense) []float64 {
	r, _ := a.Dims()
	out := make([]float64, r*r)
	for i := range r {
		for j := range r {
			out[i*r+j] = (a.At(i, j) + a.At(j, i)) / 2
		}
	}
	return out
}

// TestGradientFiniteDifferences: the objective's gradient (GoMLX autodiff) agrees with central
// differences (step 1e-5) along three random directions, relative 1e-6.
func TestGradientFiniteDifferences(t *testing.T) {
	tr := smallTrainer(t, true)
	p, err := newProblem(tr)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	grad := make([]float64, len(p.x0))
	if _, err := p.eval(p.x0, grad); err != nil {
		t.Fatal(err)
	}
	scratch := make([]float64, len(p.x0))
	for range 3 {
		dir := make([]float64, len(p.x0))
		for i := range dir {
			dir[i] = rng.NormFloat64()
		}
		const h = 1e-5
		at := func(s float64) float64 {
			x := make([]float64, len(p.x0))
			for i := range x {
				x[i] = p.x0[i] + s*dir[i]
			}
			f, err := p.eval(x, scratch)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		fd := (at(h) - at(-h)) / (2 * h)
		an := 0.0
		for i := range dir {
			an += grad[i] * dir[i]
		}
		if math.Abs(fd-an) > 1e-6*math.Max(1, math.Abs(an)) {
			t.Errorf("directional derivative: autodiff %.10g, central differences %.10g", an, fd)
		}
	}
}

// TestLBFGSKnownOptimum: the driver finds the minimum (1, 1) of the Rosenbrock function from
// (-1.2, 1) and says it converged by the rule; with an iteration cap it says it did not.
func TestLBFGSKnownOptimum(t *testing.T) {
	res := lbfgs(rosenbrock, []float64{-1.2, 1}, Rule{Window: 5, Tol: 1e-14}, 0, 0, nil, nil, nil)
	if !res.converged || math.Abs(res.x[0]-1) > 1e-5 || math.Abs(res.x[1]-1) > 1e-5 {
		t.Errorf("Rosenbrock: x %v, converged %v (%s), want (1, 1)", res.x, res.converged, res.stoppedBy)
	}
	capped := lbfgs(rosenbrock, []float64{-1.2, 1}, Rule{Window: 5, Tol: 1e-14}, 0, 3, nil, nil, nil)
	if capped.converged || capped.stoppedBy != "max iterations" {
		t.Errorf("capped at 3 iterations: converged %v, stopped by %q", capped.converged, capped.stoppedBy)
	}
}

// TestFitMatchesTheModelsBound: Fit converges on the small problem (whitened and not), raises the
// collapsed bound, and leaves the trainer a model whose own Monte Carlo MF bound (Evaluate, 40
// draws) equals the collapsed bound within 4 standard errors: q(u) is at its optimum and every
// variable is read back as the model reads it.
func TestFitMatchesTheModelsBound(t *testing.T) {
	for _, whitened := range []bool{true, false} {
		tr := smallTrainer(t, whitened)
		res, err := Fit(context.Background(), tr, Options{Rule: Rule{Window: 20, Tol: 1e-7}, MaxIters: 3000})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Converged || res.NegELBO >= res.Start {
			t.Errorf("whitened %v: %+v, want converged and a higher bound", whitened, res)
		}
		ev, err := eval.Evaluate(tr, 40, nil)
		if err != nil {
			t.Fatal(err)
		}
		if se := *ev.NegELBOSE; math.Abs(ev.NegELBO-res.NegELBO) > 4*se+1e-9 {
			t.Errorf("whitened %v: the model's MF bound %.6f ± %.2g, the collapsed bound %.6f", whitened, ev.NegELBO, se, res.NegELBO)
		}
	}
}

// TestFitRefuses: data with missing entries and a kernel without psi statistics are refused,
// naming the reason.
func TestFitRefuses(t *testing.T) {
	x := smallData(14, 7)
	mask := make([][]float64, len(x))
	for i := range mask {
		mask[i] = []float64{1, 1, 1}
	}
	mask[3][1], x[3][1] = 0, math.NaN()
	c := model.DefaultConfig("mf", 2)
	c.M, c.Batch = 5, 0
	m, err := model.New(c, x, mask)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(context.Background(), tr, Options{}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing entries: %v", err)
	}
	c.Kernel = "matern32"
	if m, err = model.New(c, smallData(14, 7), nil); err != nil {
		t.Fatal(err)
	}
	if tr, err = train.New(m, testutil.Backend()); err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(context.Background(), tr, Options{}); err == nil || !strings.Contains(err.Error(), "psi statistics") {
		t.Errorf("Matérn kernel: %v", err)
	}
}

// TestStartFromAndContinue: an IWVI model started from the converged MF fit (StartFrom) has at
// least the MF bound there (importance weighting never loosens it at the same q0: its -ELBO,
// Evaluate with 40 draws, is below the collapsed MF value plus 4 standard errors); Continue then
// trains it to a plateau by its rule (converged, the step size from LR/10 halved twice) without
// giving that back.
func TestStartFromAndContinue(t *testing.T) {
	mf := smallTrainer(t, true)
	fit, err := Fit(context.Background(), mf, Options{Rule: Rule{Window: 20, Tol: 1e-7}, MaxIters: 3000})
	if err != nil || !fit.Converged {
		t.Fatalf("MF fit: %+v, %v", fit, err)
	}
	c := mf.Model.Cfg
	c.Method, c.K = "iwvi", 5
	m, err := model.New(c, mf.Model.X, nil)
	if err != nil {
		t.Fatal(err)
	}
	iw, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if err := StartFrom(iw, mf); err != nil {
		t.Fatal(err)
	}
	ev, err := eval.Evaluate(iw, 40, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev.NegELBO > fit.NegELBO+4**ev.NegELBOSE {
		t.Errorf("IWVI at the MF optimum: -ELBO %.5f ± %.2g, above MF's %.5f", ev.NegELBO, *ev.NegELBOSE, fit.NegELBO)
	}
	res, err := Continue(context.Background(), iw, AdamOptions{Rule: AdamRule{Window: 50, Halvings: 2}, MaxIters: 20000})
	if err != nil {
		t.Fatal(err)
	}
	lr := -1.0
	for v := range iw.Ctx.Store().IterVariables() {
		if v.Name() == "learning_rate" {
			val, _ := v.Value()
			lr = vars.Flat64(val)[0]
		}
	}
	if !res.Converged || res.Iterations < 3*50 || math.Abs(lr-c.LR/40) > 1e-12 {
		t.Errorf("Continue: converged %v after %d iterations, step size %g (want converged, %g)", res.Converged, res.Iterations, lr, c.LR/40)
	}
	after, err := eval.Evaluate(iw, 40, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after.NegELBO > ev.NegELBO+4*math.Hypot(*ev.NegELBOSE, *after.NegELBOSE) {
		t.Errorf("IWVI after Continue %.5f, at the start %.5f: the bound got worse", after.NegELBO, ev.NegELBO)
	}
	mfOther, _ := model.New(mf.Model.Cfg, smallData(15, 7), nil)
	other, err := train.New(mfOther, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if err := StartFrom(other, mf); err == nil {
		t.Errorf("StartFrom a model of other sizes: no error")
	}
}

// TestLBFGSStallIsNotConvergence: on a function whose values carry rounding noise (1e-6, well
// above what is left to gain near its minimum, while its gradient is exact and far from zero in
// one ill-conditioned direction) the line searches fail in a row; the driver then reports
// "stalled", not converged, though the rule's window is flat.
func TestLBFGSStallIsNotConvergence(t *testing.T) {
	noisy := func(x, grad []float64) (float64, error) {
		f := 0.0
		for i, v := range x {
			w := math.Pow(10, float64(i)) // curvatures 1 ... 1e5
			f += w * v * v
			grad[i] = 2 * w * v
		}
		h := math.Float64bits(x[0]*1e9+x[len(x)-1]*7e9) * 0x9e3779b97f4a7c15
		return f + 1e-6*float64(h>>40)/float64(1<<24), nil
	}
	res := lbfgs(noisy, []float64{1, 1, 1, 1, 1, 1}, Rule{Window: 10, Tol: 1e-3}, 0, 2000, nil, nil, nil)
	if res.converged || !strings.HasPrefix(res.stoppedBy, "stalled") {
		t.Errorf("noisy quadratic: converged %v, stopped by %q after %d iterations, %d restarts; want stalled", res.converged, res.stoppedBy, res.iters, res.restarts)
	}
}

// textbookCollapsed is the collapsed bound as usually written (Titsias 2009), -|Y|^2 / (2 s^2) +
// |C|^2 / 2 and psi0 - tr(L^-1 Psi2 L^-T) each formed by cancellation: the form Collapsed
// replaced, kept here to show what the rewrite gains.
func textbookCollapsed(ctx *mlmodel.Scope, m *model.Model, y *Node) *Node {
	g := y.Graph()
	n, d := y.Shape().Dim(0), y.Shape().Dim(1)
	q0 := latent.Batch(ctx, g, m.Latent, Iota(g, shapes.Make(dtypes.Int32, n), 0))
	post := gp.NewPosterior(ctx, g, m.Inducing, m.Kernel)
	psi0, psi1, psi2, err := kernels.PsiSumsFull(ctx, m.Kernel, q0.Mean, q0.Scale, post.Z)
	if err != nil {
		panic(err)
	}
	if post.Bias != nil {
		y = Sub(y, InsertAxes(post.Bias, 0))
	}
	s2 := m.Lik.NoiseVariance(ctx, g)
	a := Div(MatMul(post.LInv, Transpose(psi1, 0, 1)), Sqrt(s2))
	aat := Div(MatMul(MatMul(post.LInv, psi2), Transpose(post.LInv, 0, 1)), s2)
	lb, lbInv := linalg.CholeskyWithInverse(Add(aat, linalg.Eye(g, aat.Shape().Dim(0), aat.DType())))
	c := Div(MatMul(lbInv, MatMul(a, y)), Sqrt(s2))
	f := MulScalar(Log(MulScalar(s2, 2*math.Pi)), -0.5*float64(n*d))
	f = Sub(f, MulScalar(ReduceAllSum(Log(diag(lb))), float64(d)))
	f = Sub(f, Div(MulScalar(ReduceAllSum(Square(y)), 0.5), s2))
	f = Add(f, MulScalar(ReduceAllSum(Square(c)), 0.5))
	f = Sub(f, MulScalar(Sub(Div(psi0, s2), trace(aat)), 0.5*float64(d)))
	return DivScalar(Neg(Sub(f, ReduceAllSum(q0.KLToPrior()))), float64(n))
}

// TestCollapsedRoundingNoise: after Fit on nearly noiseless data (N 120, D 3, Q 1, M 30; the
// fitted noise variance is about 1e-6), moving every parameter by 1e-10 at random changes
// Collapsed's objective by less than 1e-8 nats per point beyond its first-order change: its rounding
// noise (measured 8.9e-10). The textbook form (textbookCollapsed) is reported beside it, not
// asserted (measured 4.2e-6, enough to stall L-BFGS).
func TestCollapsedRoundingNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	x := make([][]float64, 120)
	for i := range x {
		s := 3 * (float64(i)/float64(len(x)) - 0.5)
		x[i] = []float64{math.Sin(2*s) + 1e-3*rng.NormFloat64(), math.Cos(s) + 1e-3*rng.NormFloat64(), s*s/2 + 1e-3*rng.NormFloat64()}
	}
	c := model.DefaultConfig("mf", 1)
	c.M, c.Batch, c.Seed = 30, 0, 2
	m, err := model.New(c, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(context.Background(), tr, Options{Rule: Rule{Window: 50, Tol: 1e-9}, MaxIters: 400}); err != nil {
		t.Fatal(err)
	}
	p, err := newProblem(tr)
	if err != nil {
		t.Fatal(err)
	}
	textbook, err := mlmodel.NewExec(tr.Backend, tr.Ctx.Store(), func(ctx *mlmodel.Scope, y *Node) *Node { return textbookCollapsed(ctx, m, y) })
	if err != nil {
		t.Fatal(err)
	}
	grad, scratch := make([]float64, len(p.x0)), make([]float64, len(p.x0))
	if _, err := p.eval(p.x0, grad); err != nil {
		t.Fatal(err)
	}
	noise := func(eval func(x []float64) float64) float64 {
		f0 := eval(p.x0)
		worst := 0.0
		for range 6 {
			y := append([]float64(nil), p.x0...)
			first := 0.0 // the first-order change
			for i := range y {
				d := 1e-10 * rng.NormFloat64()
				y[i] += d
				first += d * grad[i]
			}
			worst = math.Max(worst, math.Abs(eval(y)-f0-first))
		}
		return worst
	}
	ours := noise(func(x []float64) float64 { f, _ := p.eval(x, scratch); return f })
	theirs := noise(func(x []float64) float64 {
		if err := vars.Unflatten(p.selected, x, m.DType()); err != nil {
			t.Fatal(err)
		}
		out, err := textbook.Exec(p.y)
		if err != nil {
			t.Fatal(err)
		}
		return scalar(out[0])
	})
	s2 := vars.Flat64(mlmodel.MustExecOnce(tr.Backend, tr.Ctx.Store(), func(ctx *mlmodel.Scope, y *Node) *Node { return m.Lik.NoiseVariance(ctx, y.Graph()) }, p.y))[0]
	t.Logf("noise variance %.3g; largest change for moves of 1e-10: Collapsed %.2g, the textbook form %.2g nats per point", s2, ours, theirs)
	if s2 > 1e-4 {
		t.Errorf("the fit's noise variance is %g: the test wants the small-noise regime (< 1e-4)", s2)
	}
	if ours > 1e-8 {
		t.Errorf("Collapsed changes by %.2g nats per point for moves of 1e-10: rounding noise", ours)
	}
}

// TestContinueFirstStep: Continue's very first Adam step is taken at its own step size (a tenth
// of the model's LR here): no variable of q0 moves by more than that step (Adam's first update of
// each parameter is at most the step size), while one at the model's LR would move them ten
// times as far.
func TestContinueFirstStep(t *testing.T) {
	mf := smallTrainer(t, true)
	c := mf.Model.Cfg
	c.Method, c.K = "iwvi", 5
	m, err := model.New(c, mf.Model.X, nil)
	if err != nil {
		t.Fatal(err)
	}
	iw, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if err := StartFrom(iw, mf); err != nil {
		t.Fatal(err)
	}
	before, err := vars.Flatten([]*mlmodel.Variable{iw.Ctx.At("latent").GetVariable("mean")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Continue(context.Background(), iw, AdamOptions{MaxIters: 1}); err != nil {
		t.Fatal(err)
	}
	after, err := vars.Flatten([]*mlmodel.Variable{iw.Ctx.At("latent").GetVariable("mean")})
	if err != nil {
		t.Fatal(err)
	}
	moved := testutil.MaxAbsDiff(before, after)
	if lr := c.LR / 10; moved > lr*(1+1e-9) || moved < lr/2 {
		t.Errorf("the first step moved q0's means by up to %g; want about the step size %g (the model's LR is %g)", moved, lr, c.LR)
	}
}

// TestEpochWindow: windows of whole epochs of at least 200 iterations.
func TestEpochWindow(t *testing.T) {
	for _, c := range []struct{ n, batch, want int }{{1965, 100, 200}, {2163, 100, 220}, {1000, 0, 200}, {100000, 100, 1000}, {50, 100, 200}, {1000, 300, 200}} {
		if got := EpochWindow(c.n, c.batch); got != c.want {
			t.Errorf("EpochWindow(%d, %d) = %d, want %d", c.n, c.batch, got, c.want)
		}
	}
}
