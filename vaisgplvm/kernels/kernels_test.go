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

// reference evaluates the kernels directly in float64 (variance v, lengthscale l for every dim).
func reference(name string, a, b []float64, v, l float64) float64 {
	r2, dot := 0.0, 0.0
	for q := range a {
		r2 += (a[q] - b[q]) * (a[q] - b[q]) / (l * l)
		dot += v * a[q] * b[q]
	}
	r := math.Sqrt(r2)
	switch name {
	case "se":
		return v * math.Exp(-r2/2)
	case "matern32":
		return v * (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r)
	case "matern52":
		return v * (1 + math.Sqrt(5)*r + 5*r2/3) * math.Exp(-math.Sqrt(5)*r)
	}
	return dot
}

func TestKernelsAgainstDirectFormulas(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	const n1, n2, q = 7, 5, 3
	mk := func(n int) [][]float64 { return testutil.NormalRows(rng, n, q, 1) }
	x1, x2 := mk(n1), mk(n2)
	x2[0] = append([]float64(nil), x1[0]...) // a zero distance
	for _, name := range []string{"se", "matern32", "matern52", "linear"} {
		k, err := kernels.New(name, kernels.Config{Q: q, Variance: 1.7, Lengthscale: 0.8})
		if err != nil {
			t.Fatal(err)
		}
		out := mlmodel.MustExecOnceN(testutil.Backend(), mlmodel.NewStore(), func(ctx *mlmodel.Scope, a, b *Node) []*Node {
			km := k.Matrix(ctx, a, b)
			prep := k.Prepare(ctx, b)
			// The gradient must be finite even at zero distance.
			return []*Node{km, k.Diag(ctx, a), Gradient(ReduceAllSum(km), a)[0], prep.Cross(a), prep.Diag(a)}
		}, x1, x2)
		got, diag, grad := vars.Flat64(out[0]), vars.Flat64(out[1]), vars.Flat64(out[2])
		// The prepared kernel (what the GP evaluates at Z) equals Matrix and Diag.
		if d := testutil.MaxAbsDiff(vars.Flat64(out[3]), got); d > 1e-14 {
			t.Errorf("%s: Prepare(x2).Cross differs from Matrix by %g", name, d)
		}
		if d := testutil.MaxAbsDiff(vars.Flat64(out[4]), diag); d > 1e-14 {
			t.Errorf("%s: Prepare(x2).Diag differs from Diag by %g", name, d)
		}
		for i := 0; i < n1; i++ {
			for j := 0; j < n2; j++ {
				want := reference(name, x1[i], x2[j], 1.7, 0.8)
				if math.Abs(got[i*n2+j]-want) > 1e-10 {
					t.Errorf("%s k[%d,%d] = %.12g, want %.12g", name, i, j, got[i*n2+j], want)
				}
			}
			if want := reference(name, x1[i], x1[i], 1.7, 0.8); math.Abs(diag[i]-want) > 1e-10 {
				t.Errorf("%s diag[%d] = %g, want %g", name, i, diag[i], want)
			}
		}
		for _, g := range grad {
			if math.IsNaN(g) || math.IsInf(g, 0) {
				t.Errorf("%s: non-finite gradient %v", name, grad)
				break
			}
		}
	}
}

func TestUnknownKernel(t *testing.T) {
	if _, err := kernels.New("rbf2", kernels.Config{Q: 1, Variance: 1, Lengthscale: 1}); err == nil {
		t.Error("unknown kernel accepted")
	}
	if _, err := kernels.New("se", kernels.Config{Q: 1, Variance: -1, Lengthscale: 1}); err == nil {
		t.Error("negative variance accepted")
	}
}
