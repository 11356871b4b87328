package latent_test

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
)

// TestSampleAndLogProb: h = a_n + L_n eps and log q0(h) (through L_n^-1) against float64 loops
// (forward substitution), for one draw (S = 1, the batched matrix-vector path) and for three
// (the einsum path), with the gradients of sum(h) with respect to a and L against their closed
// forms (1 and sum_s eps_s^T per row). Tolerance 1e-13 relative.
func TestSampleAndLogProb(t *testing.T) {
	const b, q = 4, 3
	rng := rand.New(rand.NewPCG(3, 3))
	a := make([][]float64, b)
	l := make([][][]float64, b)
	for n := range a {
		a[n] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		l[n] = make([][]float64, q)
		for i := range l[n] {
			l[n][i] = make([]float64, q)
			for j := 0; j <= i; j++ {
				l[n][i][j] = rng.NormFloat64() * 0.5
			}
			l[n][i][i] = 0.5 + rng.Float64()
		}
	}
	for _, s := range []int{1, 3} {
		eps := vars.Normal(rng, s, b, q)
		epsV := eps.Value().([][][]float64)
		out, err := ExecOnceN(testutil.Backend(), func(an, ln, e *Node) []*Node {
			q0 := &latent.Q0{Q: q, Mean: an, Scale: ln}
			h := q0.Sample(e)
			g := Gradient(ReduceAllSum(h), an, ln)
			return []*Node{h, q0.LogProb(h), g[0], g[1]}
		}, a, l, eps)
		if err != nil {
			t.Fatal(err)
		}
		h := out[0].Value().([][][]float64)
		logp := out[1].Value().([][]float64)
		gradA := out[2].Value().([][]float64)
		gradL := out[3].Value().([][][]float64)
		for si := 0; si < s; si++ {
			for n := 0; n < b; n++ {
				// h = a + L eps; z = L^-1 (h - a) by forward substitution; log N(z) - log|L|.
				want := make([]float64, q)
				z := make([]float64, q)
				logDet, sq := 0.0, 0.0
				for i := 0; i < q; i++ {
					want[i] = a[n][i]
					for j := 0; j <= i; j++ {
						want[i] += l[n][i][j] * epsV[si][n][j]
					}
					r := h[si][n][i] - a[n][i]
					for j := 0; j < i; j++ {
						r -= l[n][i][j] * z[j]
					}
					z[i] = r / l[n][i][i]
					logDet += math.Log(l[n][i][i])
					sq += z[i] * z[i]
				}
				for i := range want {
					if d := math.Abs(h[si][n][i] - want[i]); d > 1e-13*math.Max(1, math.Abs(want[i])) {
						t.Errorf("S = %d: h[%d][%d][%d] = %.16g, want %.16g", s, si, n, i, h[si][n][i], want[i])
					}
				}
				wantLogP := -0.5*sq - logDet - 0.5*q*math.Log(2*math.Pi)
				if d := math.Abs(logp[si][n] - wantLogP); d > 1e-13*math.Max(1, math.Abs(wantLogP)) {
					t.Errorf("S = %d: log q0(h[%d][%d]) = %.16g, want %.16g", s, si, n, logp[si][n], wantLogP)
				}
			}
		}
		for n := 0; n < b; n++ {
			for i := 0; i < q; i++ {
				if gradA[n][i] != float64(s) {
					t.Errorf("S = %d: d sum(h) / d a[%d][%d] = %g, want %d", s, n, i, gradA[n][i], s)
				}
				for j := 0; j < q; j++ {
					want := 0.0
					for si := 0; si < s; si++ {
						want += epsV[si][n][j]
					}
					if d := math.Abs(gradL[n][i][j] - want); d > 1e-13*math.Max(1, math.Abs(want)) {
						t.Errorf("S = %d: d sum(h) / d L[%d][%d][%d] = %.16g, want %.16g", s, n, i, j, gradL[n][i][j], want)
					}
				}
			}
		}
	}
}
