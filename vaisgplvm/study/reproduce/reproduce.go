// Package reproduce runs one of the paper's tables as `vaisgplvm reproduce` does (Run): it checks
// the request, holds the output directory, trains (or reads the stored trainings of) every cell,
// and writes tableN.md, tableN.json and the figures. Package paper holds the tables themselves;
// this package adds the run around them: the output directory, your own data file, checkpoints
// of the trainings, the store of finished trainings and provenance.
package reproduce

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/progress"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Request is one reproduce run of a table.
type Request struct {
	Table int // the paper's table number (paper.Specs)
	// Options are the table's options, a pointer to its type (paper.Spec.Options; nil: its
	// defaults). Run sets, in a copy, Table 1's Data, the Trainings' Store, Fresh and StoreOnly,
	// the Snapshots' Figures (from Figures), and wraps the Observer to save checkpoints.
	Options paper.TableOptions
	// Out is the directory of tableN.md, tableN.json and the figures; "" for out/tableN (with Data:
	// out/table1-NAME, NAME the file's).
	Out string
	// Data, when not nil, is your own file for table 1 (File, Labels, Standardize) instead of the
	// table's datasets; FitData then fits the size settings to its N points and D columns.
	Data    *experiment.Source
	FitData func(n, d int) error
	// Checkpoints, when not "", is a directory where every training this run trains is saved as a
	// checkpoint (experiment.CheckpointTrained), for evidence and infer.
	Checkpoints string
	// Fresh trains every training again, even those Out/jobs/ holds from an earlier run of the same
	// settings (tables whose Spec uses a Store).
	Fresh bool
	// From, when not "", is another run's Out: the table is made from the trainings its jobs/
	// folder holds, training none and writing nothing there.
	From string
	// Overwrite replaces a table in Out that another command made (paper.CheckReplace).
	Overwrite bool
	Figures   bool     // write the table's figures
	Command   []string // the command line ("reproduce", flags...), recorded as the table's provenance
	// Stuck, when not nil, is started with the run's context and what to say when a cancelled run
	// cannot stop (a graph being built); it returns the function that stops it (the command's
	// interrupt.WhenStuck).
	Stuck func(ctx context.Context, msg string) (release func())
	Log   io.Writer // where the figures written are listed (nil: os.Stderr)
}

// Run checks r, holds its output directory (rundir), runs the table and writes its outputs
// (paper.WriteTable). It returns the result and the directory, closed (its Written names the
// files; nil when it could not be opened). Errors: an *option.Error for a request that cannot
// run (checked before any training); a cancelled ctx returns an error saying what was kept.
func Run(ctx context.Context, r Request) (paper.Output, *rundir.Dir, error) {
	spec, err := paper.Lookup(r.Table)
	if err != nil {
		return nil, nil, err
	}
	name := fmt.Sprintf("table%d", r.Table)
	out := r.Out
	if out == "" {
		out = filepath.Join("out", name)
	}
	if err := checkFrom(r.From, out); err != nil {
		return nil, nil, err
	}
	o := spec.NewOptions()
	if r.Options != nil {
		o = paper.Copy(r.Options)
	}
	if r.Data != nil {
		t1, ok := o.(*paper.Table1Options)
		if !ok {
			return nil, nil, option.Of("Data", "Data: your own data works with table %s", paper.TablesTaking("data"))
		}
		own, err := r.Data.Load() // the source then has the file's absolute path and sha256
		if err != nil {
			return nil, nil, err
		}
		t1.Data = own.Dataset
		if r.FitData != nil {
			if err := r.FitData(own.Dims()); err != nil {
				return nil, nil, err
			}
		}
		if r.Out == "" {
			out = filepath.Join("out", "table1-"+own.Name)
		}
	}
	if s, ok := o.(paper.WithSnapshots); ok {
		s.SnapshotOptions().Figures = r.Figures
	}
	kept := ""
	if w, ok := o.(paper.WithTrainings); ok {
		tr := w.TrainingOptions()
		tr.Store, tr.Fresh = filepath.Join(out, "jobs"), r.Fresh
		if r.From != "" {
			tr.Store, tr.StoreOnly = filepath.Join(r.From, "jobs"), true
		}
		kept = fmt.Sprintf("; the trainings it finished are kept in %s", tr.Store)
	} else if r.From != "" {
		return nil, nil, option.Of("From", "From: table %d keeps no trainings to read (tables %s do)", r.Table, paper.TablesTaking("from"))
	}
	if err := paper.Check(r.Table, o); err != nil {
		return nil, nil, err // *option.Error or Configure's usage errors
	}
	if r.Checkpoints != "" {
		if err := experiment.CheckCheckpointDir(r.Checkpoints); err != nil {
			return nil, nil, option.Of("Checkpoints", "Checkpoints: %v", err)
		}
	}
	command := experiment.Provenance(r.Command)
	if err := paper.CheckReplace(filepath.Join(out, name+".json"), command["command"].(string), r.Overwrite); err != nil {
		return nil, nil, err
	}
	file := ""
	if r.Data != nil {
		file = r.Data.File
	}
	dir, err := rundir.Open(out, paper.TableOutputs(r.Table), rundir.Options{Run: name, Overwrite: true, Inputs: map[string]string{"--data": file}})
	if err != nil {
		return nil, nil, err
	}
	defer dir.Close()
	if r.Checkpoints != "" {
		c := o.Common()
		c.Observer = saving{Observer: cmp.Or[paper.Observer](c.Observer, paper.ObserverFuncs{}), save: experiment.CheckpointTrained(r.Checkpoints, r.Data)}
	}
	if r.Stuck != nil {
		defer r.Stuck(ctx, fmt.Sprintf("reproduce --table %d interrupted while a training could not stop (building its graph): no table written to %s%s", r.Table, out, kept))()
	}
	res, err := paper.RunTable(ctx, r.Table, o)
	if err != nil && ctx.Err() != nil {
		if kept != "" {
			kept += ": the same command continues from them"
		}
		return nil, dir, fmt.Errorf("reproduce --table %d interrupted: no table written to %s%s", r.Table, out, kept)
	}
	if err != nil {
		return nil, dir, err
	}
	if r.Data != nil {
		res.Made()["data_file"] = r.Data.File
	}
	maps.Copy(res.Made(), command)
	files, err := paper.WriteTable(dir, r.Table, res, r.Figures)
	if err != nil {
		return nil, dir, err
	}
	if len(files) > 0 {
		log := r.Log
		if log == nil {
			log = os.Stderr
		}
		fmt.Fprintf(log, "figures: %s\n", strings.Join(files, " "))
	}
	return res, dir, nil
}

// checkFrom refuses a From that is out itself or holds no trainings.
func checkFrom(from, out string) error {
	if from == "" {
		return nil
	}
	if rundir.SameFile(from, out) {
		return option.Errorf([]string{"From", "Out"}, "From %s is the run whose trainings the table reads: give Out another directory", from)
	}
	if _, err := os.Stat(filepath.Join(from, "jobs")); err != nil {
		return option.Failf([]string{"From"}, "From %s: no trainings there (%v): give the Out of a reproduce run of tables 1-3 or 5", from, err)
	}
	return nil
}

// saving is an Observer that also saves every training it is told of (experiment.CheckpointTrained).
type saving struct {
	paper.Observer
	save func(experiment.Trained) error
}

// Trained tells the Observer, then saves t.
func (s saving) Trained(t paper.Trained) error {
	if err := s.Observer.Trained(t); err != nil {
		return err
	}
	return s.save(experiment.Trained(t))
}

// Progress returns the Observer that shows a table's trainings on w: a progress bar while they run
// one at a time, a status line per running training every 15 s when several run at once
// (internal/progress).
func Progress(w io.Writer) paper.Observer {
	return &shown{bar: progress.Trainings(w), jobs: progress.NewJobs(w, 15*time.Second)}
}

// ConvergeProgress returns, for Table5Options.ConvergeProgress, the progress lines on w of each
// training's fit to convergence after its name (internal/progress.Converge with rule and the Adam
// rule's halvings).
func ConvergeProgress(w io.Writer, rule converge.Rule, halvings int) func(training string) func(converge.Progress) {
	return func(training string) func(converge.Progress) { return progress.Converge(w, training, rule, halvings) }
}

// shown is Progress's Observer.
type shown struct {
	bar        func(train.Event)
	jobs       *progress.Jobs
	concurrent bool
}

// Plan picks the display for jobs trainings at a time.
func (s *shown) Plan(trainings, jobs int) {
	if s.concurrent = jobs > 1; s.concurrent {
		s.jobs.Plan(trainings)
	}
}

// Training returns the bar, or the training's status line.
func (s *shown) Training(name string) func(train.Event) {
	if s.concurrent {
		return s.jobs.Job(name)
	}
	return s.bar
}

// Trained shows nothing more.
func (s *shown) Trained(paper.Trained) error { return nil }
