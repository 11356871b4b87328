package experiment

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/protocol"
)

// CheckpointTrained returns a paper.Options.OnTrained that saves every training a table run
// finishes as a checkpoint in dir (created when missing), named
// DATASET-METHOD-seedS-KEY.checkpoint.gob with the first 16 hex digits of its store key, so that
// trainings of other settings never share a file. Each checkpoint records the data its training
// saw (Source.Tag: the built-in dataset with its pixel scale, standardisation and Table 2's
// hidden pixels of that seed; own, when not nil, for a table on your own data), so LoadCheckpoint,
// evidence and infer rebuild that data. A file of the same name is replaced: it is the same
// training, trained again (reproduce --fresh).
func CheckpointTrained(dir string, own *Source) func(paper.Trained) error {
	return func(t paper.Trained) error {
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
		if err := t.Trainer.Save(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
		return nil
	}
}
