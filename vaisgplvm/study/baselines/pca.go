package baselines

import (
	"fmt"
	"github.com/vaisgplvm/vaisgplvm/data"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// PCA returns the q-dimensional principal component scores [N, q] of x [N, D] (centred by column
// means; x must have no missing entry: impute first) and the rank-q reconstruction [N, D] from
// them. Errors: q outside 1..min(N, D), or a failed decomposition.
func PCA(x [][]float64, q int) (scores, recon [][]float64, err error) {
	n, d := len(x), 0
	if n > 0 {
		d = len(x[0])
	}
	if q < 1 || q > min(n, d) {
		return nil, nil, fmt.Errorf("baselines: PCA with q = %d components of %d x %d data: want 1..%d", q, n, d, min(n, d))
	}
	if err := data.CheckMatrix(x, nil); err != nil {
		return nil, nil, fmt.Errorf("baselines: PCA: %w", err)
	}
	a := mat.NewDense(n, d, nil)
	for i, r := range x {
		a.SetRow(i, r)
	}
	var pc stat.PC
	if !pc.PrincipalComponents(a, nil) {
		return nil, nil, fmt.Errorf("baselines: PCA of %d x %d data: the decomposition failed", n, d)
	}
	var vecs mat.Dense
	pc.VectorsTo(&vecs)
	w := vecs.Slice(0, d, 0, q) // [D, q] leading directions
	mean := make([]float64, d)
	for j := range mean {
		mean[j] = stat.Mean(mat.Col(nil, j, a), nil)
	}
	centred := mat.NewDense(n, d, nil)
	centred.Apply(func(_, j int, v float64) float64 { return v - mean[j] }, a)
	var s, r mat.Dense
	s.Mul(centred, w) // [N, q]
	r.Mul(&s, w.T())  // [N, D]
	scores, recon = make([][]float64, n), make([][]float64, n)
	for i := 0; i < n; i++ {
		scores[i] = mat.Row(nil, i, &s)
		recon[i] = mat.Row(nil, i, &r)
		for j := range recon[i] {
			recon[i][j] += mean[j]
		}
	}
	return scores, recon, nil
}
