package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// MissingMask returns the observation mask [n, d] (1 = observed) of the paper's missing-data
// protocol (Section 5.3, App. E): a seeded choice of round(imageFrac * n) rows each lose
// round(pixelFrac * d) seeded entries. The paper uses imageFrac 0.05 and pixelFrac 0.75. It also
// returns the indices of the damaged rows, ascending.
func MissingMask(n, d int, imageFrac, pixelFrac float64, seed uint64) (mask [][]float64, damaged []int, err error) {
	if n <= 0 || d <= 0 || !(imageFrac >= 0 && imageFrac <= 1) || !(pixelFrac >= 0 && pixelFrac <= 1) {
		return nil, nil, fmt.Errorf("data: missing mask needs n, d > 0 and fractions in [0, 1]; got n=%d d=%d %g %g",
			n, d, imageFrac, pixelFrac)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d61736b))
	mask = make([][]float64, n)
	for i := range mask {
		mask[i] = make([]float64, d)
		for j := range mask[i] {
			mask[i][j] = 1
		}
	}
	nImg := int(imageFrac*float64(n) + 0.5)
	nPix := int(pixelFrac*float64(d) + 0.5)
	rows := rng.Perm(n)[:nImg]
	for _, i := range rows {
		for _, j := range rng.Perm(d)[:nPix] {
			mask[i][j] = 0
		}
	}
	return mask, DamagedRows(mask), nil
}

// DamagedRows returns the indices of the rows of mask [n, d] (1 = observed) with a missing entry
// (0), ascending; empty (not nil) when every entry is observed.
func DamagedRows(mask [][]float64) []int {
	rows := []int{}
	for i, row := range mask {
		if slices.Contains(row, 0) {
			rows = append(rows, i)
		}
	}
	return rows
}

// InvertMask returns 1 - mask [N, D]: the missing entries of mask as the observed ones of the
// result (to score predictions of the entries a mask hid, e.g. with metrics.MSE).
func InvertMask(mask [][]float64) [][]float64 {
	out := make([][]float64, len(mask))
	for i, r := range mask {
		out[i] = make([]float64, len(r))
		for j, v := range r {
			out[i][j] = 1 - v
		}
	}
	return out
}
