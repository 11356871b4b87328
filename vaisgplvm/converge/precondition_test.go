package converge

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// groupedQuadratic returns f(x) = 0.5 sum_i a_i (x_i - 1)^2 + c sum_i a_i (x_i - 1)(x_{i+1} - 1)
// (neighbours within a group coupled by c) over groups of size coordinates, group g's curvatures
// a_i = scales[g] times a factor log-uniform in [1/2, 2], and a preconditioner with those groups.
func groupedQuadratic(scales []float64, size int, c float64, seed uint64) (Objective, []float64, *preconditioner) {
	rng := rand.New(rand.NewPCG(seed, 1))
	n := len(scales) * size
	a := make([]float64, n)
	pc := &preconditioner{probes: precondProbes, every: precondEvery, groups: len(scales), seed: seed}
	for i := range a {
		a[i] = scales[i/size] * math.Exp2(2*rng.Float64()-1)
		pc.group = append(pc.group, i/size)
	}
	coupled := func(i int) bool { return i+1 < n && (i+1)%size != 0 }
	obj := func(x, grad []float64) (float64, error) {
		f := 0.0
		for i := range x {
			grad[i] = a[i] * (x[i] - 1)
			f += 0.5 * a[i] * (x[i] - 1) * (x[i] - 1)
		}
		for i := range x {
			if coupled(i) {
				f += c * a[i] * (x[i] - 1) * (x[i+1] - 1)
				grad[i] += c * a[i] * (x[i+1] - 1)
				grad[i+1] += c * a[i] * (x[i] - 1)
			}
		}
		return f, nil
	}
	return obj, a, pc
}

// TestPreconditionerScale: on a quadratic whose curvature spans 1e-3 to 1e3 in three groups of 100
// coordinates, with neighbours coupled (off-diagonal entries 0.1 a_i), the preconditioner's scale
// is each group's mean curvature to the power -1/2 within 5% (20 probes; the estimate is exact for
// the diagonal and its error, from the couplings, about 0.4% here).
func TestPreconditionerScale(t *testing.T) {
	obj, a, pc := groupedQuadratic([]float64{1e-3, 1, 1e3}, 100, 0.1, 3)
	eval := func(x []float64) (float64, []float64) {
		g := make([]float64, len(x))
		f, _ := obj(x, g)
		return f, g
	}
	x := make([]float64, len(a))
	for i := range x {
		x[i] = 0.5
	}
	_, g0 := eval(x)
	d := pc.scale(eval, x, g0)
	for g := range 3 {
		mean := 0.0
		for i := g * 100; i < (g+1)*100; i++ {
			mean += a[i] / 100
		}
		want := 1 / math.Sqrt(mean)
		for i := g * 100; i < (g+1)*100; i++ {
			if math.Abs(d[i]/want-1) > 0.05 {
				t.Fatalf("group %d: scale %g, want %g (mean curvature %g)", g, d[i], want, mean)
			}
		}
	}
}

// TestPreconditionedLBFGS: on a quadratic whose curvature spans 1e-4 to 1e4 over five groups of 40
// coordinates, L-BFGS scaled by the preconditioner (from the first window on) reaches the minimum
// to 1e-6 within 300 iterations and says it converged; plain L-BFGS is still 1e-3 or more away
// after as many iterations.
func TestPreconditionedLBFGS(t *testing.T) {
	obj, a, pc := groupedQuadratic([]float64{1e-4, 1e-2, 1, 1e2, 1e4}, 40, 0.2, 5)
	pc.below = math.Inf(1)
	x0 := make([]float64, len(a))
	rule := Rule{Window: 5, Tol: 1e-16}
	dist := func(x []float64) float64 {
		m := 0.0
		for _, v := range x {
			m = math.Max(m, math.Abs(v-1))
		}
		return m
	}
	scaled := lbfgs(obj, x0, rule, 0, 300, nil, nil, pc)
	if !scaled.converged || dist(scaled.x) > 1e-6 || scaled.estimates == 0 {
		t.Errorf("preconditioned: converged %v (%s) after %d iterations, %d estimates, max |x - 1| %g", scaled.converged, scaled.stoppedBy, scaled.iters, scaled.estimates, dist(scaled.x))
	}
	plain := lbfgs(obj, x0, rule, 0, 300, nil, nil, nil)
	if dist(plain.x) < 1e-3 {
		t.Errorf("plain L-BFGS reached max |x - 1| %g in %d iterations: the problem does not need the preconditioner", dist(plain.x), plain.iters)
	}
	t.Logf("after at most 300 iterations: preconditioned %d iterations, max |x - 1| %.2g; plain %.2g", scaled.iters, dist(scaled.x), dist(plain.x))
}

// TestMinimizePreconditioned: Minimize with Options.Variables (one variable [40, 5], each column a
// group, curvatures 1e-4 to 1e4 from column to column, neighbouring rows coupled) reaches the
// minimum to 1e-6 within 400 iterations, preconditioned once plain L-BFGS's window rise falls below
// the switch; without Variables it is still 1e-3 or more away after as many; Variables that do not
// hold len(x0) values are an error.
func TestMinimizePreconditioned(t *testing.T) {
	const rows, cols = 40, 5
	scales := []float64{1e-4, 1e-2, 1, 1e2, 1e4}
	rng := rand.New(rand.NewPCG(7, 1))
	a := make([]float64, rows*cols)
	for i := range a {
		a[i] = scales[i%cols] * math.Exp2(2*rng.Float64()-1)
	}
	obj := func(x, grad []float64) (float64, error) {
		f := 0.0
		for i := range x {
			grad[i] = a[i] * (x[i] - 1)
			f += 0.5 * a[i] * (x[i] - 1) * (x[i] - 1)
		}
		for i := 0; i+cols < len(x); i++ { // row r and r+1 of the same column
			f += 0.2 * a[i] * (x[i] - 1) * (x[i+cols] - 1)
			grad[i] += 0.2 * a[i] * (x[i+cols] - 1)
			grad[i+cols] += 0.2 * a[i] * (x[i] - 1)
		}
		return f, nil
	}
	v := mlmodel.NewStore().RootScope().VariableWithShape("h", shapes.Make(dtypes.Float64, rows, cols))
	dist := func(x []float64) float64 {
		m := 0.0
		for _, xi := range x {
			m = math.Max(m, math.Abs(xi-1))
		}
		return m
	}
	opt := Options{Rule: Rule{Window: 5, Tol: 1e-16}, MaxIters: 400, Variables: []*mlmodel.Variable{v}, Seed: 3}
	x, res, err := Minimize(context.Background(), obj, make([]float64, len(a)), opt)
	if err != nil {
		t.Fatal(err)
	}
	if dist(x) > 1e-6 || res.Estimates == 0 {
		t.Errorf("preconditioned: max |x - 1| %g after %d iterations, %d estimates (%s)", dist(x), res.Iterations, res.Estimates, res.StoppedBy)
	}
	opt.Plain = true
	plain, pres, err := Minimize(context.Background(), obj, make([]float64, len(a)), opt)
	if err != nil {
		t.Fatal(err)
	}
	if dist(plain) < 1e-3 || pres.Estimates != 0 {
		t.Errorf("plain: max |x - 1| %g after %d iterations, %d estimates: the problem does not need the preconditioner", dist(plain), pres.Iterations, pres.Estimates)
	}
	opt.Plain = false
	if _, _, err := Minimize(context.Background(), obj, make([]float64, len(a)+1), opt); err == nil {
		t.Error("Variables of 200 values for x0 of 201: no error")
	}
	t.Logf("preconditioned: %d iterations, %d estimates, max |x - 1| %.2g; plain: %.2g after %d", res.Iterations, res.Estimates, dist(x), dist(plain), pres.Iterations)
}
