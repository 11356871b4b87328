// Package experiment runs what the command and the notebooks run, as library calls: a training of
// one configuration on a data source written into a run directory (Train: checkpoint, curve,
// latents, reconstruction, figures and metrics.json), a checkpoint loaded back into a ready trainer
// with the data it was trained on (LoadCheckpoint), new points inferred under it (Infer), the
// evidence of a checkpoint and its bounds' gaps (Evidence), and training steps timed (Bench).
//
// A data Source names what a model trains on (a built-in dataset, or your own delimited file with
// its sha256) and is recorded in the checkpoint, so that a checkpoint alone rebuilds its model.
// Loaded data (Data) carries the scaler that standardised it and its inverse.
//
// Errors a caller can fix by changing an option are *option.Error, naming the option by its Go
// name (the command maps it to its flag and exits 2 on them); the others are failures of the run.
package experiment
