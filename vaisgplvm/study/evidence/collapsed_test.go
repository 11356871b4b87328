package evidence

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// rbf is an SE kernel with unit lengthscale and variance v, on the host.
func rbf(a, b []float64, v float64) float64 {
	d := 0.0
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
	}
	return v * math.Exp(-d/2)
}

// TestCollapsedBoundIsTheSparseGPBound: for deterministic latents (psi statistics that are plain
// kernel matrices), CollapsedBound equals Titsias's (2009) sparse regression bound computed in its
// own form from the N x N covariance, sum_d log N(y_d | 0, s^2 I + Qff) - (D / 2 s^2) tr(Kff - Qff),
// Qff = Kfu Kuu^-1 Kuf, to 1e-9 relative.
func TestCollapsedBoundIsTheSparseGPBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n, d, m, q, v, s2 = 20, 3, 6, 2, 1.3, 0.05
	h := testutil.NormalRows(rng, n, q, 1)
	z := testutil.NormalRows(rng, m, q, 1)
	y := testutil.NormalRows(rng, n, d, 1)
	kfu, kff, kuu := mat.NewDense(n, m, nil), mat.NewSymDense(n, nil), mat.NewSymDense(m, nil)
	psi0 := 0.0
	for i := range n {
		for j := range m {
			kfu.Set(i, j, rbf(h[i], z[j], v))
		}
		for j := i; j < n; j++ {
			kff.SetSym(i, j, rbf(h[i], h[j], v))
		}
		psi0 += v
	}
	for i := range m {
		for j := i; j < m; j++ {
			kuu.SetSym(i, j, rbf(z[i], z[j], v)+map[bool]float64{true: 1e-6}[i == j])
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(kuu) {
		t.Fatal("Kuu not positive definite")
	}
	var l mat.TriDense
	chol.LTo(&l)
	var psi2 mat.Dense
	psi2.Mul(kfu.T(), kfu)
	got, err := CollapsedBound(y, PsiStats{Psi0: psi0, Psi1: kfu, Psi2: &psi2, L: mat.DenseCopyOf(&l), NoiseVariance: s2})
	if err != nil {
		t.Fatal(err)
	}
	var kinvKuf, qff mat.Dense
	if err := chol.SolveTo(&kinvKuf, kfu.T()); err != nil {
		t.Fatal(err)
	}
	qff.Mul(kfu, &kinvKuf)
	cov := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			c := qff.At(i, j)
			if i == j {
				c += s2
			}
			cov.SetSym(i, j, c)
		}
	}
	normal, ok := distmv.NewNormal(make([]float64, n), cov, nil)
	if !ok {
		t.Fatal("covariance not positive definite")
	}
	want := 0.0
	col := make([]float64, n)
	for j := range d {
		for i := range n {
			col[i] = y[i][j]
		}
		want += normal.LogProb(col)
	}
	want -= float64(d) / (2 * s2) * (mat.Trace(kff) - mat.Trace(&qff))
	if math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("CollapsedBound %.12g, sparse GP bound %.12g", got, want)
	}
}

// TestCollapsedAboveTheTrainedELBO: at a trained model's parameters, the collapsed bound (q(u)
// replaced by its optimum) is at least the mean-field ELBO with the trained q(u), beyond their
// Monte Carlo errors and the psi estimate's bias (both small here: 400 draws per point).
func TestCollapsedAboveTheTrainedELBO(t *testing.T) {
	tr := trainedMF(t)
	c, err := Collapsed(tr, 400, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := eval.Evaluate(tr, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	tol := 3*math.Hypot(c.SE, *ev.NegELBOSE) + 1e-3
	if c.NegBound > ev.NegELBO+tol {
		t.Errorf("-collapsed %.5f ± %.5f above the trained -ELBO %.5f ± %.5f", c.NegBound, c.SE, ev.NegELBO, *ev.NegELBOSE)
	}
	t.Logf("-collapsed %.5f ± %.5f, trained -ELBO %.5f ± %.5f", c.NegBound, c.SE, ev.NegELBO, *ev.NegELBOSE)
}

// trainedMF returns trained(t, 2, 40) evaluated with the mean-field bound.
func trainedMF(t *testing.T) *train.Trainer {
	t.Helper()
	tr := trained(t, 2, 40)
	m, err := tr.Model.WithBound("mf", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	mf := *tr
	mf.Model = m
	return &mf
}
