package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// DefaultMaxSeconds caps the fit to convergence that `train --data FILE` runs by default
// (TrainRun.ConvergeIfAllowed): 30 minutes.
const DefaultMaxSeconds = 1800

// TrainRun is one training as `vaisgplvm train` runs it (RunTrain): the data, the configuration,
// the backend, the run directory and the training options.
type TrainRun struct {
	Source Source       // the data (Source.Load reads them)
	Config model.Config // the configuration; a new run's is then fitted to the data by Fit
	// Fit, for a new run (TrainOptions.Resume empty), returns Config fitted to the data's N points
	// and D columns; converging says that the run fits to convergence (full batch). Nil keeps Config.
	// A resumed run keeps its checkpoint's configuration.
	Fit func(cfg model.Config, n, d int, converging bool) (model.Config, error)
	// Out is the run's directory: checked and held (rundir) before any work; Overwrite replaces an
	// earlier run's outputs there.
	Out       string
	Overwrite bool
	Backend   string // backend.Start's spec ("" for $VAISGPLVM_BACKEND, then auto)
	// ConvergeIfAllowed makes TrainOptions.Converge apply only when the data allow a fit to
	// convergence (ConvergeByDefault); otherwise the run trains TrainOptions.Iters Adam steps. It
	// says which on Log. This is `train --data FILE`'s default.
	ConvergeIfAllowed bool
	// Log receives the backend's choice and the notes of the run (nil: os.Stderr).
	Log io.Writer
	TrainOptions
}

// RunTrain opens r's backend and run directory, loads the data and trains (NewTrainer, Train). It
// returns the metrics and the run directory, closed (its Written and Final name the files; nil
// when it could not be opened). A run stopped by ctx's end returns an error wrapping
// train.ErrInterrupted, its checkpoint at dir.Final(PartialCheckpoint).
func RunTrain(ctx context.Context, r TrainRun) (*Metrics, *rundir.Dir, error) {
	log := r.Log
	if log == nil {
		log = os.Stderr
	}
	b, err := backend.Start(r.Backend, r.Config.DType, 1, 1, log)
	if err != nil {
		return nil, nil, err
	}
	resume := r.Resume
	resuming := resume != "" && SameFile(filepath.Dir(resume), r.Out)
	dir, err := OpenTrainDir(r.Out, rundir.Options{Overwrite: r.Overwrite,
		Resume: resuming, ResumeFile: map[bool]string{true: resume}[resuming],
		Inputs: map[string]string{"--data": r.Source.File, "--resume": resume, "--converge-from": r.ConvergeFrom}})
	if err != nil {
		return nil, nil, err
	}
	defer dir.Close()
	td, err := r.Source.Load()
	if err != nil && resume != "" {
		return nil, dir, fmt.Errorf("%w: resume with the data as it was, or start a new run without --resume", err)
	}
	if err != nil {
		return nil, dir, err
	}
	if r.ConvergeIfAllowed && !convergeOwnData(log, td, r.Config.Kernel, r.Config.M, r.Iters) {
		r.Converge = nil
	}
	cfg := r.Config
	if resume == "" && r.Fit != nil {
		n, d := td.Dims()
		if cfg, err = r.Fit(cfg, n, d, r.Converge != nil); err != nil {
			return nil, dir, err
		}
	}
	tr, err := NewTrainer(cfg, td, r.Source, b)
	if err != nil {
		return nil, dir, err
	}
	met, err := Train(ctx, dir, tr, td, r.Source, r.TrainOptions)
	if errors.Is(err, train.ErrNotFiniteAtStart) {
		err = fmt.Errorf("%w (train: --standardize, --q0-scale, --noise0, --eta)", err)
	}
	return met, dir, err
}

// convergeOwnData says whether a run of ConvergeIfAllowed fits td to convergence
// (ConvergeByDefault), and says so on log.
func convergeOwnData(log io.Writer, td *Data, kernel string, m, iters int) bool {
	ok, why := ConvergeByDefault(td, kernel, m)
	if ok {
		fmt.Fprintf(log, "vaisgplvm: --data without --iters: fitting to convergence (--converge, capped at %d s; --max-seconds sets the cap); --iters N trains N Adam steps instead\n", DefaultMaxSeconds)
	} else {
		fmt.Fprintf(log, "vaisgplvm: --data: not fitting to convergence (%s): training %d Adam steps (--iters)\n", why, iters)
	}
	return ok
}
