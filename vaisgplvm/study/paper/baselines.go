package paper

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/data"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/baselines"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
)

// Baseline is one line of a table's simple baselines (package baselines), beside the GPLVMs: PCA
// and the data space itself in Table 1 (1-NN error; PCA's reconstruction MSE), column-mean and
// k-NN imputation of the hidden entries in Tables 2 and 5 (MSE in the table's units). Pairs are
// mean and 2 s.e. over the runs (the hidden entries depend on the seed); nil where it does not
// apply.
type Baseline struct {
	Dataset    string      `json:"dataset"`
	Method     string      `json:"method"`
	Runs       int         `json:"runs"`
	MSE        *[2]float64 `json:"mse,omitempty"`
	OneNNError *[2]float64 `json:"one_nn_error,omitempty"`
	// NELL of the hidden pixels in nats per damaged image, as the GPLVMs' (PPCA only).
	NELL *[2]float64 `json:"nell_per_point,omitempty"`
	// MSERuns and NELLRuns are each seed's values (seed r at index r-1), for differences paired
	// with the GPLVMs' runs of the same hidden pixels (imputation baselines only).
	MSERuns  []float64 `json:"mse_per_run,omitempty"`
	NELLRuns []float64 `json:"nell_per_run,omitempty"`
}

// latentBaselines returns Table 1's baselines on x [N, D] (mask nil or 0 at missing entries) with
// labels (nil: no 1-NN errors): the data space's 1-NN error, and PCA with 2 and with q components
// (1-NN error of the scores, reconstruction MSE over the observed entries; missing entries are
// mean-imputed first). PCA with as many components as columns reconstructs exactly (MSE 0) and
// is the data space again, so only PCA with fewer components than D is listed.
func latentBaselines(dataset string, x, mask [][]float64, labels []int, q int) ([]Baseline, error) {
	full, err := baselines.MeanImpute(x, mask, x, mask)
	if err != nil {
		return nil, err
	}
	space := Baseline{Dataset: dataset, Method: "data space", Runs: 1}
	if labels != nil {
		space.OneNNError = oneValue(metrics.OneNNError(full, labels))
	}
	out := []Baseline{space}
	for _, c := range []int{2, q} {
		if c >= len(x[0]) || c > len(x) || (c == q && q == 2) {
			continue
		}
		scores, recon, err := baselines.PCA(full, c)
		if err != nil {
			return nil, err
		}
		e, err := metrics.MSE(x, recon, mask)
		if err != nil {
			return nil, err
		}
		mse := [2]float64{e, 0}
		pca := Baseline{Dataset: dataset, Method: fmt.Sprintf("PCA (%d components)", c), Runs: 1, MSE: &mse}
		if labels != nil {
			pca.OneNNError = oneValue(metrics.OneNNError(scores, labels))
		}
		out = append(out, pca)
	}
	return out, nil
}

// imputationMSE returns the MSE over the hidden entries (mask 0) of truth [N, D] of column-mean
// and KNN-neighbour imputation from the reference rows ref (self: ref is the data itself, each row
// not its own neighbour).
func imputationMSE(truth, hidden, mask, ref, refMask [][]float64, self bool) (mean, knn float64, err error) {
	m, err := baselines.MeanImpute(hidden, mask, ref, refMask)
	if err != nil {
		return 0, 0, err
	}
	k, err := baselines.KNNImpute(hidden, mask, ref, refMask, protocol.KNN, self)
	if err != nil {
		return 0, 0, err
	}
	inv := data.InvertMask(mask)
	if mean, err = metrics.MSE(truth, m, inv); err != nil {
		return 0, 0, err
	}
	knn, err = metrics.MSE(truth, k, inv)
	return mean, knn, err
}

// imputationRows summarises per-run imputation MSEs of one dataset as two Baseline lines.
func imputationRows(dataset string, mean, knn []float64) []Baseline {
	m, k := meanTwoSE(mean), meanTwoSE(knn)
	return []Baseline{
		{Dataset: dataset, Method: "column-mean imputation", Runs: len(mean), MSE: &m, MSERuns: mean},
		{Dataset: dataset, Method: fmt.Sprintf("%d-NN imputation", protocol.KNN), Runs: len(knn), MSE: &k, MSERuns: knn},
	}
}

// strongRows summarises per-run scores of k-NN with k validated per run (chosen: val.ks), of PPCA
// with q components (MSE and NELL) and, when it was scored, of PPCA with q validated per run
// (chosen: vppca.ks) as Baseline lines.
func strongRows(dataset string, val, ppca, vppca imputed, q int) []Baseline {
	v, pm, pn := meanTwoSE(val.mse), meanTwoSE(ppca.mse), meanTwoSE(ppca.nell)
	out := []Baseline{
		{Dataset: dataset, Method: fmt.Sprintf("k-NN imputation, k validated per seed (chosen: %s)", chosen(val.ks)), Runs: len(val.mse), MSE: &v, MSERuns: val.mse},
		{Dataset: dataset, Method: fmt.Sprintf("PPCA imputation (q = %d, EM with missing entries)", q), Runs: len(ppca.mse), MSE: &pm, NELL: &pn,
			MSERuns: ppca.mse, NELLRuns: ppca.nell},
	}
	if len(vppca.mse) > 0 {
		vm, vn := meanTwoSE(vppca.mse), meanTwoSE(vppca.nell)
		out = append(out, Baseline{Dataset: dataset, Method: fmt.Sprintf("PPCA imputation, q validated per seed (chosen: %s)", chosen(vppca.ks)),
			Runs: len(vppca.mse), MSE: &vm, NELL: &vn, MSERuns: vppca.mse, NELLRuns: vppca.nell})
	}
	return out
}

// chosen lists the choices made per seed, comma-separated.
func chosen(ks []int) string {
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ks)), ", "), "[]")
}

// imputed collects one imputation baseline's per-run scores (ks: a validated baseline's choices).
type imputed struct {
	mse, nell []float64
	ks        []int
}

// heldOutImputation adds run seed's scores of the held-out rows' hidden entries (split s) to val
// (k-NN over the training rows, k chosen on a tenth of the training rows with half their entries
// hidden: KNNValidated's damage rate for fully observed data), ppca (q components fitted on the
// training rows) and, when vppca is not nil, vppca (q validated as k is: PPCAValidated); nothing
// when q is 0.
func heldOutImputation(s protocol.Split, q int, seed uint64, val, ppca, vppca *imputed) error {
	if q == 0 {
		return nil
	}
	inv := data.InvertMask(s.Mask)
	_, c, err := baselines.KNNValidated(s.Train, nil, baselines.KNNKs, baselines.ValidationShare, seed)
	if err != nil {
		return err
	}
	imp, err := baselines.KNNImpute(s.Hidden, s.Mask, s.Train, nil, c.K, false)
	if err != nil {
		return err
	}
	v, err := metrics.MSE(s.Test, imp, inv)
	if err != nil {
		return err
	}
	val.mse, val.ks = append(val.mse, v), append(val.ks, c.K)
	p, err := baselines.FitPPCA(s.Train, nil, min(q, len(s.Train[0])-1), baselines.PPCAOptions{})
	if err != nil {
		return err
	}
	if err := scorePPCA(p, s.Hidden, s.Mask, s.Test, 0, ppca); err != nil || vppca == nil {
		return err
	}
	vp, vc, err := baselines.PPCAValidated(s.Train, nil, baselines.PPCAQs, baselines.ValidationShare, seed, baselines.PPCAOptions{})
	if err != nil {
		return err
	}
	return scorePPCA(vp, s.Hidden, s.Mask, s.Test, vc.Q, vppca)
}

// strongImputation adds run seed's validated k-NN and PPCA (q components) scores of the hidden
// entries (mask 0 in hidden) against truth to val and ppca.
func strongImputation(truth, hidden, mask [][]float64, q int, seed uint64, val, ppca *imputed) error {
	inv := data.InvertMask(mask)
	imp, c, err := baselines.KNNValidated(hidden, mask, baselines.KNNKs, baselines.ValidationShare, seed)
	if err != nil {
		return err
	}
	v, err := metrics.MSE(truth, imp, inv)
	if err != nil {
		return err
	}
	val.mse, val.ks = append(val.mse, v), append(val.ks, c.K)
	p, err := baselines.FitPPCA(hidden, mask, q, baselines.PPCAOptions{})
	if err != nil {
		return err
	}
	return scorePPCA(p, hidden, mask, truth, 0, ppca)
}

// scorePPCA adds p's imputation MSE and NELL of the entries that mask hides in x against truth to
// to (and q, when not 0, to its choices).
func scorePPCA(p *baselines.PPCA, x, mask, truth [][]float64, q int, to *imputed) error {
	pi, nell, err := p.Impute(x, mask, truth)
	if err != nil {
		return err
	}
	v, err := metrics.MSE(truth, pi, data.InvertMask(mask))
	if err != nil {
		return err
	}
	to.mse, to.nell = append(to.mse, v), append(to.nell, nell)
	if q != 0 {
		to.ks = append(to.ks, q)
	}
	return nil
}

// oneValue is v as a pair with no spread, nil when v is NaN (no labels' neighbour).
func oneValue(v float64) *[2]float64 {
	if v != v {
		return nil
	}
	return &[2]float64{v, 0}
}

// baselineTable renders baselines (nil when there are none).
func baselineTable(bs []Baseline, what string) *report.Table {
	if len(bs) == 0 {
		return nil
	}
	t := &report.Table{Title: "Simple baselines, no GPLVM (package baselines): " + what,
		Header: []string{"dataset", "baseline", "MSE", "NELL", "1-NN error"}}
	for _, b := range bs {
		t.Rows = append(t.Rows, []string{b.Dataset, b.Method, pmOpt("%.4f", b.MSE, b.Runs), pmOpt("%.3f", b.NELL, b.Runs), pmOpt("%.3f", b.OneNNError, b.Runs)})
	}
	if !slices.ContainsFunc(bs, func(b Baseline) bool { return b.NELL != nil }) {
		*t = withoutColumns(*t, "NELL")
	}
	return t
}
