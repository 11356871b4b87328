package experiment

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/vaisgplvm/vaisgplvm/data"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// OpenBackend opens the backend for a model of configuration cfg (its DType), e.g. on a backend
// spec of the caller's choice (backend.OpenShared).
type OpenBackend func(cfg model.Config) (backends.Backend, error)

// DefaultBackend opens the default backend ($VAISGPLVM_BACKEND, then auto) for cfg's DType.
func DefaultBackend(cfg model.Config) (backends.Backend, error) {
	dtype := cfg.DType
	if dtype == "" {
		dtype = "float64"
	}
	return backend.New(backend.ForDType("", dtype))
}

// LoadCheckpoint rebuilds the trainer of a checkpoint written by Train, on the backend open
// returns for its configuration (nil: DefaultBackend), with the training data its Source records
// (reloaded and checked against its sha256; trainData, when not empty, is where that file is now),
// and loads its parameters: the trainer is ready to evaluate, infer or train on. It returns the
// trainer and the loaded data, with the scaler that maps new points to the model's units.
//
// A checkpoint that records no data source, a --train-data for a built-in dataset and a recorded
// file that is missing or has changed are errors naming the fix.
func LoadCheckpoint(path string, open OpenBackend, trainData string) (*train.Trainer, *Data, error) {
	cfg, tag, err := train.ReadCheckpointInfo(path)
	if err != nil {
		return nil, nil, err
	}
	if tag == "" {
		return nil, nil, fmt.Errorf("checkpoint %s does not record its training data (written by an older version)", path)
	}
	src, err := ParseSource(tag)
	if err != nil {
		return nil, nil, err
	}
	if src.File == "" && !slices.Contains(data.Names(), src.Dataset) {
		return nil, nil, fmt.Errorf("checkpoint %s records its training data as the dataset %s, which this vaisgplvm does not have: the checkpoint is damaged or from another version",
			path, clipTag(src.Dataset))
	}
	if trainData != "" {
		if src.File == "" {
			return nil, nil, option.Of("TrainData", "TrainData: %s was trained on the built-in dataset %s, not on a file", path, src.Dataset)
		}
		src.File = trainData // Load checks that its sha256 is the recorded one
	}
	if open == nil {
		open = DefaultBackend
	}
	b, err := open(cfg)
	if err != nil {
		return nil, nil, err
	}
	td, err := src.Load()
	if errors.Is(err, fs.ErrNotExist) && trainData == "" {
		return nil, nil, option.Failf([]string{"TrainData"}, "the training file %s recorded in %s is not there; if it has moved, give its new place with TrainData", src.File, path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("loading the training data of %s: %w", path, err)
	}
	tr, err := NewTrainer(cfg, td, src, b)
	if err != nil {
		return nil, nil, err
	}
	tr.DataTag = tag // the recorded source: the file may have moved (trainData)
	if err := tr.Load(path); err != nil {
		return nil, nil, MismatchError(err)
	}
	return tr, td, nil
}

// clipTag quotes a recorded name for a message, cut to 40 characters.
func clipTag(s string) string {
	if r := []rune(s); len(r) > 40 {
		return fmt.Sprintf("%q...", string(r[:40]))
	}
	return fmt.Sprintf("%q", s)
}
