package experiment

import (
	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/baselines"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
)

// ImputationBaselines are the scores of the simple imputations of the entries a model never saw,
// to put beside its own (eval.MissingScores): MSE per hidden entry, NELL per damaged row.
type ImputationBaselines struct {
	ColumnMeanMSE float64 `json:"column_mean_mse"`
	KNNMSE        float64 `json:"knn_mse"` // protocol.KNN nearest rows
	KNN           int     `json:"knn_k"`
	// ValidatedKNNMSE is k-NN with k chosen on a validation share of the fully observed rows
	// (baselines.KNNValidated; its choice in ValidatedKNN).
	ValidatedKNNMSE float64              `json:"validated_knn_mse"`
	ValidatedKNN    *baselines.KNNChoice `json:"validated_knn"`
	PPCAMSE         float64              `json:"ppca_mse"`  // PPCA with PPCAQ components, EM with the missing entries
	PPCANELL        float64              `json:"ppca_nell"` // its NELL, as the GPLVMs' (baselines.PPCA.Impute)
	PPCAQ           int                  `json:"ppca_q"`
	// ValidatedPPCAMSE and ValidatedPPCANELL are PPCA's with q chosen on a validation share of the
	// fully observed rows (baselines.PPCAValidated; its choice, with the noise variance, in
	// ValidatedPPCA): on request only (ImputeBaselines).
	ValidatedPPCAMSE  float64               `json:"validated_ppca_mse,omitempty"`
	ValidatedPPCANELL float64               `json:"validated_ppca_nell,omitempty"`
	ValidatedPPCA     *baselines.PPCAChoice `json:"validated_ppca,omitempty"`
}

// ImputeBaselines scores column-mean, k-NN, validated k-NN, PPCA (q components) and, with
// validatePPCA, PPCA with q validated among baselines.PPCAQs (ten EM fits: two to three minutes on Frey
// on 2 cores) imputation of
// the entries of x [N, D] that mask [N, D] hides against truth [N, D] (all in the model's units);
// seed draws the validation rows. Errors: those of the baselines (bad shapes, q out of range).
func ImputeBaselines(truth, x, mask [][]float64, q int, seed uint64, validatePPCA bool) (*ImputationBaselines, error) {
	inv := data.InvertMask(mask)
	score := func(imp [][]float64, err error) (float64, error) {
		if err != nil {
			return 0, err
		}
		return metrics.MSE(truth, imp, inv)
	}
	b := &ImputationBaselines{KNN: protocol.KNN, PPCAQ: q}
	var err error
	if b.ColumnMeanMSE, err = score(baselines.MeanImpute(x, mask, x, mask)); err != nil {
		return nil, err
	}
	if b.KNNMSE, err = score(baselines.KNNImpute(x, mask, x, mask, protocol.KNN, true)); err != nil {
		return nil, err
	}
	imp, choice, err := baselines.KNNValidated(x, mask, baselines.KNNKs, baselines.ValidationShare, seed)
	if b.ValidatedKNNMSE, err = score(imp, err); err != nil {
		return nil, err
	}
	b.ValidatedKNN = choice
	p, err := baselines.FitPPCA(x, mask, q, baselines.PPCAOptions{})
	if err != nil {
		return nil, err
	}
	pi, nell, err := p.Impute(x, mask, truth)
	if b.PPCAMSE, err = score(pi, err); err != nil {
		return nil, err
	}
	b.PPCANELL = nell
	if !validatePPCA {
		return b, nil
	}
	vp, vc, err := baselines.PPCAValidated(x, mask, baselines.PPCAQs, baselines.ValidationShare, seed, baselines.PPCAOptions{})
	if err != nil {
		return nil, err
	}
	pi, nell, err = vp.Impute(x, mask, truth)
	if b.ValidatedPPCAMSE, err = score(pi, err); err != nil {
		return nil, err
	}
	b.ValidatedPPCANELL, b.ValidatedPPCA = nell, vc
	return b, nil
}
