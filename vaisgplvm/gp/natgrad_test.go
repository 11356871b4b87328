package gp_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

// TestNaturalStep checks one natural-gradient step on a Gaussian-conjugate objective with a known
// optimum, F = sum_d b_d^T m_d - tr(P_d (S_d + m_d m_d^T)) / 2 + log|S_d| / 2, maximised by
// S_d = P_d^-1 and m_d = P_d^-1 b_d: from a random q(u), with autodiff's gradients through the
// factors L_d, gamma = 1 lands on the optimum and gamma = 0.3 moves the natural parameters 30% of
// the way (precision (1 - g) S^-1 + g P, S^-1 m -> (1 - g) S^-1 m + g b), both against gonum float64
// to 1e-9 relative.
func TestNaturalStep(t *testing.T) {
	const m, d = 4, 2
	rng := rand.New(rand.NewPCG(7, 1))
	var prec []*mat.SymDense
	var bs [][]float64
	ls := make([][][]float64, d)
	for k := range d {
		prec = append(prec, testutil.RandomSPD(rng, m, 20))
		b := make([]float64, m)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		bs = append(bs, b)
		s0 := testutil.RandomSPD(rng, m, 10)
		var ch mat.Cholesky
		ch.Factorize(s0)
		var l mat.TriDense
		ch.LTo(&l)
		ls[k] = testutil.ToSlice(&l)
	}
	mu := testutil.NormalRows(rng, m, d, 1) // [M, D]
	pT := make([][][]float64, d)
	for k := range d {
		pT[k] = testutil.ToSlice(prec[k])
	}
	bT := make([][]float64, m) // [M, D]
	for i := range bT {
		bT[i] = []float64{bs[0][i], bs[1][i]}
	}
	for _, gamma := range []float64{1, 0.3} {
		out := MustExecOnceN(testutil.Backend(), func(muN, lN, pN, bN, gN *Node) []*Node {
			f := func(muV, lV *Node) *Node {
				l := TakeLowerTriangular(lV, 0)
				s := MatMul(l, Transpose(l, 1, 2))
				mm := InsertAxes(Transpose(muV, 0, 1), -1) // [D, M, 1]
				quad := Add(s, MatMul(mm, Transpose(mm, 1, 2)))
				trace := ReduceAllSum(Mul(pN, quad))
				return Add(Sub(ReduceAllSum(Mul(bN, muV)), MulScalar(trace, 0.5)), MulScalar(ReduceAllSum(linalg.LogDetFromCholesky(l)), 0.5))
			}
			grads := Gradient(f(muN, lN), muN, lN)
			nm, ns := gp.NaturalStep(muN, lN, grads[0], grads[1], gN)
			return []*Node{nm, ns}
		}, mu, ls, pT, bT, gamma)
		gotMu, gotL := out[0].Value().([][]float64), out[1].Value().([][][]float64)
		for k := range d {
			var sInv, want mat.SymDense // the new precision
			l := mat.NewTriDense(m, mat.Lower, testutil.FlattenRows(ls[k]))
			var s mat.SymDense
			s.SymOuterK(1, l)
			var ch mat.Cholesky
			ch.Factorize(&s)
			if err := ch.InverseTo(&sInv); err != nil {
				t.Fatal(err)
			}
			want.ScaleSym(1-gamma, &sInv)
			want.AddSym(&want, scaled(prec[k], gamma))
			mk := mat.NewVecDense(m, nil)
			for i := range m {
				mk.SetVec(i, mu[i][k])
			}
			var th mat.VecDense // (1 - g) S^-1 m + g b
			th.MulVec(&sInv, mk)
			th.ScaleVec(1-gamma, &th)
			th.AddScaledVec(&th, gamma, mat.NewVecDense(m, bs[k]))
			var pch mat.Cholesky
			if !pch.Factorize(&want) {
				t.Fatal("the wanted precision is not positive definite")
			}
			var wantMu mat.VecDense
			if err := pch.SolveVecTo(&wantMu, &th); err != nil {
				t.Fatal(err)
			}
			var wantS mat.SymDense
			if err := pch.InverseTo(&wantS); err != nil {
				t.Fatal(err)
			}
			gl := mat.NewDense(m, m, testutil.FlattenRows(gotL[k]))
			var gotS mat.Dense
			gotS.Mul(gl, gl.T())
			for i := range m {
				if e := rel(gotMu[i][k], wantMu.AtVec(i)); e > 1e-9 {
					t.Errorf("gamma %g output %d: m[%d] = %.12g, want %.12g", gamma, k, i, gotMu[i][k], wantMu.AtVec(i))
				}
				for j := range m {
					if e := rel(gotS.At(i, j), wantS.At(i, j)); e > 1e-9 {
						t.Errorf("gamma %g output %d: S[%d,%d] = %.12g, want %.12g", gamma, k, i, j, gotS.At(i, j), wantS.At(i, j))
					}
					if j > i && gl.At(i, j) != 0 {
						t.Errorf("gamma %g output %d: the new factor is not lower triangular at [%d,%d]", gamma, k, i, j)
					}
				}
			}
		}
	}
}

// scaled returns a copy of s times f.
func scaled(s *mat.SymDense, f float64) *mat.SymDense {
	var out mat.SymDense
	out.ScaleSym(f, s)
	return &out
}

// rel returns |a - b| / max(1, |b|).
func rel(a, b float64) float64 { return math.Abs(a-b) / math.Max(1, math.Abs(b)) }
