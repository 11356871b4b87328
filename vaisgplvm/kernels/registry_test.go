package kernels_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
)

// rationalQuadratic is the whole of a new kernel outside the package: its profile
// rho(r^2) = (1 + r^2 / (2 alpha))^-alpha with its own positive hyperparameter alpha (initial 2).
func rationalQuadratic(ctx *mlmodel.Scope, r2 *Node) *Node {
	alpha := kernels.Positive(ctx, r2.Graph(), "alpha", 2, 0)
	return Pow(OnePlus(Div(r2, MulScalar(alpha, 2))), Neg(alpha))
}

// withRQ registers the rational-quadratic kernel "rq" for the duration of the test.
func withRQ(t *testing.T) {
	t.Helper()
	if err := kernels.RegisterStationary("rq", rationalQuadratic); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kernels.Unregister("rq") })
}

// TestRegisterNewKernel: a kernel registered from another package is listed by Names, made by New
// (with its own hyperparameter) and matches its formula; names are refused twice, unknown names
// are refused naming the registered ones, and Unregister removes it (go test -count=2 passes).
func TestRegisterNewKernel(t *testing.T) {
	withRQ(t)
	if !slices.Contains(kernels.Names(), "rq") {
		t.Fatalf("Names() = %v lacks rq", kernels.Names())
	}
	if err := kernels.RegisterStationary("rq", rationalQuadratic); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("registering rq twice: %v", err)
	}
	k, err := kernels.New("rq", kernels.Config{Q: 2, Variance: 1.5, Lengthscale: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	x1, x2 := [][]float64{{0.3, -0.2}, {1, 0.5}}, [][]float64{{0, 0}, {0.3, -0.2}, {-1, 2}}
	out := mlmodel.MustExecOnceN(testutil.Backend(), mlmodel.NewStore(), func(ctx *mlmodel.Scope, a, b *Node) []*Node {
		return []*Node{k.Matrix(ctx, a, b)}
	}, x1, x2)
	got := vars.Flat64(out[0])
	for i, a := range x1 {
		for j, b := range x2 {
			r2 := (math.Pow(a[0]-b[0], 2) + math.Pow(a[1]-b[1], 2)) / (0.7 * 0.7)
			want := 1.5 * math.Pow(1+r2/4, -2)
			if math.Abs(got[i*len(x2)+j]-want) > 1e-12 {
				t.Errorf("rq k[%d,%d] = %.12g, want %.12g", i, j, got[i*len(x2)+j], want)
			}
		}
	}
	kernels.Unregister("rq")
	if _, err := kernels.New("rq", kernels.Config{Q: 2, Variance: 1, Lengthscale: 1}); err == nil || !strings.Contains(err.Error(), "se") {
		t.Errorf("New after Unregister: %v, want an error listing the registered kernels", err)
	}
	withRQ(t)
}

// TestStationaryUnknownKindRefused: a Stationary kernel of an unregistered kind without a profile
// fails (an error from the graph's execution), where it used to compute SE silently.
func TestStationaryUnknownKindRefused(t *testing.T) {
	k := &kernels.Stationary{Config: kernels.Config{Q: 1, Variance: 1, Lengthscale: 1}, Kind: "cosine"}
	_, err := mlmodel.ExecOnceN(testutil.Backend(), mlmodel.NewStore(), func(ctx *mlmodel.Scope, a *Node) []*Node {
		return []*Node{k.Matrix(ctx, a, a)}
	}, [][]float64{{1}, {2}})
	if err == nil || !strings.Contains(err.Error(), "cosine") {
		t.Errorf("unknown kind: %v, want an error naming it", err)
	}
}

// TestEveryKernelPSD: for every registered kernel (and the test's rational quadratic) the Gram
// matrix of 15 random points in 3 dimensions, one repeated, is symmetric and positive
// semi-definite: its smallest eigenvalue is above -1e-10 times its largest (float64 eigenvalues
// by gonum).
func TestEveryKernelPSD(t *testing.T) {
	withRQ(t)
	rng := rand.New(rand.NewPCG(5, 6))
	x := testutil.NormalRows(rng, 15, 3, 1)
	x[14] = slices.Clone(x[3])
	for _, name := range kernels.Names() {
		k, err := kernels.New(name, kernels.Config{Q: 3, Variance: 1.3, Lengthscale: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		out := mlmodel.MustExecOnceN(testutil.Backend(), mlmodel.NewStore(), func(ctx *mlmodel.Scope, a *Node) []*Node {
			return []*Node{k.Matrix(ctx, a, a)}
		}, x)
		g := vars.Flat64(out[0])
		n := len(x)
		sym := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if math.Abs(g[i*n+j]-g[j*n+i]) > 1e-12 {
					t.Fatalf("%s: K[%d,%d] = %g, K[%d,%d] = %g", name, i, j, g[i*n+j], j, i, g[j*n+i])
				}
				sym.SetSym(i, j, g[i*n+j])
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(sym, false) {
			t.Fatalf("%s: eigendecomposition failed", name)
		}
		ev := eig.Values(nil)
		if lo, hi := ev[0], ev[n-1]; lo < -1e-10*hi {
			t.Errorf("%s: smallest eigenvalue %g, largest %g: not positive semi-definite", name, lo, hi)
		}
	}
}

// TestEveryKernelDerivatives: for every registered kernel, the first derivatives of
// f(x, z) = sum(W * K(x, z)) + sum(u * diag K(x)) in x and z, and the second derivatives in x
// (the gradient in x of g = sum(V * df/dx), which the annealed chain's scores need when training
// differentiates them again), agree with central finite differences (step 1e-5) to 1e-6 relative.
func TestEveryKernelDerivatives(t *testing.T) {
	withRQ(t)
	rng := rand.New(rand.NewPCG(7, 8))
	const n, m, q = 4, 3, 2
	x, z := testutil.NormalRows(rng, n, q, 1), testutil.NormalRows(rng, m, q, 1)
	w, v := testutil.NormalRows(rng, n, m, 1), testutil.NormalRows(rng, n, q, 1)
	u := testutil.NormalRows(rng, 1, n, 1)[0]
	for _, name := range kernels.Names() {
		k, err := kernels.New(name, kernels.Config{Q: q, Variance: 1.3, Lengthscale: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		exec := mlmodel.MustNewExec(testutil.Backend(), mlmodel.NewStore(), func(ctx *mlmodel.Scope, x, z, w, v, u *Node) []*Node {
			f := Add(ReduceAllSum(Mul(w, k.Matrix(ctx, x, z))), ReduceAllSum(Mul(u, k.Diag(ctx, x))))
			grads := Gradient(f, x, z)
			g := ReduceAllSum(Mul(v, grads[0]))
			return []*Node{f, grads[0], grads[1], g, Gradient(g, x)[0]}
		})
		eval := func(x, z [][]float64) []*tensors.Tensor { return exec.MustCall(x, z, w, v, u) }
		base := eval(x, z)
		check := func(what string, pts [][]float64, analytic []float64, value func(*tensors.Tensor) float64, out int) {
			for i := range pts {
				for j := range pts[i] {
					old := pts[i][j]
					pts[i][j] = old + 1e-5
					hi := value(evalAt(eval, x, z)[out])
					pts[i][j] = old - 1e-5
					lo := value(evalAt(eval, x, z)[out])
					pts[i][j] = old
					fd := (hi - lo) / 2e-5
					if a := analytic[i*len(pts[i])+j]; math.Abs(a-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
						t.Errorf("%s: %s[%d][%d] = %.9g, finite differences %.9g", name, what, i, j, a, fd)
					}
				}
			}
		}
		scalar := func(t *tensors.Tensor) float64 { return vars.Flat64(t)[0] }
		check("df/dx", x, vars.Flat64(base[1]), scalar, 0)
		check("df/dz", z, vars.Flat64(base[2]), scalar, 0)
		check("d2f/dx2 (dg/dx)", x, vars.Flat64(base[4]), scalar, 3)
	}
}

// evalAt evaluates eval at the current x and z (which check perturbs in place).
func evalAt(eval func(x, z [][]float64) []*tensors.Tensor, x, z [][]float64) []*tensors.Tensor {
	return eval(x, z)
}
