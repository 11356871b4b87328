package model

// maskRowQuantum rounds the number of masked rows of a batch up to a multiple of this, so that
// batches with a few more or fewer damaged points share one compiled graph.
const maskRowQuantum = 8

// ArrangeBatch orders the point indices of a batch for Bound and returns how many rows of the
// mask to give it. Bound takes the mask of the first r rows of its batch ([r, D]; the other rows
// are fully observed). When the projected fit pays on masked data (gp.Projected: the data has
// more dimensions than inducing points), the points with missing entries come first (the order
// is otherwise kept) and r is their number rounded up to a multiple of 8, so that only those rows
// need [D]-sized predictive means; r then differs between batches, and each distinct r compiles
// one graph. Otherwise idx is returned as is with r = B (the whole mask), or r = 0 when the model
// has no mask.
func (m *Model) ArrangeBatch(idx []int32) (ordered []int32, maskRows int) {
	b := len(idx)
	if m.Mask == nil {
		return idx, 0
	}
	var damaged, whole []int32
	for _, j := range idx {
		if hasMissing(m.Mask[j]) {
			damaged = append(damaged, j)
		} else {
			whole = append(whole, j)
		}
	}
	r := min(b, (max(len(damaged), 1)+maskRowQuantum-1)/maskRowQuantum*maskRowQuantum)
	if r >= b || !m.ProjectedFit(b, r) {
		return idx, b
	}
	return append(damaged, whole...), r
}

func hasMissing(mask []float64) bool {
	for _, v := range mask {
		if v == 0 {
			return true
		}
	}
	return false
}
