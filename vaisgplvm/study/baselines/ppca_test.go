package baselines

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// lowRank returns n rows of d values from a q-dimensional linear model with noise sd, and a mask
// hiding each entry with probability hide (never a whole row).
func lowRank(n, d, q int, sd, hide float64, seed uint64) (x, truth, mask [][]float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	w := make([][]float64, d)
	for j := range w {
		w[j] = make([]float64, q)
		for k := range w[j] {
			w[j][k] = rng.NormFloat64()
		}
	}
	x, truth, mask = make([][]float64, n), make([][]float64, n), make([][]float64, n)
	for i := range n {
		z := make([]float64, q)
		for k := range z {
			z[k] = rng.NormFloat64()
		}
		x[i], mask[i] = make([]float64, d), make([]float64, d)
		for j := range d {
			v := 1.0 + float64(j)/float64(d)
			for k := range q {
				v += w[j][k] * z[k]
			}
			x[i][j] = v + sd*rng.NormFloat64()
			mask[i][j] = 1
			if j > 0 && rng.Float64() < hide {
				mask[i][j] = 0
			}
		}
		truth[i] = append([]float64(nil), x[i]...)
		for j := range d {
			if mask[i][j] == 0 {
				x[i][j] = math.NaN()
			}
		}
	}
	return x, truth, mask
}

// TestPPCACompleteData: on complete data the closed-form maximum-likelihood PPCA (Tipping & Bishop,
// Eq. 7-8) is a fixed point of the EM: it stops at once, with the noise variance the mean of the
// discarded eigenvalues and the log-likelihood that of the dense N(Mu, W W^T + Noise I).
func TestPPCACompleteData(t *testing.T) {
	x, _, _ := lowRank(200, 8, 2, 0.3, 0, 1)
	p, err := FitPPCA(x, nil, 2, PPCAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start, _ := ppcaStart(x, 2)
	var a, b mat.Dense
	a.Mul(p.W, p.W.T())
	b.Mul(start.W, start.W.T())
	if p.Iters > 2 || math.Abs(p.Noise-start.Noise) > 1e-6*start.Noise || !mat.EqualApprox(&a, &b, 1e-6) {
		t.Errorf("EM left the ML solution: %d iterations, noise %g vs %g", p.Iters, p.Noise, start.Noise)
	}
	if math.Abs(p.Noise-0.09) > 0.03 {
		t.Errorf("noise variance %g, data made with 0.09", p.Noise)
	}
	if want := denseLogLik(p, x, nil); math.Abs(p.LogLik-want) > 1e-9*math.Abs(want) {
		t.Errorf("log-likelihood per entry %g (Woodbury), dense %g", p.LogLik, want)
	}
}

// denseLogLik is the observed-data log-likelihood per observed entry computed with a dense
// Cholesky factor of each row's marginal covariance (the reference for the Woodbury form).
func denseLogLik(p *PPCA, x, mask [][]float64) float64 {
	total, count := 0.0, 0
	for i, r := range x {
		obs := observedCols(mask, i, len(r))
		mean, cov := p.marginal(obs)
		var ch mat.Cholesky
		ch.Factorize(cov)
		diff := mat.NewVecDense(len(obs), nil)
		for k, j := range obs {
			diff.SetVec(k, r[j]-mean[k])
		}
		var sol mat.VecDense
		_ = ch.SolveVecTo(&sol, diff)
		total += -0.5 * (float64(len(obs))*math.Log(2*math.Pi) + ch.LogDet() + mat.Dot(diff, &sol))
		count += len(obs)
	}
	return total / float64(count)
}

// TestPPCAMissing: with a fifth of the entries missing, EM raises the observed-data log-likelihood
// at every iteration (the dense reference, 1e-9), recovers the noise variance, and imputes far
// better than column means; Impute's NELL matches a Monte Carlo estimate over q(z_n).
func TestPPCAMissing(t *testing.T) {
	x, truth, mask := lowRank(300, 10, 2, 0.1, 0.2, 2)
	prev := math.Inf(-1)
	for iters := 1; iters <= 6; iters++ {
		p, err := FitPPCA(x, mask, 2, PPCAOptions{MaxIters: iters, Tol: -1})
		if err != nil {
			t.Fatal(err)
		}
		if want := denseLogLik(p, x, mask); math.Abs(p.LogLik-want) > 1e-9*math.Abs(want) {
			t.Fatalf("%d iterations: log-likelihood %g, dense %g", iters, p.LogLik, want)
		}
		if p.LogLik < prev-1e-12 {
			t.Errorf("EM lowered the log-likelihood: %g after %g", p.LogLik, prev)
		}
		prev = p.LogLik
	}
	p, err := FitPPCA(x, mask, 2, PPCAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	imp, nell, err := p.Impute(x, mask, truth)
	if err != nil {
		t.Fatal(err)
	}
	mean, _ := MeanImpute(x, mask, x, mask)
	var ssP, ssM float64
	n := 0
	for i := range x {
		for j := range x[i] {
			if mask[i][j] == 0 {
				ssP += (imp[i][j] - truth[i][j]) * (imp[i][j] - truth[i][j])
				ssM += (mean[i][j] - truth[i][j]) * (mean[i][j] - truth[i][j])
				n++
			}
		}
	}
	t.Logf("PPCA: %d iterations, noise %.4f; imputation MSE %.4f, column means %.4f; NELL %.3f", p.Iters, p.Noise, ssP/float64(n), ssM/float64(n), nell)
	if math.Abs(p.Noise-0.01) > 0.004 || !(ssP < 0.1*ssM) {
		t.Errorf("noise %g (made with 0.01), imputation MSE %g vs column means %g", p.Noise, ssP/float64(n), ssM/float64(n))
	}
	// Monte Carlo NELL: z ~ q(z_n) = N(Mean, Cov), averaged log N(truth | W z + Mu, Noise)
	post, _, _ := p.posteriors(x, mask)
	rng := rand.New(rand.NewPCG(9, 9))
	const draws = 4000
	mc, rows := 0.0, 0
	for i := range x {
		miss := []int{}
		for j := range x[i] {
			if mask[i][j] == 0 {
				miss = append(miss, j)
			}
		}
		if len(miss) == 0 {
			continue
		}
		rows++
		var ch mat.Cholesky
		ch.Factorize(post[i].Cov)
		var l mat.TriDense
		ch.LTo(&l)
		for range draws {
			e := mat.NewVecDense(2, []float64{rng.NormFloat64(), rng.NormFloat64()})
			var z mat.VecDense
			z.MulVec(&l, e)
			for _, j := range miss {
				f := p.Mu[j] + p.W.At(j, 0)*(post[i].Mean[0]+z.AtVec(0)) + p.W.At(j, 1)*(post[i].Mean[1]+z.AtVec(1))
				mc += (0.5*math.Log(2*math.Pi*p.Noise) + (truth[i][j]-f)*(truth[i][j]-f)/(2*p.Noise)) / draws
			}
		}
	}
	mc /= float64(rows)
	if math.Abs(nell-mc) > 0.01*math.Abs(mc)+0.01 {
		t.Errorf("NELL %g, Monte Carlo %g", nell, mc)
	}
}

// TestKNNValidated: on rows that lie on a one-dimensional curve whose every coordinate is monotone
// (any observed entry places a row), where the nearest rows are the right ones and farther ones
// are wrong, validation prefers a few neighbours to many (40 averages across the curve), picks
// the k of the lowest validation MSE, and imputes as KNNImpute with it; deterministic by seed.
func TestKNNValidated(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	n := 200
	x, mask := make([][]float64, n), make([][]float64, n)
	for i := range n {
		s := float64(i) / float64(n) * 6
		x[i] = []float64{s, s * s / 6, math.Exp(s / 3), math.Sqrt(s)}
		mask[i] = []float64{1, 1, 1, 1}
		if i%10 == 3 {
			mask[i][1], mask[i][3] = 0, 0
		}
		for j := range x[i] {
			x[i][j] += 0.001 * rng.NormFloat64()
		}
	}
	imp, c, err := KNNValidated(x, mask, []int{1, 5, 40}, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("choice %+v", c)
	if c.K == 40 || len(c.ValMSE) != 3 || !(c.ValMSE[0] < c.ValMSE[2]) || c.Rows != 36 || c.ValMSE[slices.Index(c.Ks, c.K)] != slices.Min(c.ValMSE) {
		t.Errorf("choice %+v: want the k of the lowest validation MSE, not 40, on 36 rows", c)
	}
	want, _ := KNNImpute(x, mask, x, mask, c.K, true)
	if !mat.EqualApprox(mat.NewDense(n, 4, flat(imp)), mat.NewDense(n, 4, flat(want)), 0) {
		for i := range imp {
			for j := range imp[i] {
				if imp[i][j] != want[i][j] {
					t.Errorf("KNNValidated (k %d) differs from KNNImpute with its k at %d,%d: %g vs %g", c.K, i, j, imp[i][j], want[i][j])
					return
				}
			}
		}
	}
	_, c2, _ := KNNValidated(x, mask, []int{1, 5, 40}, 0.2, 1)
	if c2.ValMSE[1] != c.ValMSE[1] {
		t.Error("not deterministic by seed")
	}
	if _, _, err := KNNValidated(x, mask, nil, 0.2, 1); err == nil {
		t.Error("no ks: want an error")
	}
}

func flat(x [][]float64) []float64 {
	var out []float64
	for _, r := range x {
		out = append(out, r...)
	}
	return out
}

// TestPPCAValidated: on data from a 3-component linear model, validation finds that fewer
// components impute worse (q 1's validation MSE is several times q 3's), picks the q of the lowest
// validation MSE, and returns exactly FitPPCA's fit with that q on the data and mask; deterministic
// by seed; no q below min(N, D) or a share outside (0, 1) is an error.
func TestPPCAValidated(t *testing.T) {
	x, _, mask := lowRank(300, 12, 3, 0.1, 0.05, 9)
	p, c, err := PPCAValidated(x, mask, []int{1, 3, 8, 12, 40}, 0.2, 1, PPCAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("choice %+v", c)
	if !slices.Equal(c.Qs, []int{1, 3, 8}) || len(c.ValMSE) != 3 || c.ValMSE[slices.Index(c.Qs, c.Q)] != slices.Min(c.ValMSE) {
		t.Fatalf("choice %+v: want q among 1, 3, 8 (12 and 40 are not below min(N, D)) with the lowest validation MSE", c)
	}
	if c.Q == 1 || !(c.ValMSE[0] > 5*c.ValMSE[1]) {
		t.Errorf("choice %+v: want q 1 to impute several times worse than q 3", c)
	}
	want, err := FitPPCA(x, mask, c.Q, PPCAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(p.W, want.W) || p.Noise != want.Noise || c.Noise != want.Noise {
		t.Errorf("PPCAValidated's fit (noise %g) is not FitPPCA's with q %d (noise %g)", p.Noise, c.Q, want.Noise)
	}
	if _, c2, _ := PPCAValidated(x, mask, []int{1, 3, 8}, 0.2, 1, PPCAOptions{}); !slices.Equal(c2.ValMSE, c.ValMSE) {
		t.Error("not deterministic by seed")
	}
	if _, _, err := PPCAValidated(x, mask, []int{12, 20}, 0.2, 1, PPCAOptions{}); err == nil {
		t.Error("no q below min(N, D): want an error")
	}
	if _, _, err := PPCAValidated(x, mask, []int{2}, 1, 1, PPCAOptions{}); err == nil {
		t.Error("share 1: want an error")
	}
}
