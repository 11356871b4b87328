package converge

import (
	"math"
	"math/rand/v2"
	"slices"

	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// preconditioner rescales L-BFGS's coordinates by the curvature of the objective, estimated
// afresh every Every iterations: L-BFGS minimises f(d ⊙ y) over y, d = |diag H|^-1/2.
//
// The collapsed bound's curvature spans orders of magnitude between groups of parameters: at a
// small noise variance the latent means of the dimensions that ARD keeps are 100 to 1000 times
// stiffer than those of the dimensions it is switching off, and L-BFGS's scalar initial Hessian
// cannot bridge that; its steps in the soft directions stay tiny and the bound creeps for
// thousands of iterations. Scaled, every group has unit curvature.
//
// The diagonal of the Hessian H is estimated by Hutchinson's probes: for Rademacher vectors z,
// E[z_i (H z)_i] = H_ii, with H z from a forward difference of the gradient (step 1e-6). The
// estimates are averaged within groups (group: each fitted variable's entries that share their
// trailing indices, e.g. the latent means of one dimension over all points), which removes most of
// the probes' noise; a group's scale is its mean |H_ii|, floored at 1e-4 of the median over the
// coordinates (a group without curvature, such as the unused upper triangle of q0's scale
// factors, has no gradient either and does not move).
type preconditioner struct {
	group  []int // group of each coordinate, 0..groups-1
	groups int
	probes int // Hutchinson probes per estimate
	every  int // L-BFGS iterations between estimates
	// below: L-BFGS starts plain and is first scaled once the bound's rise over the rule's window
	// is at most this (nats per point): far from the optimum the curvature changes faster than
	// every iterations (the noise variance falls by orders of magnitude), and an estimate from
	// the start slows the fit down.
	below float64
	seed  uint64
	n     int // estimates made (seeds each estimate's probes)
}

// Default settings of the preconditioner.
const (
	precondProbes = 20
	precondEvery  = 500
	precondBelow  = 0.02
	precondStep   = 1e-6
	precondFloor  = 1e-4
)

// newPreconditioner returns the preconditioner for the flattened variables vs (vars.Flatten's
// order): a group per entry of a scalar or vector variable, and per trailing index of a variable
// of rank 2 or more (over its leading axis: points, inducing inputs).
func newPreconditioner(vs []*mlmodel.Variable, seed uint64) *preconditioner {
	p := &preconditioner{probes: precondProbes, every: precondEvery, below: precondBelow, seed: seed}
	for _, v := range vs {
		size := v.Shape().Size()
		per := size // one group per entry
		if v.Shape().Rank() >= 2 && v.Shape().Dim(0) > 0 {
			per = size / v.Shape().Dim(0)
		}
		for i := range size {
			p.group = append(p.group, p.groups+i%per)
		}
		p.groups += per
	}
	return p
}

// scale returns d [len(x)], d_i = |mean H_jj over i's group|^-1/2, from eval (the objective and
// its gradient; g0 its gradient at x). Probes at which eval is not finite are left out; with none
// left d is all ones.
func (p *preconditioner) scale(eval func(x []float64) (float64, []float64), x, g0 []float64) []float64 {
	p.n++
	rng := rand.New(rand.NewPCG(p.seed, uint64(p.n)))
	diag := make([]float64, len(x))
	used := 0
	z, xp := make([]float64, len(x)), make([]float64, len(x))
	for range p.probes {
		for i := range z {
			z[i] = float64(2*rng.IntN(2) - 1)
			xp[i] = x[i] + precondStep*z[i]
		}
		f, g1 := eval(xp)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			continue
		}
		used++
		for i := range z {
			diag[i] += z[i] * (g1[i] - g0[i]) / precondStep
		}
	}
	d := make([]float64, len(x))
	if used == 0 {
		for i := range d {
			d[i] = 1
		}
		return d
	}
	sum, count := make([]float64, p.groups), make([]float64, p.groups)
	for i, g := range p.group {
		sum[g] += math.Abs(diag[i]) / float64(used)
		count[g]++
	}
	curv := make([]float64, len(x))
	for i, g := range p.group {
		curv[i] = sum[g] / count[g]
	}
	sorted := slices.Clone(curv)
	slices.Sort(sorted)
	floor := math.Max(sorted[len(sorted)/2]*precondFloor, math.SmallestNonzeroFloat64)
	for i, c := range curv {
		d[i] = 1 / math.Sqrt(math.Max(c, floor))
	}
	return d
}
