package gp_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/gp"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/linalg"
)

const (
	nTest, mTest, dTest, qTest = 5, 4, 3, 2
	kvar, lscale, noise        = 0.7, 1.3, 0.2
)

type problem struct {
	z, h, mu, x, mask [][]float64
	s                 [][][]float64
}

// setup returns the tests' SE kernel (variance kvar, lengthscales lscale) and a float64 context
// holding q(u): mean p.mu and square roots qSqrt.
func (p *problem) setup(qSqrt [][][]float64) (kernels.Kernel, *mlmodel.Scope) {
	kern, _ := kernels.New("se", kernels.Config{Q: qTest, Variance: kvar, Lengthscale: lscale})
	ctx := mlmodel.NewStore().RootScope()
	ctx.At("inducing").VariableWithValue("q_mu", p.mu)
	ctx.At("inducing").VariableWithValue("q_sqrt", qSqrt)
	return kern, ctx
}

func newProblem(seed uint64) problem {
	rng := rand.New(rand.NewPCG(seed, 1))
	p := problem{z: testutil.NormalRows(rng, mTest, qTest, 1), h: testutil.NormalRows(rng, nTest, qTest, 1), mu: testutil.NormalRows(rng, mTest, dTest, 1),
		x: testutil.NormalRows(rng, nTest, dTest, 1)}
	for d := 0; d < dTest; d++ {
		sd := testutil.NormalRows(rng, mTest, mTest, 0.3)
		for i := range sd {
			sd[i][i] = 0.5 + math.Abs(sd[i][i])
			if i == 1 {
				sd[i][i] = -sd[i][i] // the diagonal of S_d is unconstrained in sign
			}
			for j := i + 1; j < mTest; j++ {
				sd[i][j] = 0
			}
		}
		p.s = append(p.s, sd)
	}
	p.mask = [][]float64{{1, 1, 1}, {1, 0, 1}, {0, 0, 0}, {0, 1, 0}, {1, 1, 0}}
	return p
}

func se(a, b []float64) float64 {
	r2 := 0.0
	for i := range a {
		r2 += (a[i] - b[i]) * (a[i] - b[i]) / (lscale * lscale)
	}
	return kvar * math.Exp(-0.5*r2)
}

// reference computes the predictive marginals, the KL and the expected log-likelihood in float64
// with gonum, straight from the definitions.
func reference(p problem, whitened bool) (mean, vr [][]float64, kl float64, ell []float64) {
	kuu := mat.NewSymDense(mTest, nil)
	for i := 0; i < mTest; i++ {
		for j := 0; j < mTest; j++ {
			v := se(p.z[i], p.z[j])
			if i == j {
				v += linalg.DefaultJitter * kvar
			}
			kuu.SetSym(i, j, v)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(kuu) {
		panic("Kuu not PD")
	}
	var l mat.TriDense
	chol.LTo(&l)
	kuf := mat.NewDense(mTest, nTest, nil)
	for i := 0; i < mTest; i++ {
		for n := 0; n < nTest; n++ {
			kuf.Set(i, n, se(p.z[i], p.h[n]))
		}
	}
	var a mat.Dense // L^-1 Kuf
	if err := a.Solve(&l, kuf); err != nil {
		panic(err)
	}
	proj := &a // whitened: the projection is A
	if !whitened {
		var b mat.Dense // Kuu^-1 Kuf
		if err := chol.SolveTo(&b, kuf); err != nil {
			panic(err)
		}
		proj = &b
	}
	mu := mat.NewDense(mTest, dTest, testutil.FlattenRows(p.mu))
	var mn mat.Dense
	mn.Mul(proj.T(), mu)
	mean = make([][]float64, nTest)
	vr = make([][]float64, nTest)
	ell = make([]float64, nTest)
	for n := 0; n < nTest; n++ {
		mean[n] = make([]float64, dTest)
		vr[n] = make([]float64, dTest)
		an := mat.Col(nil, n, &a)
		pn := mat.NewVecDense(mTest, mat.Col(nil, n, proj))
		base := kvar - mat.Dot(mat.NewVecDense(mTest, an), mat.NewVecDense(mTest, an))
		for d := 0; d < dTest; d++ {
			sd := mat.NewDense(mTest, mTest, testutil.FlattenRows(p.s[d]))
			var t mat.VecDense
			t.MulVec(sd.T(), pn)
			mean[n][d] = mn.At(n, d)
			vr[n][d] = base + mat.Dot(&t, &t)
			if p.mask[n][d] != 0 {
				r := p.x[n][d] - mean[n][d]
				ell[n] += -0.5*math.Log(2*math.Pi*(noise+1e-6)) - (r*r+vr[n][d])/(2*(noise+1e-6))
			}
		}
	}
	var kinv mat.SymDense
	if err := chol.InverseTo(&kinv); err != nil {
		panic(err)
	}
	for d := 0; d < dTest; d++ {
		sd := mat.NewDense(mTest, mTest, testutil.FlattenRows(p.s[d]))
		var sig mat.Dense
		sig.Mul(sd, sd.T())
		md := mat.NewVecDense(mTest, mat.Col(nil, d, mu))
		logDetS := 0.0
		for i := 0; i < mTest; i++ {
			logDetS += math.Log(sd.At(i, i) * sd.At(i, i))
		}
		if whitened {
			kl += 0.5 * (mat.Trace(&sig) + mat.Dot(md, md) - mTest - logDetS)
		} else {
			var ks mat.Dense
			ks.Mul(&kinv, &sig)
			kl += 0.5 * (mat.Trace(&ks) + mat.Inner(md, &kinv, md) - mTest + chol.LogDet() - logDetS)
		}
	}
	return mean, vr, kl, ell
}

// TestPosteriorMatchesGonum checks Predict (per output and summed variance), KL and the masked
// expected log-likelihood against float64 gonum, whitened and unwhitened, to 1e-9.
func TestPosteriorMatchesGonum(t *testing.T) {
	p := newProblem(3)
	for _, whitened := range []bool{true, false} {
		mean, vr, kl, ell := reference(p, whitened)
		in := &gp.Inducing{M: mTest, D: dTest, Q: qTest, Whitened: whitened, Z0: p.z, UnwhitenedScale: 1}
		lik := &gp.Gaussian{NoiseVariance0: noise}
		kern, ctx := p.setup(p.s)
		out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, h, x, mask *Node) []*Node {
			post := gp.NewPosterior(ctx, h.Graph(), in, kern)
			per := post.Predict(h, true)
			sum := post.Predict(h, false)
			return []*Node{per.Mean, per.Var, sum.VarSum, post.KL(), lik.ExpectedLogLik(ctx, post, x, mask, h)}
		}, p.h, p.x, p.mask)
		var wantVarSum []float64
		for _, r := range vr {
			s := 0.0
			for _, v := range r {
				s += v
			}
			wantVarSum = append(wantVarSum, s)
		}
		checks := []struct {
			name      string
			got, want []float64
		}{
			{"mean", vars.Flat64(out[0]), testutil.FlattenRows(mean)},
			{"var", vars.Flat64(out[1]), testutil.FlattenRows(vr)},
			{"summed var", vars.Flat64(out[2]), wantVarSum},
			{"KL", vars.Flat64(out[3]), []float64{kl}},
			{"masked ELL", vars.Flat64(out[4]), ell},
		}
		for _, c := range checks {
			if d := testutil.MaxAbsDiff(c.got, c.want); !(d < 1e-9) {
				t.Errorf("whitened=%v %s: max diff %g\n got  %v\n want %v", whitened, c.name, d, c.got, c.want)
			}
		}
		if e := vars.Flat64(out[4]); e[2] != 0 {
			t.Errorf("a fully masked point has expected log-likelihood %g, want 0", e[2])
		}
	}
}

// TestUnmaskedELLMatchesAllOnesMask: the summed-variance path (mask nil) equals the masked path
// with every entry observed.
func TestUnmaskedELLMatchesAllOnesMask(t *testing.T) {
	p := newProblem(4)
	ones := make([][]float64, nTest)
	for i := range ones {
		ones[i] = []float64{1, 1, 1}
	}
	in := &gp.Inducing{M: mTest, D: dTest, Q: qTest, Whitened: true, Z0: p.z}
	lik := &gp.Gaussian{NoiseVariance0: noise}
	kern, ctx := p.setup(p.s)
	out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, h, x, mask *Node) []*Node {
		post := gp.NewPosterior(ctx, h.Graph(), in, kern)
		return []*Node{lik.ExpectedLogLik(ctx, post, x, nil, h), lik.ExpectedLogLik(ctx, post, x, mask, h)}
	}, p.h, p.x, ones)
	if d := testutil.MaxAbsDiff(vars.Flat64(out[0]), vars.Flat64(out[1])); d > 1e-10 {
		t.Errorf("unmasked and all-observed ELL differ by %g", d)
	}
}

// TestSharedSqrtEqualsRepeatedS: one shared S gives the same marginals, KL and masked ELL as D
// copies of it, whitened and unwhitened.
func TestSharedSqrtEqualsRepeatedS(t *testing.T) {
	p := newProblem(5)
	for d := range p.s {
		p.s[d] = p.s[0]
	}
	lik := &gp.Gaussian{NoiseVariance0: noise}
	eval := func(shared, whitened bool) [][]float64 {
		in := &gp.Inducing{M: mTest, D: dTest, Q: qTest, Whitened: whitened, Z0: p.z, UnwhitenedScale: 1, SharedSqrt: shared}
		qSqrt := p.s
		if shared {
			qSqrt = p.s[:1]
		}
		kern, ctx := p.setup(qSqrt)
		out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, h, x, mask *Node) []*Node {
			post := gp.NewPosterior(ctx, h.Graph(), in, kern)
			per := post.Predict(h, true)
			sum := post.Predict(h, false)
			return []*Node{per.Var, sum.VarSum, post.KL(), lik.ExpectedLogLik(ctx, post, x, mask, h),
				lik.ExpectedLogLik(ctx, post, x, nil, h)}
		}, p.h, p.x, p.mask)
		var res [][]float64
		for _, o := range out {
			res = append(res, vars.Flat64(o))
		}
		return res
	}
	for _, whitened := range []bool{true, false} {
		a, b := eval(false, whitened), eval(true, whitened)
		for i := range a {
			if d := testutil.MaxAbsDiff(a[i], b[i]); !(d < 1e-10) {
				t.Errorf("whitened=%v output %d: shared S differs from repeated S by %g", whitened, i, d)
			}
		}
	}
}

// TestMeanBias: a constant mean function b shifts the predictive means by b and leaves the
// variances alone; the masked ELL equals the zero-mean one on data shifted by -b.
func TestMeanBias(t *testing.T) {
	p := newProblem(6)
	bias := []float64{0.5, -1.25, 2}
	shifted := make([][]float64, len(p.x))
	for i := range p.x {
		shifted[i] = make([]float64, dTest)
		for j := range p.x[i] {
			shifted[i][j] = p.x[i][j] - bias[j]
		}
	}
	lik := &gp.Gaussian{NoiseVariance0: noise}
	eval := func(b0 []float64, x [][]float64) [][]float64 {
		in := &gp.Inducing{M: mTest, D: dTest, Q: qTest, Whitened: true, Z0: p.z, Bias0: b0}
		kern, ctx := p.setup(p.s)
		out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, h, x, mask *Node) []*Node {
			post := gp.NewPosterior(ctx, h.Graph(), in, kern)
			per := post.Predict(h, true)
			return []*Node{per.Mean, per.Var, lik.ExpectedLogLik(ctx, post, x, mask, h)}
		}, p.h, x, p.mask)
		return [][]float64{vars.Flat64(out[0]), vars.Flat64(out[1]), vars.Flat64(out[2])}
	}
	with, without := eval(bias, p.x), eval(nil, shifted)
	for i, v := range with[0] {
		if math.Abs(v-without[0][i]-bias[i%dTest]) > 1e-12 {
			t.Fatalf("mean %d: %g, want %g + %g", i, v, without[0][i], bias[i%dTest])
		}
	}
	if testutil.MaxAbsDiff(with[1], without[1]) > 1e-12 || testutil.MaxAbsDiff(with[2], without[2]) > 1e-10 {
		t.Errorf("variances or ELL changed by the bias: %v vs %v", with[2], without[2])
	}
}

// TestSummedVarianceFloat32IllConditioned: with clustered inducing inputs (Kuu close to singular,
// held off only by the jitter) the float32 summed predictive variance stays within 1e-3 x D x the
// kernel variance of the float64 gonum reference when whitened. Unwhitened, the quantity itself is
// ill-conditioned (Kuu^-1 S S^T Kuu^-1 loses ~4% in float32 whichever way it is computed), so the
// summed-variance path must only be no worse than twice the per-output path's error (folding the
// terms into T Sigma T^T - D Kuu^-1 was 46 times off there, and 3.5% off when whitened).
func TestSummedVarianceFloat32IllConditioned(t *testing.T) {
	p := newProblem(5)
	for i := range p.z {
		p.z[i] = []float64{0.3 + 0.03*float64(i), -0.2 + 0.02*float64(i)}
	}
	tol := 1e-3 * dTest * kvar
	for _, whitened := range []bool{true, false} {
		_, vr, _, _ := reference(p, whitened)
		in := &gp.Inducing{M: mTest, D: dTest, Q: qTest, Whitened: whitened, Z0: p.z, UnwhitenedScale: 1}
		kern, _ := kernels.New("se", kernels.Config{Q: qTest, Variance: kvar, Lengthscale: lscale})
		ctx := mlmodel.NewStore().RootScope()
		if err := vars.SetDType(ctx, dtypes.Float32); err != nil {
			t.Fatal(err)
		}
		ctx.At("inducing").VariableWithValue("q_mu", vars.Convert(tensors.FromValue(p.mu), dtypes.Float32))
		ctx.At("inducing").VariableWithValue("q_sqrt", vars.Convert(tensors.FromValue(p.s), dtypes.Float32))
		h := vars.Convert(tensors.FromValue(p.h), dtypes.Float32)
		out := mlmodel.MustExecOnceN(testutil.Backend(), ctx.Store(), func(ctx *mlmodel.Scope, h *Node) []*Node {
			post := gp.NewPosterior(ctx, h.Graph(), in, kern)
			return []*Node{post.Predict(h, false).VarSum, post.Predict(h, true).VarSum}
		}, h)
		summed, perOutput := vars.Flat64(out[0]), vars.Flat64(out[1])
		for n, r := range vr {
			want := 0.0
			for _, v := range r {
				want += v
			}
			errSummed, errPer := math.Abs(summed[n]-want), math.Abs(perOutput[n]-want)
			if whitened && !(errSummed < tol && errPer < tol) {
				t.Errorf("whitened: point %d summed variance %g (summed path), %g (per output), want %g", n, summed[n], perOutput[n], want)
			}
			if !whitened && !(errSummed <= 2*errPer+tol) {
				t.Errorf("unwhitened: point %d summed-path error %g exceeds twice the per-output error %g", n, errSummed, errPer)
			}
		}
	}
}
