// Package eval evaluates a trained model (a train.Trainer at its current parameters): the bound
// and reconstruction metrics on every point (Evaluate: -ELBO per point with its Monte Carlo
// standard error, MSE, NELL, 1-NN error, the latents), each point's bound (NewPointBounds), the
// importance weights and their ESS (Weights, NewESSBreakdown: the definitions Table 3 may use),
// hidden entries scored under the model's predictive (ScoreMissing) and under the exact GP
// conditional on the complete rows (NewExact, CompleteExact, ScoreMissingExact, ExactMeans,
// ValidateExactNoise). Package train fits; this package reads what it fitted, and changes nothing.
package eval
