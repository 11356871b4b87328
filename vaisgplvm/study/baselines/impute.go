package baselines

import (
	"fmt"
	"math"
	"sort"
)

// MeanImpute returns a copy of x [N, D] whose entries with mask 0 are replaced by their column's
// mean over the observed entries of the reference rows ref [R, D] (refMask [R, D], nil: all
// observed). Errors: shapes that differ, or a column with no observed reference entry.
func MeanImpute(x, mask, ref, refMask [][]float64) ([][]float64, error) {
	if err := sameShape(x, mask, ref, refMask); err != nil {
		return nil, err
	}
	d := len(ref[0])
	mean := make([]float64, d)
	for j := 0; j < d; j++ {
		s, c := 0.0, 0
		for r := range ref {
			if observed(refMask, r, j) {
				s += ref[r][j]
				c++
			}
		}
		if c == 0 {
			return nil, fmt.Errorf("baselines: column %d has no observed reference entry to average", j)
		}
		mean[j] = s / float64(c)
	}
	return fill(x, mask, func(i, j int) (float64, error) { return mean[j], nil })
}

// KNNImpute returns a copy of x [N, D] whose entries with mask 0 are replaced by the mean of that
// entry over the k reference rows nearest to the row (KNNimpute, Troyanskaya et al. 2001). The
// distance between a row and a reference row is the mean squared difference over the entries both
// observe; reference rows that share no observed entry with the row, or do not observe the entry
// being imputed, are not candidates, and when ref is x itself (self true) a row is not its own
// neighbour. Fewer than k candidates: the mean over those there are. Errors: shapes that differ,
// k < 1, or an entry with no candidate at all.
func KNNImpute(x, mask, ref, refMask [][]float64, k int, self bool) ([][]float64, error) {
	if err := sameShape(x, mask, ref, refMask); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, fmt.Errorf("baselines: k = %d: want >= 1 neighbours", k)
	}
	var order []int // reference rows, nearest to the current row first
	current := -1   // the row order belongs to
	return fill(x, mask, func(i, j int) (float64, error) {
		if i != current {
			order, current = neighbours(x, mask, ref, refMask, i, self), i
		}
		s, c := 0.0, 0
		for _, r := range order {
			if !observed(refMask, r, j) {
				continue
			}
			s += ref[r][j]
			if c++; c == k {
				break
			}
		}
		if c == 0 {
			return 0, fmt.Errorf("baselines: row %d, column %d: no reference row observes it and shares an entry with the row", i, j)
		}
		return s / float64(c), nil
	})
}

// neighbours returns the reference rows that share an observed entry with row i of x, nearest
// first (mean squared difference over the shared entries; ties by index).
func neighbours(x, mask, ref, refMask [][]float64, i int, self bool) []int {
	type cand struct {
		r int
		d float64
	}
	var cs []cand
	for r := range ref {
		if self && r == i {
			continue
		}
		s, c := 0.0, 0
		for j := range x[i] {
			if observed(mask, i, j) && observed(refMask, r, j) {
				t := x[i][j] - ref[r][j]
				s += t * t
				c++
			}
		}
		if c > 0 {
			cs = append(cs, cand{r, s / float64(c)})
		}
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].d < cs[b].d })
	out := make([]int, len(cs))
	for n, c := range cs {
		out[n] = c.r
	}
	return out
}

// fill returns a copy of x with value(i, j) at every entry where mask is 0.
func fill(x, mask [][]float64, value func(i, j int) (float64, error)) ([][]float64, error) {
	out := make([][]float64, len(x))
	for i := range x {
		out[i] = append([]float64(nil), x[i]...)
		for j := range out[i] {
			if observed(mask, i, j) {
				continue
			}
			v, err := value(i, j)
			if err != nil {
				return nil, err
			}
			out[i][j] = v
		}
	}
	return out, nil
}

// observed reports whether entry (i, j) is observed under mask (nil: every entry is).
func observed(mask [][]float64, i, j int) bool { return mask == nil || mask[i][j] != 0 }

// sameShape checks that x, ref and the masks (when not nil) are non-empty, rectangular and have D
// columns each, and that each mask has its matrix's rows.
func sameShape(x, mask, ref, refMask [][]float64) error {
	if len(x) == 0 || len(ref) == 0 || len(x[0]) == 0 {
		return fmt.Errorf("baselines: empty data (%d rows, %d reference rows)", len(x), len(ref))
	}
	d := len(x[0])
	for _, m := range []struct {
		name string
		rows [][]float64
		want int
	}{{"x", x, len(x)}, {"mask", mask, len(x)}, {"reference", ref, len(ref)}, {"reference mask", refMask, len(ref)}} {
		if m.rows == nil && (m.name == "mask" || m.name == "reference mask") {
			continue
		}
		if len(m.rows) != m.want {
			return fmt.Errorf("baselines: %s has %d rows, want %d", m.name, len(m.rows), m.want)
		}
		for i, r := range m.rows {
			if len(r) != d {
				return fmt.Errorf("baselines: %s row %d has %d columns, want %d", m.name, i, len(r), d)
			}
		}
	}
	for i := range x {
		for j, v := range x[i] {
			if observed(mask, i, j) && (math.IsNaN(v) || math.IsInf(v, 0)) {
				return fmt.Errorf("baselines: x[%d][%d] = %g is observed but not finite", i, j, v)
			}
		}
	}
	return nil
}

// KNNKs are the k that validated k-NN imputation chooses from by default (the tables, train's
// hidden-pixel baselines), and ValidationShare the share of the fully observed rows it validates
// on.
var KNNKs = []int{1, 2, 3, 5, 8, 12, 20, 30, 50}

// ValidationShare: see KNNKs.
const ValidationShare = 0.1

// KNNChoice is the k that KNNValidated chose and the validation MSE of every k tried.
type KNNChoice struct {
	K      int       `json:"k"`
	Ks     []int     `json:"ks"`
	ValMSE []float64 `json:"validation_mse"`
	Rows   int       `json:"validation_rows"`
}

// KNNValidated imputes the missing entries (mask 0) of x [N, D] as KNNImpute with x as its own
// reference, with k chosen among ks on a validation share of the fully observed rows: each of
// those rows loses each entry with the probability that an entry of a row with missing entries is
// missing (the data's own damage; drawn with seed), those entries are imputed with each k, and the
// k of the lowest MSE on them wins (ties: the smaller k). Errors: as KNNImpute, an empty ks or a
// share outside (0, 1), or no fully observed row to validate on.
func KNNValidated(x, mask [][]float64, ks []int, share float64, seed uint64) ([][]float64, *KNNChoice, error) {
	if err := sameShape(x, mask, x, mask); err != nil {
		return nil, nil, err
	}
	if len(ks) == 0 || !(share > 0 && share < 1) {
		return nil, nil, fmt.Errorf("baselines: KNNValidated with ks %v and share %g: want some k and a share in (0, 1)", ks, share)
	}
	vmask, val, hidden, err := validationMask(x, mask, share, seed, 0x6b6e6e)
	if err != nil {
		return nil, nil, fmt.Errorf("baselines: KNNValidated: %w", err)
	}
	choice := &KNNChoice{Ks: ks, Rows: len(val)}
	ss := make([]float64, len(ks))
	for _, i := range val { // each row's neighbours once, then every k
		order := neighbours(x, vmask, x, vmask, i, true)
		for j := range x[i] {
			if vmask[i][j] != 0 {
				continue
			}
			for n, k := range ks {
				s, c := 0.0, 0
				for _, r := range order {
					if vmask[r][j] == 0 {
						continue
					}
					s += x[r][j]
					if c++; c == k {
						break
					}
				}
				if c == 0 {
					return nil, nil, fmt.Errorf("baselines: KNNValidated: row %d, column %d: no row observes it", i, j)
				}
				ss[n] += (s/float64(c) - x[i][j]) * (s/float64(c) - x[i][j])
			}
		}
	}
	best := math.Inf(1)
	for n, k := range ks {
		mse := ss[n] / float64(max(hidden, 1))
		choice.ValMSE = append(choice.ValMSE, mse)
		if mse < best {
			best, choice.K = mse, k
		}
	}
	imp, err := KNNImpute(x, mask, x, mask, choice.K, true)
	return imp, choice, err
}
