package experiment

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Trained is one training a table run finished, as package paper reports it (paper.Trained has
// these fields, so experiment.Trained(t) converts one): its table, data, method and seed, Key (the
// hex sha256 of its identity in the table's store), how its data was made (Table 2's hidden
// pixels of Seed, the image scale, the tabular standardisation) and the finished Trainer.
type Trained struct {
	Table           int
	Dataset, Method string
	Seed            uint64
	Key             string
	HiddenPixels    bool
	Pixels          string
	Standardize     bool
	Trainer         *train.Trainer
}

// CheckpointTrained returns a function for paper.Observer.Trained (through a conversion to
// Trained) that saves every training a table run finishes as a checkpoint in dir (created when missing), named
// DATASET-METHOD-seedS-KEY.checkpoint.gob with the first 16 hex digits of its store key, so that
// trainings of other settings never share a file. Each checkpoint records the data its training
// saw (Source.Tag: the built-in dataset with its pixel scale, standardisation and Table 2's
// hidden pixels of that seed; own, when not nil, for a table on your own data), so LoadCheckpoint,
// evidence and infer rebuild that data. A checkpoint of the same name is replaced: it is the same
// training, trained again (reproduce --fresh); anything else at that name (a user's file, a
// directory, a link) is never replaced: the training fails, naming it. CheckCheckpointDir checks
// dir itself before a run trains anything.
func CheckpointTrained(dir string, own *Source) func(Trained) error {
	return func(t Trained) error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
		src := Source{Dataset: t.Dataset, Standardize: t.Standardize} // as paper loads it
		switch {
		case own != nil:
			src = *own
		case protocol.IsImage(t.Dataset): // images are never standardised
			src = Source{Dataset: t.Dataset, Pixels: t.Pixels}
			if t.HiddenPixels {
				src.HiddenSeed = t.Seed
			}
		}
		t.Trainer.DataTag = src.Tag()
		name := fmt.Sprintf("%s-%s-seed%d-%.16s.checkpoint.gob", t.Dataset, t.Method, t.Seed, t.Key)
		path := filepath.Join(dir, name)
		if _, err := os.Lstat(path); err == nil {
			if ok, err := train.IsCheckpointFile(path); !ok {
				return fmt.Errorf("checkpoints: %s exists and is not a checkpoint this command wrote (%v): move it, or give --checkpoints another directory", path, cmpErr(err, "its content is not a checkpoint's"))
			}
		}
		if err := t.Trainer.Save(path); err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
		return nil
	}
}

// cmpErr returns err's text, or else when err is nil.
func cmpErr(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}

// CheckCheckpointDir checks, before a run trains anything, that dir (reproduce --checkpoints) is a
// directory it can write checkpoints into, creating it when missing. The error names dir and what
// is wrong: empty, a file, under a file, not writable.
func CheckCheckpointDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("the directory is empty: name a directory for the checkpoints")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s cannot be the checkpoints' directory: %v", dir, err)
	}
	f, err := os.CreateTemp(dir, ".write-test-*")
	if err != nil {
		return fmt.Errorf("%s cannot be written: %v", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
