package linalg_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

var sizes = []struct {
	n    int
	cond float64
}{{1, 1}, {3, 10}, {17, 1e3}, {50, 1e4}, {50, 1e8}, {70, 1e6}}

// gonumObjective is the float64 reference of the scalar the graph differentiates:
// f(A) = sum(W .* chol(A)) + sum(V .* chol(A)^-1) + log det A.
func gonumObjective(a *mat.SymDense, w, v *mat.Dense) float64 {
	var ch mat.Cholesky
	if !ch.Factorize(a) {
		panic("not SPD")
	}
	var l, x mat.TriDense
	ch.LTo(&l)
	if err := x.InverseTri(&l); err != nil {
		panic(err)
	}
	n := a.SymmetricDim()
	f := ch.LogDet()
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			f += w.At(i, j)*l.At(i, j) + v.At(i, j)*x.At(i, j)
		}
	}
	return f
}

func TestCholeskyAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("n=%d/cond=%g", sz.n, sz.cond), func(t *testing.T) {
			n := sz.n
			a := testutil.RandomSPD(rng, n, sz.cond)
			w := mat.NewDense(n, n, nil)
			v := mat.NewDense(n, n, nil)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					w.Set(i, j, rng.NormFloat64())
					v.Set(i, j, rng.NormFloat64()/sz.cond) // keep the L^-1 term O(1)
				}
			}
			exec := MustNewExec(testutil.Backend(), func(a, w, v *Node) []*Node {
				l, x := linalg.CholeskyWithInverse(a)
				f := Add(linalg.LogDetFromCholesky(l), Add(ReduceAllSum(Mul(w, l)), ReduceAllSum(Mul(v, x))))
				return []*Node{l, x, f, Gradient(f, a)[0]}
			})
			out := exec.MustExec(testutil.ToSlice(a), testutil.ToSlice(w), testutil.ToSlice(v))

			var ch mat.Cholesky
			ch.Factorize(a)
			var lRef, xRef mat.TriDense
			ch.LTo(&lRef)
			_ = xRef.InverseTri(&lRef)
			lGot, xGot := vars.Flat64(out[0]), vars.Flat64(out[1])
			lScale := mat.Norm(&lRef, math.Inf(1))
			xScale := mat.Norm(&xRef, math.Inf(1))
			// Tolerances: backward-stable Cholesky has relative error ~ n eps cond(A)^(1/2) on L,
			// and the inverse ~ n eps cond(A).
			eps := 2.2e-16
			tolL := 50 * float64(n) * eps * math.Sqrt(sz.cond) * lScale
			tolX := 50 * float64(n) * eps * sz.cond * xScale
			if d := testutil.MaxAbsDiff(lGot, vars.Flat64(tensorOf(&lRef))); d > tolL {
				t.Errorf("L differs from gonum by %g > %g", d, tolL)
			}
			if d := testutil.MaxAbsDiff(xGot, vars.Flat64(tensorOf(&xRef))); d > tolX {
				t.Errorf("L^-1 differs from gonum by %g > %g", d, tolX)
			}
			fRef := gonumObjective(a, w, v)
			if got := vars.Flat64(out[2])[0]; math.Abs(got-fRef) > 1e-7*(1+math.Abs(fRef)) {
				t.Errorf("objective %g, gonum %g", got, fRef)
			}

			// Gradient against central finite differences of the gonum objective, along symmetric
			// perturbations E_ij + E_ji (the directional derivative is 2 Abar_ij off the diagonal).
			if sz.cond > 1e5 {
				return // finite differences are not reliable there; the values were checked above
			}
			grad := vars.Flat64(out[3])
			h := 1e-6
			for trial := 0; trial < 12; trial++ {
				i, j := rng.IntN(n), rng.IntN(n)
				ap, am := mat.NewSymDense(n, nil), mat.NewSymDense(n, nil)
				ap.CopySym(a)
				am.CopySym(a)
				ap.SetSym(i, j, a.At(i, j)+h)
				am.SetSym(i, j, a.At(i, j)-h)
				fd := (gonumObjective(ap, w, v) - gonumObjective(am, w, v)) / (2 * h)
				want := grad[i*n+j]
				if i != j {
					want += grad[j*n+i]
				}
				if math.Abs(fd-want) > 1e-5*(1+math.Abs(fd))*sz.cond/100 {
					t.Errorf("dF/dA[%d,%d]: graph %.10g, finite differences %.10g", i, j, want, fd)
				}
			}
		})
	}
}

// TestBatchedAndSolve checks a batch [B, n, n], CholeskySolve and SolveLower against gonum.
func TestBatchedAndSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const batch, n, k = 3, 30, 4
	as := make([][][]float64, batch)
	syms := make([]*mat.SymDense, batch)
	for b := range as {
		syms[b] = testutil.RandomSPD(rng, n, 100)
		as[b] = testutil.ToSlice(syms[b])
	}
	rhs := make([][][]float64, batch)
	for b := range rhs {
		m := mat.NewDense(n, k, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				m.Set(i, j, rng.NormFloat64())
			}
		}
		rhs[b] = testutil.ToSlice(m)
	}
	out := MustExecOnceN(testutil.Backend(), func(a, b *Node) []*Node {
		l := linalg.Cholesky(a)
		return []*Node{linalg.CholeskySolve(l, b), linalg.SolveLower(l, b), linalg.LogDet(a)}
	}, as, rhs)
	solve, lower, logdet := vars.Flat64(out[0]), vars.Flat64(out[1]), vars.Flat64(out[2])
	for b := 0; b < batch; b++ {
		var ch mat.Cholesky
		ch.Factorize(syms[b])
		var x mat.Dense
		if err := ch.SolveTo(&x, mat.NewDense(n, k, testutil.FlattenRows(rhs[b]))); err != nil {
			t.Fatal(err)
		}
		var l mat.TriDense
		ch.LTo(&l)
		var y mat.Dense
		if err := y.Solve(&l, mat.NewDense(n, k, testutil.FlattenRows(rhs[b]))); err != nil {
			t.Fatal(err)
		}
		if d := testutil.MaxAbsDiff(solve[b*n*k:(b+1)*n*k], testutil.FlattenRows(testutil.ToSlice(&x))); d > 1e-10 {
			t.Errorf("batch %d: CholeskySolve differs from gonum by %g", b, d)
		}
		if d := testutil.MaxAbsDiff(lower[b*n*k:(b+1)*n*k], testutil.FlattenRows(testutil.ToSlice(&y))); d > 1e-10 {
			t.Errorf("batch %d: SolveLower differs from gonum by %g", b, d)
		}
		if d := math.Abs(logdet[b] - ch.LogDet()); d > 1e-10 {
			t.Errorf("batch %d: LogDet differs from gonum by %g", b, d)
		}
	}
}

// TestSecondOrder checks the gradient of a gradient: F(A) = sum(W .* d logdet(A)/dA) = tr(W A^-1)
// (for symmetric W); its gradient -A^-1 W A^-1 is compared with gonum.
func TestSecondOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 30
	a := testutil.RandomSPD(rng, n, 50)
	w := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			w.SetSym(i, j, rng.NormFloat64())
		}
	}
	out := MustExecOnceN(testutil.Backend(), func(a, w *Node) []*Node {
		g1 := Gradient(linalg.LogDet(a), a)[0]
		f := ReduceAllSum(Mul(w, g1))
		return []*Node{g1, Gradient(f, a)[0]}
	}, testutil.ToSlice(a), testutil.ToSlice(w))
	var inv mat.Dense
	if err := inv.Inverse(a); err != nil {
		t.Fatal(err)
	}
	if d := testutil.MaxAbsDiff(vars.Flat64(out[0]), testutil.FlattenRows(testutil.ToSlice(&inv))); d > 1e-9 {
		t.Errorf("d logdet/dA differs from A^-1 by %g", d)
	}
	var want mat.Dense
	want.Product(&inv, w, &inv)
	want.Scale(-1, &want)
	if d := testutil.MaxAbsDiff(vars.Flat64(out[1]), testutil.FlattenRows(testutil.ToSlice(&want))); d > 1e-8 {
		t.Errorf("second derivative differs from -A^-1 W A^-1 by %g", d)
	}
}

// TestNotPositiveDefiniteGivesNaN documents the failure mode callers check for.
func TestNotPositiveDefiniteGivesNaN(t *testing.T) {
	out := MustExecOnce(testutil.Backend(), func(a *Node) *Node { return linalg.Cholesky(a) },
		[][]float64{{1, 2}, {2, 1}})
	if v := vars.Flat64(out)[3]; !math.IsNaN(v) {
		t.Errorf("L[1,1] of an indefinite matrix = %g, want NaN", v)
	}
}

func BenchmarkCholesky50(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	a := testutil.ToSlice(testutil.RandomSPD(rng, 50, 100))
	exec := MustNewExec(testutil.Backend(), func(a *Node) []*Node {
		f := linalg.LogDet(a)
		return []*Node{f, Gradient(f, a)[0]}
	})
	exec.MustExec(a)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		exec.MustExec(a)
	}
}

func tensorOf(m mat.Matrix) *tensorsT { return newTensor(testutil.ToSlice(m)) }

// TestCholeskyReadsLowerTriangle: only the lower triangle of the input is read (as documented):
// garbage above the diagonal changes neither L nor L^-1, nor TriangularInverse of the lower
// triangle, for a single matrix (recursive blocks and base case, n = 40) and for a base-case size
// (n = 7).
func TestCholeskyReadsLowerTriangle(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{40, 7} {
		a := testutil.ToSlice(testutil.RandomSPD(rng, n, 1e3))
		garbled := make([][]float64, n)
		for i := range a {
			garbled[i] = append([]float64(nil), a[i]...)
			for j := i + 1; j < n; j++ {
				garbled[i][j] = 100 * rng.NormFloat64()
			}
		}
		exec := MustNewExec(testutil.Backend(), func(a *Node) []*Node {
			l, x := linalg.CholeskyWithInverse(a)
			// TriangularInverse of a's lower triangle: the garbage above must not reach it either.
			return []*Node{l, x, linalg.TriangularInverse(Add(a, MulScalar(linalg.Eye(a.Graph(), n, a.DType()), 100)))}
		})
		want, got := exec.MustExec(a), exec.MustExec(garbled)
		for k := range want {
			if d := testutil.MaxAbsDiff(vars.Flat64(got[k]), vars.Flat64(want[k])); d != 0 {
				t.Errorf("n = %d, output %d: garbage above the diagonal changed it by %g", n, k, d)
			}
		}
	}
}

// TestNonSquareIsAnError: a matrix that is not square is an error from the graph's execution, in
// time. (Under GoMLX v0.28.6 a graph function that panics with a value that is not an error, such
// as a string, deadlocks ExecOnce: Finalize waits for the compilation the panic abandoned. Every
// panic of this module's graph code is an error value for that reason.)
func TestNonSquareIsAnError(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		_, err := ExecOnceN(testutil.Backend(), func(a *Node) []*Node { return []*Node{linalg.Cholesky(a)} }, [][]float64{{1, 2, 3}, {4, 5, 6}})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "square") {
			t.Errorf("Cholesky of a [2, 3] matrix: %v, want an error saying it is not square", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Cholesky of a [2, 3] matrix did not return in 30 s")
	}
}
