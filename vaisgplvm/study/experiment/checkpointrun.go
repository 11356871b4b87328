package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// CheckpointRun is a run on a trained checkpoint as the evidence and infer commands make it
// (RunEvidence, RunInfer): where its outputs go, the backend, and where the checkpoint's training
// file is now.
type CheckpointRun struct {
	Checkpoint string // written by Train
	Out        string // the run's directory (rundir: checked and held before any work)
	Overwrite  bool   // replace an earlier run's outputs in Out
	Backend    string // backend.Start's spec ("" for $VAISGPLVM_BACKEND, then auto)
	// TrainData is where the training file the checkpoint records is now, when it has moved
	// (LoadCheckpoint).
	TrainData string
	// Provenance, when not nil, is recorded in the run's JSON (Provenance(args) gives a command's).
	Provenance map[string]any
	Log        io.Writer // the backend's choice and the run's report (nil: os.Stderr)
}

// log returns Log, or os.Stderr.
func (c CheckpointRun) log() io.Writer {
	if c.Log == nil {
		return os.Stderr
	}
	return c.Log
}

// open opens Out for a run of kind with outputs (inputs: the files it reads, by flag, which Out must
// not hold), then loads the checkpoint on the backend.
func (c CheckpointRun) open(kind string, outputs []string, inputs map[string]string) (*rundir.Dir, *train.Trainer, *Data, error) {
	inputs["--checkpoint"], inputs["--train-data"] = c.Checkpoint, c.TrainData
	dir, err := rundir.Open(c.Out, outputs, rundir.Options{Run: kind, Overwrite: c.Overwrite, Inputs: inputs})
	if err != nil {
		return nil, nil, nil, err
	}
	tr, td, err := LoadCheckpoint(c.Checkpoint, func(cfg model.Config) (backends.Backend, error) {
		return backend.Start(c.Backend, cfg.DType, 1, 1, c.log())
	}, c.TrainData)
	if err != nil {
		dir.Close()
		return nil, nil, nil, err
	}
	return dir, tr, td, nil
}

// RunEvidence estimates the evidence of c's checkpoint and its bounds' gaps to it (Evidence with
// opt; opt.Checkpoint is set from c), reports them on c.Log and writes evidence.json and, with
// opt.ESSK, the ESS-gap pairs (WriteESSGap; figures too when figures) into c.Out, which it commits.
// It returns the summary and the directory, closed (nil when it could not be opened).
func RunEvidence(ctx context.Context, c CheckpointRun, opt EvidenceOptions, figures bool) (*EvidenceSummary, *rundir.Dir, error) {
	opt.Checkpoint = c.Checkpoint
	dir, tr, _, err := c.open("evidence", opt.Outputs(), map[string]string{})
	if err != nil {
		return nil, nil, err
	}
	defer dir.Close()
	sum, err := Evidence(ctx, tr, opt)
	if err != nil {
		return nil, dir, err
	}
	sum.Report(c.log())
	sum.Provenance = c.Provenance
	buf, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, dir, fmt.Errorf("evidence.json: %w", err)
	}
	if err := dir.WriteFile("evidence.json", buf); err != nil {
		return nil, dir, err
	}
	if err := WriteESSGap(dir, sum, figures); err != nil {
		return nil, dir, err
	}
	return sum, dir, dir.Commit()
}

// RunInfer infers the latents and reconstructions of the new points opt.Data under c's checkpoint
// (Infer; opt.Checkpoint and opt.Provenance are set from c) into c.Out. It returns the summary and
// the directory, closed (nil when it could not be opened).
func RunInfer(ctx context.Context, c CheckpointRun, opt InferOptions) (*InferSummary, *rundir.Dir, error) {
	opt.Checkpoint, opt.Provenance = c.Checkpoint, c.Provenance
	dir, tr, td, err := c.open("infer", InferOutputs, map[string]string{"--data": opt.Data})
	if err != nil {
		return nil, nil, err
	}
	defer dir.Close()
	sum, err := Infer(ctx, dir, tr, td, opt)
	return sum, dir, err
}
