package gp_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
)

// wideProblem is a problem with more outputs than inducing points (D > M), where the projected
// fit is used: z [M, Q], h [N, Q], mu [M, D], x [N, D], s [nS, M, M], bias [D].
type wideProblem struct {
	z, h, mu, x [][]float64
	s           [][][]float64
	bias        []float64
}

const wideN, wideM, wideD, wideQ = 7, 5, 13, 2

func newWideProblem(seed uint64, nS int, offset float64) wideProblem {
	rng := rand.New(rand.NewPCG(seed, 2))
	p := wideProblem{z: testutil.NormalRows(rng, wideM, wideQ, 1), h: testutil.NormalRows(rng, wideN, wideQ, 1),
		mu: testutil.NormalRows(rng, wideM, wideD, 1), x: testutil.NormalRows(rng, wideN, wideD, 1)}
	for i := range p.x {
		for j := range p.x[i] {
			p.x[i][j] += offset
		}
	}
	for d := 0; d < nS; d++ {
		sd := testutil.NormalRows(rng, wideM, wideM, 0.3)
		for i := range sd {
			sd[i][i] = 0.5 + math.Abs(sd[i][i])
		}
		p.s = append(p.s, sd)
	}
	p.bias = testutil.NormalRows(rng, 1, wideD, 1)[0]
	return p
}

// setup returns the SE kernel, Gaussian likelihood and a context holding the problem's q(u) (mu,
// s) that the projected-fit tests evaluate.
func (p wideProblem) setup() (kernels.Kernel, *gp.Gaussian, *mlmodel.Scope) {
	kern, _ := kernels.New("se", kernels.Config{Q: wideQ, Variance: kvar, Lengthscale: lscale})
	ctx := mlmodel.NewStore().RootScope()
	ctx.At("inducing").VariableWithValue("q_mu", p.mu)
	ctx.At("inducing").VariableWithValue("q_sqrt", p.s)
	return kern, &gp.Gaussian{NoiseVariance0: noise}, ctx
}

// withGradients returns ell [N] and the gradients of a weighted sum of it (each point's weight
// different) with respect to h and every variable of ctx.
func withGradients(ctx *mlmodel.Scope, h, ell *Node) []*Node {
	wrt := []*Node{h}
	vars.Each(ctx, func(v *mlmodel.Variable) {
		wrt = append(wrt, v.ValueGraph(h.Graph()))
	})
	w := AddScalar(MulScalar(Iota(h.Graph(), ell.Shape(), 0), 0.3), 1)
	return append([]*Node{ell}, Gradient(ReduceAllSum(Mul(w, ell)), wrt...)...)
}

// compareWithGradients checks the outputs of withGradients: the values (index 0) to 1e-10 and the
// gradients to 5e-9, relative to the largest magnitude of each output (at least 1). The gradients
// with respect to Z and the kernel go through Kuu's factor L and its inverse, which the two forms
// use differently (products with L^-1 against solves): rounding-level changes to L or L^-1 move
// them by more than the values. Measured in float64 on the pure-Go backend: largest 5.9e-10 here;
// 1.2e-9 with a Cholesky variant whose L^-1 divided by L_jj values one ulp off. Scaling the
// missing-entry mask by 1 + 1e-6 moves the values by 1.4e-7 and the gradients by 3e-8 relative.
func compareWithGradients(t *testing.T, name string, got, want [][]float64) {
	t.Helper()
	for i := range want {
		tol := 5e-9
		if i == 0 {
			tol = 1e-10
		}
		scale := 1.0
		for _, v := range want[i] {
			scale = math.Max(scale, math.Abs(v))
		}
		if d := testutil.MaxAbsDiff(got[i], want[i]); !(d <= tol*scale) {
			t.Errorf("%s: output %d (0 = l_n, then d/dh and d/dvariables) differs by %g (scale %g)", name, i, d, scale)
		}
	}
}

// TestProjectedMatchesDirect: the projected expected log-likelihood (and its gradients with respect
// to h and every variable: Z, q(u), bias, kernel and noise parameters) equals the direct form of
// ExpectedLogLik (mask nil, [N, D] means), which TestPosteriorMatchesGonum checks against gonum:
// whitened and not, shared and per-output square roots, with and without a mean function; values
// to 1e-10 relative, gradients to 5e-9 relative (float64; see compareWithGradients).
func TestProjectedMatchesDirect(t *testing.T) {
	for _, whitened := range []bool{true, false} {
		for _, shared := range []bool{true, false} {
			for _, withBias := range []bool{false, true} {
				name := fmt.Sprintf("whitened=%v shared=%v bias=%v", whitened, shared, withBias)
				nS := wideD
				if shared {
					nS = 1
				}
				p := newWideProblem(11, nS, 0.7)
				in := &gp.Inducing{M: wideM, D: wideD, Q: wideQ, Whitened: whitened, Z0: p.z, UnwhitenedScale: 1,
					SharedSqrt: shared}
				if withBias {
					in.Bias0 = p.bias
				}
				kern, lik, ctx := p.setup()
				eval := func(projected bool) [][]float64 {
					out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, h, x *Node) []*Node {
						post := gp.NewPosterior(ctx, h.Graph(), in, kern)
						var ell *Node
						if projected {
							ell = lik.ExpectedLogLikProjected(ctx, post, post.Project(x), h)
						} else {
							ell = lik.ExpectedLogLik(ctx, post, x, nil, h)
						}
						return withGradients(ctx, h, ell)
					}, p.h, p.x)
					var res [][]float64
					for _, o := range out {
						res = append(res, vars.Flat64(o))
					}
					return res
				}
				direct, projected := eval(false), eval(true)
				if len(direct) < 6 {
					t.Fatalf("%s: only %d outputs (variables missing from the gradient)", name, len(direct))
				}
				compareWithGradients(t, name, projected, direct)
			}
		}
	}
}

// TestProjectedMaskedMatchesDirect: ProjectMasked with the mask of the first R rows (the other
// rows fully observed), evaluated directly and tiled for 2 samples, equals the direct masked
// ExpectedLogLik with the whole mask: values to 1e-10 relative, gradients (h, every variable) to
// 5e-9 relative; whitened (the kernel-space form) and unwhitened q(u) (the psi form), shared and
// per-output square roots, with and without a mean function. Row 1
// has no observed entry (its l_n must be 0 up to rounding).
func TestProjectedMaskedMatchesDirect(t *testing.T) {
	const r = 3
	for _, whitened := range []bool{true, false} {
		for _, shared := range []bool{true, false} {
			for _, withBias := range []bool{false, true} {
				for _, samples := range []int{1, 2} {
					name := fmt.Sprintf("whitened=%v shared=%v bias=%v samples=%d", whitened, shared, withBias, samples)
					nS := wideD
					if shared {
						nS = 1
					}
					// Seed 21's Z has two inducing inputs almost on top of each other (cond(Kuu)
					// 8e5): whitened, that is harmless; unwhitened, q(u)'s unit means make Kuu^-1 m
					// so large that the value's rounding noise (~3e-5 absolute) puts both forms'
					// kernel-variance gradients 1.6e-6 apart and 1e-3 from central differences
					// at any step, so the unwhitened cases use seed 11 (cond(Kuu) 30).
					seed := uint64(21)
					if !whitened {
						seed = 11
					}
					p := newWideProblem(seed, nS, 0.4)
					rng := rand.New(rand.NewPCG(22, 0))
					mask := make([][]float64, wideN)
					for i := range mask {
						mask[i] = make([]float64, wideD)
						for j := range mask[i] {
							mask[i][j] = 1
							if i < r && (i == 1 || rng.Float64() < 0.6) {
								mask[i][j] = 0
							}
						}
					}
					// h for every sample: [samples*N, Q], sample-major.
					var hs [][]float64
					for k := 0; k < samples; k++ {
						for _, row := range p.h {
							hs = append(hs, []float64{row[0] + 0.3*float64(k), row[1] - 0.2*float64(k)})
						}
					}
					in := &gp.Inducing{M: wideM, D: wideD, Q: wideQ, Whitened: whitened, Z0: p.z, UnwhitenedScale: 1,
						SharedSqrt: shared}
					if withBias {
						in.Bias0 = p.bias
					}
					kern, lik, ctx := p.setup()
					eval := func(projected bool) [][]float64 {
						out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, h, x, mask *Node) []*Node {
							post := gp.NewPosterior(ctx, h.Graph(), in, kern)
							var ell *Node
							if projected {
								pr := post.ProjectMasked(x, Gather(mask, Const(h.Graph(), [][]int32{{0}, {1}, {2}})))
								ell = lik.ExpectedLogLikProjected(ctx, post, pr.Tile(samples), h)
							} else {
								tile := func(v *Node) *Node {
									return Reshape(BroadcastToDims(InsertAxes(v, 0), samples, wideN, wideD), samples*wideN, wideD)
								}
								ell = lik.ExpectedLogLik(ctx, post, tile(x), tile(mask), h)
							}
							return withGradients(ctx, h, ell)
						}, hs, p.x, mask)
						var res [][]float64
						for _, o := range out {
							res = append(res, vars.Flat64(o))
						}
						return res
					}
					direct, projected := eval(false), eval(true)
					for k := 0; k < samples; k++ {
						// Its terms cancel (all entries' squared errors and variances minus the missing
						// ones'): 0 up to rounding of numbers about 100 in size.
						if v := projected[0][k*wideN+1]; math.Abs(v) > 1e-8 {
							t.Errorf("%s: the row with no observed entry has l_n %g, want 0", name, v)
						}
					}
					compareWithGradients(t, name, projected, direct)
				}
			}
		}
	}
}

// TestProjectedFloat32: on data close to the predictive mean (x = mean + 0.05 noise, so |x_c|^2 is
// hundreds of times the squared error and the expansion cancels two to three digits), float32
// l_n stays within 1e-5 relative of float64's direct form (measured: up to 1.2e-6, against 1.9e-6
// for float32's direct form; the earlier form in W = L^-T Mu, whose entries grow with cond(L), had
// 2.5e-5; the kernel-space form, which float32 does not use, 1.8e-5).
func TestProjectedFloat32(t *testing.T) {
	p := newWideProblem(12, 1, 0)
	in := &gp.Inducing{M: wideM, D: wideD, Q: wideQ, Whitened: true, Z0: p.z, SharedSqrt: true}
	kern, _ := kernels.New("se", kernels.Config{Q: wideQ, Variance: kvar, Lengthscale: lscale})
	lik := &gp.Gaussian{NoiseVariance0: 0.0025}
	run := func(dt dtypes.DType, x [][]float64, projected bool) []float64 {
		ctx := mlmodel.NewStore().RootScope()
		if err := vars.SetDType(ctx, dt); err != nil {
			t.Fatal(err)
		}
		ctx.At("inducing").VariableWithValue("q_mu", vars.Convert(tensors.FromValue(p.mu), dt))
		ctx.At("inducing").VariableWithValue("q_sqrt", vars.Convert(tensors.FromValue(p.s), dt))
		h := vars.Convert(tensors.FromValue(p.h), dt)
		xt := vars.Convert(tensors.FromValue(x), dt)
		out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, h, x *Node) []*Node {
			post := gp.NewPosterior(ctx, h.Graph(), in, kern)
			if projected {
				pr := post.Project(x)
				if (pr.KCross != nil) != (dt == dtypes.Float64) {
					t.Errorf("%s: kernel-space form built = %v, want it in float64 only", dt, pr.KCross != nil)
				}
				return []*Node{lik.ExpectedLogLikProjected(ctx, post, pr, h)}
			}
			return []*Node{lik.ExpectedLogLik(ctx, post, x, nil, h)}
		}, h, xt)
		return vars.Flat64(out[0])
	}
	ctx := mlmodel.NewStore().RootScope()
	ctx.At("inducing").VariableWithValue("q_mu", p.mu)
	ctx.At("inducing").VariableWithValue("q_sqrt", p.s)
	means := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, h *Node) []*Node {
		return []*Node{gp.NewPosterior(ctx, h.Graph(), in, kern).Predict(h, false).Mean}
	}, p.h)
	rng := rand.New(rand.NewPCG(13, 0))
	mf := vars.Flat64(means[0])
	x := make([][]float64, wideN)
	sq, fit := 0.0, 0.0
	for i := range x {
		x[i] = make([]float64, wideD)
		for j := range x[i] {
			e := 0.05 * rng.NormFloat64()
			x[i][j] = mf[i*wideD+j] + e
			sq += x[i][j] * x[i][j]
			fit += e * e
		}
	}
	if !(sq > 100*fit) {
		t.Fatalf("test data: |x|^2 %g is not >> squared error %g", sq, fit)
	}
	want := run(dtypes.Float64, x, false)
	got := run(dtypes.Float32, x, true)
	direct32 := run(dtypes.Float32, x, false)
	for n := range want {
		rel := math.Abs(got[n]-want[n]) / math.Abs(want[n])
		relDirect := math.Abs(direct32[n]-want[n]) / math.Abs(want[n])
		t.Logf("point %d: l_n %.6g, float32 relative error projected %.2g, direct %.2g", n, want[n], rel, relDirect)
		if !(rel < 1e-5) {
			t.Errorf("point %d: float32 projected l_n %g, float64 %g (relative error %g; direct float32 %g)", n, got[n], want[n], rel, relDirect)
		}
	}
}

// TestProjectedKernelSpaceConditioning: the kernel-space form (whitened, float64), whose G
// subtracts terms up to cond(Kuu) times the kernel variance times D, against the direct form on
// the worst case the jitter allows: all M inducing inputs within 1e-5 of one point, so Kuu + jitter
// has one eigenvalue M kvar and M-1 of about kvar 1e-6 (cond(Kuu) about 5e6). l_n to 1e-8
// relative, its gradients with respect to h to 1e-6 relative (measured: 8.5e-11 / 3.8e-10).
func TestProjectedKernelSpaceConditioning(t *testing.T) {
	p := newWideProblem(31, 1, 0.5)
	rng := rand.New(rand.NewPCG(32, 0))
	for i := range p.z {
		for j := range p.z[i] {
			p.z[i][j] = 0.2 + 1e-5*rng.NormFloat64()
		}
	}
	in := &gp.Inducing{M: wideM, D: wideD, Q: wideQ, Whitened: true, Z0: p.z, SharedSqrt: true}
	kern, lik, ctx := p.setup()
	eval := func(projected bool) [][]float64 {
		out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, h, x *Node) []*Node {
			post := gp.NewPosterior(ctx, h.Graph(), in, kern)
			if projected {
				pr := post.Project(x)
				if pr.KCross == nil {
					t.Fatal("whitened float64 Project did not build the kernel-space form")
				}
				ell := lik.ExpectedLogLikProjected(ctx, post, pr, h)
				return []*Node{ell, Gradient(ReduceAllSum(ell), h)[0]}
			}
			ell := lik.ExpectedLogLik(ctx, post, x, nil, h)
			return []*Node{ell, Gradient(ReduceAllSum(ell), h)[0]}
		}, p.h, p.x)
		return [][]float64{vars.Flat64(out[0]), vars.Flat64(out[1])}
	}
	direct, kernelSpace := eval(false), eval(true)
	for i, tol := range []float64{1e-8, 1e-6} {
		scale := 0.0
		for _, v := range direct[i] {
			scale = math.Max(scale, math.Abs(v))
		}
		d := testutil.MaxAbsDiff(kernelSpace[i], direct[i])
		t.Logf("output %d (0 = l_n, 1 = d/dh): max difference %.2g relative to %.3g", i, d/scale, scale)
		if !(d <= tol*scale) {
			t.Errorf("output %d: kernel-space form differs from the direct form by %g (scale %g, tolerance %g relative)", i, d, scale, tol)
		}
	}
}

// TestProjectionPays: the cost rule picks the projected fit only when its multiply-adds are fewer.
func TestProjectionPays(t *testing.T) {
	cases := []struct {
		m, d, b, rows, r int
		want             bool
	}{
		{50, 560, 100, 100 * 26, 0, true},   // VAIS K = 25 on Frey
		{50, 560, 100, 100 * 26, 8, true},   // ... with 8 masked rows (Table 2's task)
		{50, 560, 100, 100 * 26, 90, false}, // ... with 90: the masked rows' means cost more than they save
		{50, 560, 100, 100 * 5, 0, true},    // IWVI K = 5
		{50, 560, 100, 100, 0, false},       // MF, one sample: G and Project cost more than one set of means
		{50, 12, 100, 100 * 6, 0, false},    // oilflow: D < M
		{50, 12, 1000, 1000 * 6, 0, false},
	}
	for _, c := range cases {
		in := &gp.Inducing{M: c.m, D: c.d}
		if got := in.ProjectionPays(c.b, c.rows, c.r); got != c.want {
			t.Errorf("M %d D %d B %d rows %d masked %d: ProjectionPays %v, want %v", c.m, c.d, c.b, c.rows, c.r, got, c.want)
		}
	}
}
