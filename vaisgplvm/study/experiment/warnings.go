package experiment

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/vaisgplvm/vaisgplvm/data"
)

// TrainWarnings returns what looks wrong with a run that ended without error: a bound that ended
// worse than it started (mean of the last 5% of the curve, at least 1 and at most 50 iterations,
// above the mean of the first 5 by more than 0.5 nats + 10%), or an annealed chain whose every
// transition accepts fewer than 1% of its Langevin moves (chain may be nil).
func TrainWarnings(curve []float64, chain *ChainReport) []string {
	var w []string
	if n := len(curve); n >= 10 {
		first := stat.Mean(curve[:5], nil)
		last := stat.Mean(curve[n-min(50, max(1, n/20)):], nil)
		if last > first+0.5+0.1*math.Abs(first) {
			w = append(w, fmt.Sprintf("-ELBO per point rose from %.4g (first iterations) to %.4g (last): the run diverged; "+
				"lower the learning rate --lr, or set --clip-grad 5", first, last))
		}
	}
	if chain != nil && len(chain.Accept) > 0 {
		top := 0.0
		for _, a := range chain.Accept {
			top = max(top, a)
		}
		if top < 0.01 {
			w = append(w, fmt.Sprintf("the annealed chain accepts almost none of its Langevin moves (at most %.2g per transition): "+
				"its step size eta is far too large; keep --adapt-eta (the default) or lower --eta", top))
		}
	}
	return w
}

// DataWarnings returns what makes data x [N, D] (NaN = missing) a poor training set as it is:
// every row the same, or values so large or so small that the kernel and noise scales cannot
// follow them unless the data is standardised.
func DataWarnings(x [][]float64, standardized bool) []string {
	var w []string
	identical := true
	maxAbs, maxSD := 0.0, 0.0
	for j := range x[0] {
		var col []float64
		for i := range x {
			if v := x[i][j]; !math.IsNaN(v) {
				if len(col) > 0 && v != col[0] {
					identical = false
				}
				col = append(col, v)
				maxAbs = max(maxAbs, math.Abs(v))
			}
		}
		_, sd := data.MeanStdDev(col)
		maxSD = max(maxSD, sd)
	}
	if len(x) > 1 && identical {
		w = append(w, "every data row is the same (no column varies): there is nothing to model")
	} else if !standardized && (maxAbs > 1e6 || maxSD < 1e-6) {
		w = append(w, fmt.Sprintf("the data's scale is extreme (largest |value| %.3g, largest column standard deviation %.3g): "+
			"standardise it with --standardize", maxAbs, maxSD))
	}
	return w
}
