package standard_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/standard"
)

func randomData(rng *rand.Rand, n, d int) [][]float64 {
	x := make([][]float64, n)
	for i := range x {
		t := rng.Float64()*4 - 2
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = math.Sin(t*float64(j+1)) + 0.1*rng.NormFloat64()
		}
	}
	return x
}

// reference computes log p(X|H), the posterior mean and variance at H in float64 with gonum, for
// the SE kernel with variance v, unit lengthscales, noise s2 and absolute jitter j.
func reference(x, h [][]float64, v, s2, j float64) (logp float64, mean *mat.Dense, variance []float64) {
	n, d := len(x), len(x[0])
	k := mat.NewSymDense(n, nil)
	c := mat.NewSymDense(n, nil)
	for a := 0; a < n; a++ {
		for b := 0; b <= a; b++ {
			r2 := 0.0
			for q := range h[a] {
				r2 += (h[a][q] - h[b][q]) * (h[a][q] - h[b][q])
			}
			k.SetSym(a, b, v*math.Exp(-0.5*r2))
			c.SetSym(a, b, k.At(a, b))
		}
		c.SetSym(a, a, k.At(a, a)+s2+j)
	}
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		panic("not PD")
	}
	xm := mat.NewDense(n, d, nil)
	for a := range x {
		xm.SetRow(a, x[a])
	}
	var alpha mat.Dense
	if err := ch.SolveTo(&alpha, xm); err != nil {
		panic(err)
	}
	quad := 0.0
	for a := 0; a < n; a++ {
		for b := 0; b < d; b++ {
			quad += xm.At(a, b) * alpha.At(a, b)
		}
	}
	logp = -0.5*float64(d)*ch.LogDet() - 0.5*quad - 0.5*float64(n*d)*math.Log(2*math.Pi)
	mean = mat.NewDense(n, d, nil)
	mean.Mul(k, &alpha)
	var cinvK mat.Dense
	if err := ch.SolveTo(&cinvK, k); err != nil {
		panic(err)
	}
	variance = make([]float64, n)
	for a := 0; a < n; a++ {
		variance[a] = k.At(a, a) - mat.Dot(mat.NewVecDense(n, mat.Row(nil, a, k)), cinvK.ColView(a))
	}
	return logp, mean, variance
}

// TestExactMarginalMatchesGonum: log p(X|H), the posterior mean and the expected log-likelihood
// equal a float64 gonum computation to 1e-9 (relative), at the initial hyperparameters.
func TestExactMarginalMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, d, q := 40, 5, 2
	x := randomData(rng, n, d)
	h := randomData(rng, n, q)
	m, err := standard.New(standard.Config{Q: q}, x, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	exec := mlmodel.MustNewExec(testutil.Backend(), m.Ctx.Store(), func(ctx *mlmodel.Scope, xn, hn *Node) []*Node {
		ell, mean := m.GP.ExpectedLogLik(ctx, xn, hn)
		return []*Node{m.GP.LogMarginal(ctx, xn, hn), ell, mean, m.GP.Lik.NoiseVariance(ctx, xn.Graph())}
	})
	out := exec.MustExec(x, h)
	got := vars.Flat64(out[0])[0]
	v := m.GP.Kernel.(*kernels.Stationary).Variance // initial kernel variance
	s2 := vars.Flat64(out[3])[0]
	want, mean, variance := reference(x, h, v, s2, 1e-6*v)
	if math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("log p(X|H) = %.12g, gonum %.12g", got, want)
	}
	ell, gm := vars.Flat64(out[1]), vars.Flat64(out[2])
	for a := 0; a < n; a++ {
		wantEll := 0.0
		for b := 0; b < d; b++ {
			if e := gm[a*d+b] - mean.At(a, b); math.Abs(e) > 1e-8 {
				t.Fatalf("posterior mean [%d,%d] = %g, gonum %g", a, b, gm[a*d+b], mean.At(a, b))
			}
			r := x[a][b] - mean.At(a, b)
			wantEll += -0.5*math.Log(2*math.Pi*s2) - (r*r+variance[a])/(2*s2)
		}
		if math.Abs(ell[a]-wantEll) > 1e-8*math.Max(1, math.Abs(wantEll)) {
			t.Fatalf("expected log-lik [%d] = %g, gonum %g", a, ell[a], wantEll)
		}
	}
}

// TestFitRaisesMarginalAndGradientIsRight: the gradient of log p(X, H) with respect to one latent
// coordinate matches a central finite difference (relative 1e-5), and 30 Adam steps lower
// -log p(X, H) / N and leave finite metrics.
func TestFitRaisesMarginalAndGradientIsRight(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, d, q := 30, 4, 2
	x := randomData(rng, n, d)
	m, err := standard.New(standard.Config{Q: q}, x, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	h := randomData(rng, n, q)
	exec := mlmodel.MustNewExec(testutil.Backend(), m.Ctx.Store(), func(ctx *mlmodel.Scope, xn, hn *Node) []*Node {
		f := m.GP.LogJoint(ctx, xn, hn)
		return []*Node{f, Gradient(f, hn)[0]}
	})
	out := exec.MustExec(x, h)
	grad := vars.Flat64(out[1])
	const e = 1e-5
	for _, c := range [][2]int{{0, 0}, {7, 1}, {29, 0}} {
		h[c[0]][c[1]] += e
		up := vars.Flat64(exec.MustExec(x, h)[0])[0]
		h[c[0]][c[1]] -= 2 * e
		down := vars.Flat64(exec.MustExec(x, h)[0])[0]
		h[c[0]][c[1]] += e
		fd := (up - down) / (2 * e)
		if g := grad[c[0]*q+c[1]]; math.Abs(g-fd) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("d/dh[%d][%d]: autodiff %g, finite difference %g", c[0], c[1], g, fd)
		}
	}
	if err := m.Run(30, nil); err != nil {
		t.Fatal(err)
	}
	if !(m.Curve[29] < m.Curve[0]-0.1) {
		t.Errorf("-log p(X,H)/N went from %g to %g", m.Curve[0], m.Curve[29])
	}
	ev, err := m.Evaluate(nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(ev.MSE) || math.IsNaN(ev.NELL) || math.IsNaN(ev.NegLogMarginal) || len(ev.Latent) != n {
		t.Errorf("evaluation %+v", ev)
	}
	if _, err := standard.New(standard.Config{Q: 5}, x, testutil.Backend()); err == nil {
		t.Error("Q > D: want an error")
	}
	x[3][1] = math.NaN()
	if _, err := standard.New(standard.Config{Q: 2}, x, testutil.Backend()); err == nil {
		t.Error("NaN data: want an error")
	}
}

// TestReconstructHiddenEntries: points held out from training, with half their entries hidden, get
// latents whose predictions of the hidden entries beat the column means by a wide margin; the
// scores follow their definitions; bad input is an error.
func TestReconstructHiddenEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	all := make([][]float64, 50) // a smooth 1-D curve in 6 dimensions
	for i := range all {
		u := rng.Float64()*4 - 2
		all[i] = []float64{math.Sin(u), math.Cos(u), u, u * u / 4, 0.5*math.Sin(u) + 0.3*u, 0.5 * math.Cos(2*u)}
		for j := range all[i] {
			all[i][j] += 0.05 * rng.NormFloat64()
		}
	}
	train, test := all[:42], all[42:]
	m, err := standard.New(standard.Config{Q: 1}, train, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(150, nil); err != nil {
		t.Fatal(err)
	}
	mask := make([][]float64, len(test))
	for i := range mask {
		mask[i] = []float64{1, 0, 1, 0, 1, 0}
	}
	r, err := m.Reconstruct(test, mask, 150)
	if err != nil {
		t.Fatal(err)
	}
	mse, nell, n := r.ScoreHidden(test, mask)
	base := 0.0
	for i := range test {
		for j := range test[i] {
			if mask[i][j] == 0 {
				mean := 0.0
				for _, row := range train {
					mean += row[j] / float64(len(train))
				}
				base += (test[i][j] - mean) * (test[i][j] - mean) / float64(n)
			}
		}
	}
	t.Logf("hidden-entry MSE %.4f (column means: %.4f), NELL %.3f over %d entries", mse, base, nell, n)
	if n != 24 || !(mse < 0.25*base) || math.IsNaN(nell) {
		t.Errorf("hidden MSE %g vs column-mean MSE %g, %d entries, NELL %g", mse, base, n, nell)
	}
	// ScoreHidden against its definition on one entry.
	e := test[0][1] - r.Mean[0][1]
	one, oneNELL, _ := r.ScoreHidden(test[:1], [][]float64{{1, 0, 1, 1, 1, 1}})
	want := 0.5*math.Log(2*math.Pi*r.NoiseVariance) + (e*e+r.Var[0])/(2*r.NoiseVariance)
	if math.Abs(one-e*e) > 1e-12 || math.Abs(oneNELL-want) > 1e-12 {
		t.Errorf("one entry: MSE %g NELL %g, want %g and %g", one, oneNELL, e*e, want)
	}
	if _, err := m.Reconstruct(test[:1], [][]float64{{0, 0, 0, 0, 0, 0}}, 1); err == nil {
		t.Error("nothing observed: want an error")
	}
	if _, err := m.Reconstruct(test[:1], [][]float64{{1, 0}}, 1); err == nil {
		t.Error("short mask: want an error")
	}
}

// BenchmarkStep times one Adam step of the standard GPLVM (exact GP, an N x N Cholesky and its
// gradient) at Table 5's sizes: N 270 (a 300-image subset less its held-out tenth) and 900 (oil
// flow's training rows), D 12, Q 10.
func BenchmarkStep(b *testing.B) {
	for _, n := range []int{270, 900} {
		b.Run("N"+strconv.Itoa(n), func(b *testing.B) {
			x := randomData(rand.New(rand.NewPCG(1, uint64(n))), n, 12)
			m, err := standard.New(standard.Config{Q: 10}, x, testutil.Backend())
			if err != nil {
				b.Fatal(err)
			}
			if err := m.Run(1, nil); err != nil { // compile
				b.Fatal(err)
			}
			b.ResetTimer()
			if err := m.Run(b.N, nil); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestLogMarginalGradientMatchesCholeskyAutodiff: LogMarginal's closed-form gradient (Rasmussen &
// Williams Eq. 5.9, attached to A = K + s^2 I) equals autodiff through the factorisation (linalg's
// Cholesky gradient, an independent route) for H, the noise and every kernel parameter, to 1e-8
// relative; the values agree to 1e-12.
func TestLogMarginalGradientMatchesCholeskyAutodiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n, d, q := 25, 3, 2
	x := randomData(rng, n, d)
	m, err := standard.New(standard.Config{Q: q, Kernel: "matern52"}, x, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	h := randomData(rng, n, q)
	exec := mlmodel.MustNewExec(testutil.Backend(), m.Ctx.Store(), func(ctx *mlmodel.Scope, xn, hn *Node) []*Node {
		g := hn.Graph()
		got := m.GP.LogMarginal(ctx, xn, hn)
		k := m.GP.Kernel.Matrix(ctx, hn, hn)
		s2 := m.GP.Lik.NoiseVariance(ctx, g)
		diag := Add(s2, MulScalar(ReduceAllMean(m.GP.Kernel.Diag(ctx, hn)), linalg.DefaultJitter))
		l := linalg.Cholesky(Add(k, Mul(linalg.Eye(g, n, hn.DType()), diag)))
		quad := ReduceAllSum(Square(linalg.SolveLower(l, xn)))
		ref := MulScalar(Add(MulScalar(linalg.LogDetFromCholesky(l), float64(d)), quad), -0.5)
		ref = AddScalar(ref, -0.5*float64(n*d)*math.Log(2*math.Pi))
		wrt := []*Node{hn}
		vars.Each(ctx, func(v *mlmodel.Variable) {
			if v.Trainable {
				wrt = append(wrt, v.ValueGraph(g))
			}
		})
		out := []*Node{got, ref}
		out = append(out, Gradient(got, wrt...)...)
		return append(out, Gradient(ref, wrt...)...)
	})
	out := exec.MustExec(x, h)
	got, ref := vars.Flat64(out[0])[0], vars.Flat64(out[1])[0]
	if math.Abs(got-ref) > 1e-12*math.Abs(ref) {
		t.Errorf("log p(X|H) %.15g, through the factor's autodiff %.15g", got, ref)
	}
	grads := out[2:]
	half := len(grads) / 2
	if half < 4 { // H, the noise, the kernel variance and the lengthscales at least
		t.Fatalf("%d gradients, want H and the model's variables", half)
	}
	for i := range half {
		a, b := vars.Flat64(grads[i]), vars.Flat64(grads[half+i])
		for j := range a {
			if math.Abs(a[j]-b[j]) > 1e-8*math.Max(1, math.Abs(b[j])) {
				t.Errorf("gradient %d entry %d: closed form %g, autodiff through the factor %g", i, j, a[j], b[j])
			}
		}
	}
}
