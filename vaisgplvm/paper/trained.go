package paper

import "github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"

// Trained is one training of Tables 1-3 that a run has just finished, as Options.OnTrained
// receives it: enough to save its checkpoint with the data it trained on recorded.
type Trained struct {
	Table           int
	Dataset, Method string
	Seed            uint64
	// Key names the training's whole identity in Options.Store (hex sha256 of its table, data,
	// method, seed, configuration and snapshots).
	Key string
	// HiddenPixels reports that the training's data is Dataset with Table 2's pixels hidden,
	// drawn with Seed (protocol.HidePixels); Pixels is the image scale ("unit" or "raw") and
	// Standardize whether the tabular columns were standardised. With Options.Data the data is
	// the caller's, not Dataset.
	HiddenPixels bool
	Pixels       string
	Standardize  bool
	// Trainer is the finished training, at its last iteration (read it, do not train it further).
	Trainer *train.Trainer
}
