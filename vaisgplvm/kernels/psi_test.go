package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
)

// seARD is the SE-ARD kernel in float64 on the host, the Monte Carlo reference's kernel.
func seARD(a, b, ls []float64, v float64) float64 {
	r2 := 0.0
	for q := range a {
		r2 += (a[q] - b[q]) * (a[q] - b[q]) / (ls[q] * ls[q])
	}
	return v * math.Exp(-r2/2)
}

// checkPsiMC compares point i's closed-form Psi1 [N*M] and Psi2 [N*M*M] with draws Monte Carlo
// averages of k(x, z_m) and k(z_m, x) k(x, z_m') over x drawn by sample (float64, SE-ARD with
// lengthscales ls and variance v), within 4.5 standard errors.
func checkPsiMC(t *testing.T, i, draws int, sample func(x []float64), z [][]float64, ls []float64, v float64, psi1, psi2 []float64) {
	t.Helper()
	m := len(z)
	sum1, sq1 := make([]float64, m), make([]float64, m)
	sum2, sq2 := make([]float64, m*m), make([]float64, m*m)
	x, kx := make([]float64, len(ls)), make([]float64, m)
	for range draws {
		sample(x)
		for a := range m {
			kx[a] = seARD(x, z[a], ls, v)
			sum1[a] += kx[a]
			sq1[a] += kx[a] * kx[a]
		}
		for a := range m {
			for b := range m {
				p := kx[a] * kx[b]
				sum2[a*m+b] += p
				sq2[a*m+b] += p * p
			}
		}
	}
	check := func(name string, got, sum, sq float64) {
		mean := sum / float64(draws)
		se := math.Sqrt((sq/float64(draws) - mean*mean) / float64(draws))
		if math.Abs(got-mean) > 4.5*se+1e-12 {
			t.Errorf("%s: closed form %.6g, Monte Carlo %.6g ± %.2g", name, got, mean, se)
		}
	}
	for a := range m {
		check("psi1", psi1[i*m+a], sum1[a], sq1[a])
		for b := range m {
			check("psi2", psi2[(i*m+a)*m+b], sum2[a*m+b], sq2[a*m+b])
		}
	}
}

// TestPsiStatisticsAgainstMonteCarlo: Psi1 and Psi2 of the SE-ARD kernel (variance 1.7,
// lengthscales 0.6 and 1.3) under q(x_n) = N(mu_n, diag s_n) agree with 200,000-draw float64
// Monte Carlo averages of k(x, z_m) and k(z_m, x) k(x, z_m') within 4.5 Monte Carlo standard
// errors; Psi0 is the variance; the Matérn kernel is refused.
func TestPsiStatisticsAgainstMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 2))
	const n, m, q, draws = 3, 4, 2, 200000
	ls, v := []float64{0.6, 1.3}, 1.7
	mu := testutil.NormalRows(rng, n, q, 1)
	s := [][]float64{{0.05, 0.4}, {0.5, 0.01}, {1.2, 0.9}}
	z := testutil.NormalRows(rng, m, q, 1)
	k, err := kernels.New("se", kernels.Config{Q: q, Variance: v, Lengthscale: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := mlmodel.NewStore().RootScope()
	ctx.At("kernel").VariableWithValue("raw_lengthscale", []float64{vars.InvSoftplus(ls[0]), vars.InvSoftplus(ls[1])})
	out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, mu, s, z *Node) []*Node {
		p, err := kernels.PsiStatistics(ctx, k, mu, s, z)
		if err != nil {
			panic(err)
		}
		return []*Node{p.Psi0, p.Psi1, p.Psi2}
	}, mu, s, z)
	psi0, psi1, psi2 := vars.Flat64(out[0]), vars.Flat64(out[1]), vars.Flat64(out[2])
	for i := 0; i < n; i++ {
		if math.Abs(psi0[i]-v) > 1e-12 {
			t.Errorf("psi0[%d] = %g, want %g", i, psi0[i], v)
		}
		checkPsiMC(t, i, draws, func(x []float64) {
			for j := range x {
				x[j] = mu[i][j] + math.Sqrt(s[i][j])*rng.NormFloat64()
			}
		}, z, ls, v, psi1, psi2)
	}
	mat, _ := kernels.New("matern32", kernels.Config{Q: q, Variance: 1, Lengthscale: 1})
	mlmodel.MustExecOnceN(testutil.Backend(), mlmodel.NewStore(), func(ctx *mlmodel.Scope, mu, s, z *Node) []*Node {
		if _, err := kernels.PsiStatistics(ctx, mat, mu, s, z); err == nil {
			t.Errorf("Matérn psi statistics accepted")
		}
		return []*Node{Neg(mu)}
	}, mu, s, z)
}

// TestPsiStatisticsPointMass: with input variances 1e-12 the statistics reduce to the kernel at
// the means: Psi1 = K(mu, Z), Psi2[n] = K(Z, mu_n) K(mu_n, Z) (relative 1e-9).
func TestPsiStatisticsPointMass(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	mu, z := testutil.NormalRows(rng, 2, 3, 1), testutil.NormalRows(rng, 4, 3, 1)
	s := [][]float64{{1e-12, 1e-12, 1e-12}, {1e-12, 1e-12, 1e-12}}
	k, _ := kernels.New("se", kernels.Config{Q: 3, Variance: 0.9, Lengthscale: 0.7})
	out := mlmodel.MustExecOnceN(testutil.Backend(), mlmodel.NewStore(), func(ctx *mlmodel.Scope, mu, s, z *Node) []*Node {
		p, err := kernels.PsiStatistics(ctx, k, mu, s, z)
		if err != nil {
			panic(err)
		}
		kmz := k.Matrix(ctx, mu, z) // [N, M]
		return []*Node{p.Psi1, kmz, p.Psi2, Mul(InsertAxes(kmz, -1), InsertAxes(kmz, 1))}
	}, mu, s, z)
	for i, name := range []string{"psi1", "psi2"} {
		got, want := vars.Flat64(out[2*i]), vars.Flat64(out[2*i+1])
		if d := testutil.MaxAbsDiff(got, want); d > 1e-9 {
			t.Errorf("%s at a point mass differs from the kernel by %g", name, d)
		}
	}
}

// TestPsiStatisticsFull: with diagonal scales L_n the full-covariance statistics equal
// PsiStatistics at s = diag(L_n)^2 (1e-12 relative); with correlated S_n = L_n L_n^T, Psi1 and Psi2
// agree with 200,000-draw float64 Monte Carlo averages within 4.5 standard errors; PsiSumsFull is
// their sum over points (1e-12).
func TestPsiStatisticsFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	const n, m, q, draws = 3, 4, 2, 200000
	ls, v := []float64{0.7, 1.4}, 1.3
	mu := testutil.NormalRows(rng, n, q, 1)
	z := testutil.NormalRows(rng, m, q, 1)
	diagScale := [][][]float64{{{0.3, 0}, {0, 0.8}}, {{0.6, 0}, {0, 0.1}}, {{1.1, 0}, {0, 0.9}}}
	fullScale := [][][]float64{{{0.3, 0}, {0.5, 0.8}}, {{0.6, 0}, {-0.7, 0.1}}, {{1.1, 0}, {0.4, 0.9}}}
	s := [][]float64{{0.09, 0.64}, {0.36, 0.01}, {1.21, 0.81}}
	k, err := kernels.New("se", kernels.Config{Q: q, Variance: v, Lengthscale: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := mlmodel.NewStore().RootScope()
	ctx.At("kernel").VariableWithValue("raw_lengthscale", []float64{vars.InvSoftplus(ls[0]), vars.InvSoftplus(ls[1])})
	out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, mu, s, dl, fl, z *Node) []*Node {
		pd, err := kernels.PsiStatistics(ctx, k, mu, s, z)
		if err != nil {
			panic(err)
		}
		pf, err := kernels.PsiStatisticsFull(ctx, k, mu, dl, z)
		if err != nil {
			panic(err)
		}
		pc, err := kernels.PsiStatisticsFull(ctx, k, mu, fl, z)
		if err != nil {
			panic(err)
		}
		s0, s1, s2, err := kernels.PsiSumsFull(ctx, k, mu, fl, z)
		if err != nil {
			panic(err)
		}
		return []*Node{pd.Psi1, pd.Psi2, pf.Psi1, pf.Psi2, pc.Psi0, pc.Psi1, pc.Psi2,
			Sub(s0, ReduceAllSum(pc.Psi0)), Sub(s1, pc.Psi1), Sub(s2, ReduceSum(pc.Psi2, 0))}
	}, mu, s, diagScale, fullScale, z)
	for i, name := range []string{"psi0", "psi1", "psi2"} {
		if d := testutil.MaxAbsDiff(vars.Flat64(out[7+i]), make([]float64, len(vars.Flat64(out[7+i])))); d > 1e-12 {
			t.Errorf("PsiSumsFull's %s differs from the sum of PsiStatisticsFull's by %g", name, d)
		}
	}
	for i, name := range []string{"psi1", "psi2"} {
		want, got := vars.Flat64(out[i]), vars.Flat64(out[2+i])
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-12*math.Max(1, math.Abs(want[j])) {
				t.Fatalf("%s[%d]: full form at a diagonal scale %.15g, diagonal form %.15g", name, j, got[j], want[j])
			}
		}
	}
	psi0, psi1, psi2 := vars.Flat64(out[4]), vars.Flat64(out[5]), vars.Flat64(out[6])
	for i := range n {
		if math.Abs(psi0[i]-v) > 1e-12 {
			t.Errorf("psi0[%d] = %g, want %g", i, psi0[i], v)
		}
		L := fullScale[i]
		checkPsiMC(t, i, draws, func(x []float64) {
			e0, e1 := rng.NormFloat64(), rng.NormFloat64()
			x[0] = mu[i][0] + L[0][0]*e0
			x[1] = mu[i][1] + L[1][0]*e0 + L[1][1]*e1
		}, z, ls, v, psi1, psi2)
	}
}

// TestPsiCovarianceSumFull: PsiCovarianceSumFull's Cov equals sum_n (Psi2[n] - Psi1[n]^T Psi1[n])
// from PsiStatisticsFull at correlated scales of order 1 (1e-12 absolute), and at scales of 1e-6
// (S_n of 1e-12) it equals the delta method's sum_n J_n S_n J_n^T (J_n[m] the gradient of
// k(x, z_m) at mu_n, float64 on the host) to 1e-2 relative in the Frobenius norm: Cov is accurate
// to rounding of the Psi1 Psi1 scale, 1e-16 absolute against entries of 1e-12 here (measured
// 1.1e-3). What the collapsed bound gains from it is tested in the converge package.
func TestPsiCovarianceSumFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	const n, m, q = 4, 5, 2
	ls, v := []float64{0.7, 1.4}, 1.3
	mu := testutil.NormalRows(rng, n, q, 1)
	z := testutil.NormalRows(rng, m, q, 1)
	scale := func(eps float64) [][][]float64 {
		s := make([][][]float64, n)
		for i := range s {
			s[i] = [][]float64{{eps * (0.3 + 0.2*float64(i)), 0}, {eps * 0.5, eps * 0.8}}
		}
		return s
	}
	k, err := kernels.New("se", kernels.Config{Q: q, Variance: v, Lengthscale: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := mlmodel.NewStore().RootScope()
	ctx.At("kernel").VariableWithValue("raw_lengthscale", []float64{vars.InvSoftplus(ls[0]), vars.InvSoftplus(ls[1])})
	for _, eps := range []float64{1, 1e-6} {
		out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, mu, l, z *Node) []*Node {
			p, err := kernels.PsiStatisticsFull(ctx, k, mu, l, z)
			if err != nil {
				panic(err)
			}
			_, _, cov, err := kernels.PsiCovarianceSumFull(ctx, k, mu, l, z)
			if err != nil {
				panic(err)
			}
			naive := ReduceSum(Sub(p.Psi2, Mul(InsertAxes(p.Psi1, -1), InsertAxes(p.Psi1, 1))), 0)
			return []*Node{cov, naive}
		}, mu, scale(eps), z)
		got, naive := vars.Flat64(out[0]), vars.Flat64(out[1])
		if eps == 1 {
			if d := testutil.MaxAbsDiff(got, naive); d > 1e-12 {
				t.Errorf("at scales of order 1 Cov differs from sum_n Psi2 - Psi1 Psi1^T by %g", d)
			}
			continue
		}
		want := make([]float64, m*m) // delta method: sum_n J_n S_n J_n^T
		for i := range n {
			L := scale(eps)[i]
			S := [2][2]float64{{L[0][0] * L[0][0], L[0][0] * L[1][0]}, {L[0][0] * L[1][0], L[1][0]*L[1][0] + L[1][1]*L[1][1]}}
			J := make([][2]float64, m)
			for a := range m {
				kx := seARD(mu[i], z[a], ls, v)
				for d := range q {
					J[a][d] = -kx * (mu[i][d] - z[a][d]) / (ls[d] * ls[d])
				}
			}
			for a := range m {
				for b := range m {
					for c := range q {
						for d := range q {
							want[a*m+b] += J[a][c] * S[c][d] * J[b][d]
						}
					}
				}
			}
		}
		rel := func(x []float64) float64 {
			num, den := 0.0, 0.0
			for j := range x {
				num += (x[j] - want[j]) * (x[j] - want[j])
				den += want[j] * want[j]
			}
			return math.Sqrt(num / den)
		}
		if r := rel(got); r > 1e-2 {
			t.Errorf("at scales of 1e-6 Cov differs from the delta method by %g relative", r)
		}
		t.Logf("at scales of 1e-6: Cov %.2g relative from the delta method, the naive difference %.2g", rel(got), rel(naive))
	}
}

// TestPsiCovarianceSumFullGradient: PsiCovarianceSumFull's hand-written gradient (covarianceSum)
// equals autodiff's gradient of the naive sum_n (Psi2[n] - Psi1[n]^T Psi1[n]) from
// PsiStatisticsFull, for the loss sum(W ⊙ Cov) with an asymmetric W, with respect to the means,
// the full scales L_n, Z, the lengthscales and the kernel variance, at correlated scales of
// order 1 where the naive difference keeps its precision: 1e-10 relative to each gradient's
// largest entry.
func TestPsiCovarianceSumFullGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 3))
	const n, m, q = 5, 4, 3
	mu := testutil.NormalRows(rng, n, q, 1)
	z := testutil.NormalRows(rng, m, q, 1)
	w := testutil.NormalRows(rng, m, m, 1)
	scale := make([][][]float64, n)
	for i := range scale {
		scale[i] = make([][]float64, q)
		for a := range q {
			scale[i][a] = make([]float64, q)
			for b := 0; b <= a; b++ {
				scale[i][a][b] = 0.3 * rng.NormFloat64()
			}
			scale[i][a][a] = 0.4 + 0.3*rng.Float64()
		}
	}
	k, err := kernels.New("se", kernels.Config{Q: q, Variance: 1.3, Lengthscale: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := mlmodel.NewStore().RootScope()
	ctx.At("kernel").VariableWithValue("raw_lengthscale", []float64{0.2, 0.9, 1.6})
	grads := func(naive bool) [][]float64 {
		out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, mu, l, z, w *Node) []*Node {
			var cov *Node
			if naive {
				p, err := kernels.PsiStatisticsFull(ctx, k, mu, l, z)
				if err != nil {
					panic(err)
				}
				cov = ReduceSum(Sub(p.Psi2, Mul(InsertAxes(p.Psi1, -1), InsertAxes(p.Psi1, 1))), 0)
			} else {
				_, _, c, err := kernels.PsiCovarianceSumFull(ctx, k, mu, l, z)
				if err != nil {
					panic(err)
				}
				cov = c
			}
			wrt := []*Node{mu, l, z}
			for v := range ctx.Store().IterVariables() {
				wrt = append(wrt, v.ValueGraph(mu.Graph()))
			}
			return Gradient(ReduceAllSum(Mul(cov, w)), wrt...)
		}, mu, scale, z, w)
		g := make([][]float64, len(out))
		for i := range out {
			g[i] = vars.Flat64(out[i])
		}
		return g
	}
	want, got := grads(true), grads(false)
	if len(want) != 5 || len(got) != 5 {
		t.Fatalf("got %d and %d gradients, want 5 (mu, L, Z, lengthscales, variance)", len(want), len(got))
	}
	for i, name := range []string{"mu", "L", "Z", "raw lengthscales", "raw variance"} {
		scale := 0.0
		for _, x := range want[i] {
			scale = math.Max(scale, math.Abs(x))
		}
		if scale == 0 {
			t.Fatalf("the reference gradient with respect to %s is zero: the test would not see an error", name)
		}
		if d := testutil.MaxAbsDiff(got[i], want[i]); d > 1e-10*scale {
			t.Errorf("gradient with respect to %s: differs from autodiff of the naive form by %g (largest entry %g)", name, d, scale)
		}
	}
}
