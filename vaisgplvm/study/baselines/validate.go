package baselines

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// PPCAQs are the numbers of components that PPCAValidated chooses from by default (those below
// min(N, D) are tried).
var PPCAQs = []int{1, 2, 3, 5, 8, 12, 20, 30, 50, 80}

// PPCAChoice is the q that PPCAValidated chose, the validation MSE of every q tried, and the noise
// variance of the PPCA fitted with it.
type PPCAChoice struct {
	Q      int       `json:"q"`
	Qs     []int     `json:"qs"`
	ValMSE []float64 `json:"validation_mse"`
	Rows   int       `json:"validation_rows"`
	Noise  float64   `json:"noise_variance"`
}

// PPCAValidated fits PPCA (FitPPCA) to x [N, D] with mask [N, D] (1 observed, 0 missing; nil: all
// observed) with the number of components q chosen as KNNValidated chooses k: a share of the fully
// observed rows (drawn with seed) lose entries at the data's own rate, a PPCA with each q of qs
// (those below min(N, D)) is fitted by EM without them and imputes them, and the q of the lowest
// MSE on them wins (ties: the smaller q); then PPCA with that q is fitted to x and mask. The noise
// variance is each fit's maximum-likelihood value given q (EM), so validating q validates the
// noise the imputations' NELL uses. Errors: those of FitPPCA, no q of qs below min(N, D), a share
// outside (0, 1), or no fully observed row to validate on.
func PPCAValidated(x, mask [][]float64, qs []int, share float64, seed uint64, opt PPCAOptions) (*PPCA, *PPCAChoice, error) {
	if err := sameShape(x, mask, x, mask); err != nil {
		return nil, nil, err
	}
	limit := min(len(x), len(x[0]))
	var try []int
	for _, q := range qs {
		if q >= 1 && q < limit {
			try = append(try, q)
		}
	}
	if len(try) == 0 || !(share > 0 && share < 1) {
		return nil, nil, fmt.Errorf("baselines: PPCAValidated with qs %v and share %g on %d x %d data: want some q in 1..%d and a share in (0, 1)",
			qs, share, len(x), len(x[0]), limit-1)
	}
	vmask, val, hidden, err := validationMask(x, mask, share, seed, 0x70706361)
	if err != nil {
		return nil, nil, fmt.Errorf("baselines: PPCAValidated: %w", err)
	}
	choice := &PPCAChoice{Qs: try, Rows: len(val)}
	best := math.Inf(1)
	for _, q := range try {
		p, err := FitPPCA(x, vmask, q, opt)
		if err != nil {
			return nil, nil, fmt.Errorf("baselines: PPCAValidated, q %d: %w", q, err)
		}
		imp, _, err := p.Impute(x, vmask, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("baselines: PPCAValidated, q %d: %w", q, err)
		}
		ss := 0.0
		for _, i := range val {
			for j := range x[i] {
				if vmask[i][j] == 0 {
					ss += (imp[i][j] - x[i][j]) * (imp[i][j] - x[i][j])
				}
			}
		}
		mse := ss / float64(max(hidden, 1))
		choice.ValMSE = append(choice.ValMSE, mse)
		if mse < best {
			best, choice.Q = mse, q
		}
	}
	p, err := FitPPCA(x, mask, choice.Q, opt)
	if err != nil {
		return nil, nil, err
	}
	choice.Noise = p.Noise
	return p, choice, nil
}

// validationMask returns a copy of mask [N, D] (nil: all observed) in which a share of the fully
// observed rows (val, drawn with seed and stream) lose each entry with the probability that an
// entry of a row with missing entries is missing (0.5 when no row has one), never a whole row,
// and the number of entries hidden. Errors: no fully observed row.
func validationMask(x, mask [][]float64, share float64, seed, stream uint64) (vmask [][]float64, val []int, hidden int, err error) {
	var full []int
	missing, damagedEntries := 0, 0
	for i := range x {
		m := 0
		for j := range x[i] {
			if !observed(mask, i, j) {
				m++
			}
		}
		if m == 0 {
			full = append(full, i)
		} else {
			missing, damagedEntries = missing+m, damagedEntries+len(x[i])
		}
	}
	if len(full) == 0 {
		return nil, nil, 0, fmt.Errorf("no fully observed row to validate on")
	}
	p := 0.5
	if damagedEntries > 0 {
		p = float64(missing) / float64(damagedEntries)
	}
	rng := rand.New(rand.NewPCG(seed, stream))
	rng.Shuffle(len(full), func(a, b int) { full[a], full[b] = full[b], full[a] })
	val = full[:max(1, int(math.Round(share*float64(len(full)))))]
	vmask = make([][]float64, len(x))
	for i := range x {
		if mask == nil {
			vmask[i] = make([]float64, len(x[i]))
			for j := range vmask[i] {
				vmask[i][j] = 1
			}
		} else {
			vmask[i] = slices.Clone(mask[i])
		}
	}
	for _, i := range val {
		for j := range vmask[i] {
			if rng.Float64() < p {
				vmask[i][j], hidden = 0, hidden+1
			}
		}
		if !slices.Contains(vmask[i], 1) {
			vmask[i][0] = 1
			hidden--
		}
	}
	return vmask, val, hidden, nil
}
