package experiment

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestImputeBaselinesValidatedPPCA: on rank-2 data with entries hidden from a tenth of the rows,
// the validated PPCA is scored only on request, and then it imputes the hidden entries far better
// than column means (the data is nearly linear) with a q it chose from the grid.
func TestImputeBaselinesValidatedPPCA(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	n, d := 200, 8
	w := [2][8]float64{{1, -0.5, 0.8, 0.3, -1, 0.6, 0.2, 0.9}, {0.4, 1, -0.7, 0.8, 0.5, -0.3, 1, 0.1}}
	truth, x, mask := make([][]float64, n), make([][]float64, n), make([][]float64, n)
	for i := range n {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		truth[i], x[i], mask[i] = make([]float64, d), make([]float64, d), make([]float64, d)
		for j := range d {
			truth[i][j] = a*w[0][j] + b*w[1][j] + 0.05*rng.NormFloat64()
			x[i][j], mask[i][j] = truth[i][j], 1
			if i%10 == 0 && j%4 == 1 {
				x[i][j], mask[i][j] = math.NaN(), 0
			}
		}
	}
	b, err := ImputeBaselines(truth, x, mask, 2, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if b.ValidatedPPCA != nil || b.ValidatedPPCAMSE != 0 {
		t.Errorf("validated PPCA %+v without being asked for", b.ValidatedPPCA)
	}
	b, err = ImputeBaselines(truth, x, mask, 2, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("column means %.4f, PPCA q 2 %.4f, validated PPCA %.4f (%+v)", b.ColumnMeanMSE, b.PPCAMSE, b.ValidatedPPCAMSE, b.ValidatedPPCA)
	if c := b.ValidatedPPCA; c == nil || c.Q < 2 || c.Q >= d || !(b.ValidatedPPCAMSE < 0.1*b.ColumnMeanMSE) || b.ValidatedPPCANELL == 0 {
		t.Errorf("validated PPCA MSE %g (column means %g), choice %+v: want a q in 2..%d (the data has rank 2) and a tenth of the column means' MSE", b.ValidatedPPCAMSE, b.ColumnMeanMSE, c, d-1)
	}
}
