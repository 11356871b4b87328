package eval

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// refitEvaluations bounds the marginal-likelihood evaluations of a refit.
const refitEvaluations = 80

// refit sets ex's LengthscaleFactor c, VarianceFactor a and Noise a r to the maximum of the exact
// log marginal likelihood of y = X_S - b at H_S, S a random subset of o.FitRows conditioning rows
// (y [|C|, D] holds every conditioning row):
//
//	log p(Y | H_S) = -(nD/2) log 2 pi - (D/2) log|a (K_c + r I)| - tr(Y^T (K_c + r I)^-1 Y) / (2a),
//
// K_c the trained kernel matrix with lengthscales times c. The variance factor is profiled out,
// a = tr(Y^T (K_c + r I)^-1 Y) / (nD), and Nelder-Mead searches (log c, log r) from the trained
// values (c = 1, r = trained noise / kernel variance).
func (ex *Exact) refit(y *mat.Dense, o ExactOptions) error {
	rows := o.FitRows
	if rows == 0 {
		rows = DefaultExactFitRows
	}
	seed := o.Seed
	if seed == 0 {
		seed = 1
	}
	hs, ys := ex.hc, y
	if n, d := y.Dims(); rows < n {
		pick := rand.New(rand.NewPCG(seed, 0x5eed)).Perm(n)[:rows]
		hs, ys = make([][]float64, rows), mat.NewDense(rows, d, nil)
		for i, r := range pick {
			hs[i] = ex.hc[r]
			ys.SetRow(i, y.RawRowView(r))
		}
	}
	_, kdiag, _, _, err := ex.kernels(hs[:1], hs[:1], 1)
	if err != nil {
		return err
	}
	kvar := kdiag[0]
	if !(kvar > 0) {
		return fmt.Errorf("exact predictive: refit: kernel variance %g at the first row, want > 0", kvar)
	}
	n := float64(len(hs))
	// -log p(Y | H_S) / (nD) at the profiled variance a
	negLogLik := func(a, logDet float64) float64 { return 0.5*(math.Log(2*math.Pi)+math.Log(a)+1) + 0.5*logDet/n }
	objective := func(p []float64) float64 {
		a, logDet, err := ex.profile(hs, ys, math.Exp(p[0]), math.Exp(p[1]))
		if err != nil || !(a > 0) {
			return math.Inf(1)
		}
		return negLogLik(a, logDet)
	}
	x0 := []float64{0, math.Log(ex.Noise / kvar)}
	start := objective(x0)
	if math.IsInf(start, 1) {
		return fmt.Errorf("exact predictive: refit: no finite marginal likelihood at the trained hyperparameters (%d rows)", len(hs))
	}
	res, err := optimize.Minimize(optimize.Problem{Func: objective}, x0,
		&optimize.Settings{FuncEvaluations: refitEvaluations, Converger: &optimize.FunctionConverge{Absolute: 1e-6, Iterations: 10}},
		&optimize.NelderMead{SimplexSize: 0.5})
	if err != nil && res == nil {
		return fmt.Errorf("exact predictive: refit: %w", err)
	}
	best := res.X
	if !(res.F <= start) { // keep the trained values unless the likelihood rose
		best = x0
	}
	c, r := math.Exp(best[0]), math.Exp(best[1])
	a, logDet, err := ex.profile(hs, ys, c, r)
	if err != nil {
		return err
	}
	ex.LengthscaleFactor, ex.VarianceFactor, ex.Noise = c, a, a*r
	ex.Refitted, ex.FitRows, ex.NegLogLik = true, len(hs), negLogLik(a, logDet)
	return nil
}

// profile returns the profiled variance factor a = tr(Y^T (K_c + r I)^-1 Y) / (nD) and
// log|K_c + r I| at lengthscale factor c and ratio r.
func (ex *Exact) profile(h [][]float64, y *mat.Dense, c, r float64) (float64, float64, error) {
	chol, alpha, err := ex.factorise(h, y, c, r)
	if err != nil {
		return 0, 0, err
	}
	var prod mat.Dense
	prod.MulElem(y, alpha)
	n, d := y.Dims()
	return mat.Sum(&prod) / float64(n*d), chol.LogDet(), nil
}
