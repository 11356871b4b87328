package evidence

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// ESSGap pairs, point by point, the effective sample size of K normalised importance weights
// (Table 3's measure of how well a method's weights fit the posterior) with the gap their bound
// leaves to the point's log evidence, which is what the ESS stands for:
//
//	ESS_n = 1 / sum_s wbar_s^2,    gap_n = log Z_n - log (1/K) sum_s w_s    (nats, >= 0 in expectation)
//
// with one draw of the K weights per point and log Z_n from the evidence estimate.
type ESSGap struct {
	// Weights names the weights: "own" (the method's K chains of an annealed bound, K samples of
	// q0 for IWVI) or "q0" (K samples of the model's q0, IWVI's weights at this model).
	Weights string    `json:"weights"`
	K       int       `json:"k"`
	Points  []int     `json:"-"` // the points, in the evidence estimate's order
	ESS     []float64 `json:"-"` // per point, in [1, K]
	Gap     []float64 `json:"-"` // per point, nats
	// MeanESS and MeanGap are the means over the points, each with its standard error over them.
	MeanESS   float64 `json:"mean_ess"`
	MeanESSSE float64 `json:"mean_ess_se"`
	MeanGap   float64 `json:"mean_gap"`
	MeanGapSE float64 `json:"mean_gap_se"`
	// Kendall is Kendall's tau-a between ESS_n and gap_n over the points (gonum's stat.Kendall):
	// -1 when the points with the less degenerate weights are always the closer ones, 0 when the
	// ESS says nothing of the gap. KendallNullSD is tau's standard deviation for n independent
	// points, sqrt(2 (2n + 5) / (9 n (n - 1))): a tau within two of it is no evidence of a relation.
	Kendall       float64 `json:"kendall_tau"`
	KendallNullSD float64 `json:"kendall_tau_null_sd"`
	// GapByESSQuartile is the mean gap of each quarter of the points ranked by ESS, lowest first.
	GapByESSQuartile [4]float64 `json:"gap_by_ess_quartile"`
}

// MinESSPoints is the fewest points PairESS pairs (four quartiles of at least two points).
const MinESSPoints = 8

// PairESS draws k weights per point (noise from seed) for the points of the evidence estimate ev
// at tr's parameters and returns their ESSGap: first the trained bound's own weights (omitted
// for MF, which has none, and for IWVI, whose own weights are q0's), then k samples of q0. Errors: k < 2, fewer than MinESSPoints points,
// an estimate of another model's points, a failed evaluation.
func PairESS(tr *train.Trainer, ev *Result, k int, seed uint64) ([]ESSGap, error) {
	if err := tr.Ready(); err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	if ev == nil {
		return nil, fmt.Errorf("evidence: pairing ESS with the gap needs an evidence estimate, not nil (Estimate)")
	}
	if k < 2 {
		return nil, fmt.Errorf("evidence: pairing ESS with the gap needs k >= 2 weights per point, not %d", k)
	}
	if len(ev.Points) < MinESSPoints || len(ev.LogZ) != len(ev.Points) || ev.N != tr.Model.N {
		return nil, fmt.Errorf("evidence: pairing ESS with the gap needs an estimate of >= %d of this model's points (have %d of a model of %d)",
			MinESSPoints, len(ev.Points), ev.N)
	}
	var out []ESSGap
	m := tr.Model
	if _, ok := m.Method.Particles(bounds.Sizes{K: m.Cfg.K, Samples: m.Cfg.Samples}, k); ok && m.Cfg.Method != "iwvi" {
		w, err := eval.Weights(tr, ev.Points, k, seed)
		if err != nil {
			return nil, fmt.Errorf("evidence: %w", err)
		}
		out = append(out, pair("own", k, ev, w))
	}
	q0, err := withBound(tr, "iwvi", k)
	if err != nil {
		return nil, err
	}
	w, err := eval.Weights(q0, ev.Points, k, seed)
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	return append(out, pair("q0", k, ev, w)), nil
}

// pair builds the ESSGap of weights w (of ev's points, in order).
func pair(name string, k int, ev *Result, w *eval.WeightStats) ESSGap {
	n := len(ev.Points)
	g := ESSGap{Weights: name, K: k, Points: ev.Points, ESS: w.PerPointESS, Gap: make([]float64, n)}
	for i := range g.Gap {
		g.Gap[i] = ev.LogZ[i] - w.PerPointBound[i]
	}
	g.MeanESS, g.MeanESSSE = metrics.MeanSE(g.ESS)
	g.MeanGap, g.MeanGapSE = metrics.MeanSE(g.Gap)
	g.Kendall = stat.Kendall(g.ESS, g.Gap, nil)
	g.KendallNullSD = math.Sqrt(2 * float64(2*n+5) / float64(9*n*(n-1)))
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return g.ESS[order[a]] < g.ESS[order[b]] })
	for q := range g.GapByESSQuartile {
		lo, hi := q*n/4, (q+1)*n/4
		for _, i := range order[lo:hi] {
			g.GapByESSQuartile[q] += g.Gap[i] / float64(hi-lo)
		}
	}
	return g
}
