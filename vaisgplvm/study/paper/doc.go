// Package paper reproduces the experiments of Xu et al., "Variational Annealed Importance Sampling
// for Gaussian Process Latent Variable Models" (UAI 2025) as Go functions: Table1 (dimensionality
// reduction of oilflow and wine), Table2 (missing pixels of Frey faces and MNIST 1s and 7s), Table3
// (importance-weight ESS on the Frey task), Table5 (the standard GPLVM against VAIS on held-out
// points) and Table6 (seconds per Frey epoch against K). Table 4 lists settings: it is package
// protocol (protocol.Config, protocol.Q).
//
// Each table registers itself (Register, Spec: its datasets, methods, its options type, how
// the paper's protocol applies to it, its Run function and figures); RunTable runs one by number
// and WriteTable writes it, so a new table is one file and its registration.
//
// Each function trains the table's cells (dataset x method x seed) and returns a typed result whose
// rows carry every run's values, mean ± 2 standard errors over the seeds, and the paper's own
// printed value for the same dataset, method and iteration count (Paper* in values.go, transcribed
// from the paper's tables). Claims compares the orderings the paper reports with ours, in words.
// Results render as Markdown (Markdown), JSON (encoding/json), report.Table (Tables; HTML in a
// notebook through nb.ShowResult) and figures (WriteFigures for Tables 1-3, Result5.Figures, Result6.Figure). Every
// -ELBO carries its Monte Carlo standard error from the evaluation's noise draws.
//
// A notebook reproduces a table in a few lines:
//
//	res, err := paper.Table1(ctx, paper.Table1Options{Options: paper.Options{Iters: 300, Runs: 3}})
//	if err != nil { ... }
//	nb.ShowResult(res) // our rows beside the paper's, then its claims checked
//
// Each table has its own options type (TableOptions: Table1Options, ImageOptions for Tables 2 and
// 3, Table5Options, Table6Options), embedding Options, what every table reads, and Trainings for
// the tables made of many trainings; a table's own settings are its fields, tagged with the
// reproduce flags that set them. The zero value of each is the table's default size;
// Options.Configure adjusts every training's model.Config (M, K, the step-size rule ...) after the
// paper's protocol (protocol.Config) has set it.
//
// Scales: our -ELBO and NELL are nats per data point (per image in Tables 2 and 3); MSE is per entry
// in the data's units (raw oilflow and wine unless Options.Standardize; images on [0, 1] unless
// ImageOptions.Pixels is "raw"). The paper does not state its scales, so compare orderings and ratios.
package paper
