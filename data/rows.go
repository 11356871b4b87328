package data

import "slices"

// Rows returns copies of the rows idx of x [N, D], in the order of idx: [len(idx), D]. An index
// outside [0, N) panics, as x[i] does.
func Rows(x [][]float64, idx []int) [][]float64 {
	out := make([][]float64, len(idx))
	for i, j := range idx {
		out[i] = slices.Clone(x[j])
	}
	return out
}
