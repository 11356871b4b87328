// Package baselines holds the simple methods a GPLVM has to beat to earn its cost, in float64 Go
// with gonum: column-mean and k-nearest-neighbour imputation of missing entries (MeanImpute,
// KNNImpute) and principal component latents (PCA). The paper tables report them beside the
// GPLVMs: PCA and data-space 1-NN error in Table 1, imputation of the hidden entries in Tables 2 and
// 5.
package baselines
