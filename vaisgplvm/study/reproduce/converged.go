package reproduce

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// ConvergedOutputs are the files Converged writes in its Out, beside the runs/ folder.
var ConvergedOutputs = []string{"table1-converged.md", "table1-converged.json"}

// ContinueLR is the Adam learning rate of a converged table's model configuration for the bounds
// other than MF unless Configure sets another: their continuation from the converged MF fit starts
// at a tenth of it, converge.ContinueStep (1e-4; converge.AdamOptions), the step that
// converge.Train's continuations take and that the converged runs on record (records/converged)
// were made with.
const ContinueLR = 10 * converge.ContinueStep

// ConvergedRequest is Table 1 with every training at its bound's optimum (Converged): for each
// dataset and seed, MF fitted to convergence by L-BFGS on the collapsed bound (converge.Fit, full
// batch), then each other method from that fit with Adam on its own bound until its plateau rule
// holds (converge.Continue), each a run of experiment.RunTrain in Out/runs/DATASET-METHOD-seedS.
type ConvergedRequest struct {
	Datasets []string // built-in datasets (default oilflow, wine)
	Methods  []string // the methods; mf is fitted whether listed or not (default mf, iwvi, vais)
	Runs     int      // seeds 1..Runs, >= 1
	// Out holds runs/ and the summary table (ConvergedOutputs); "" for out/table1-converged. A run
	// whose metrics.json is there already is kept (a stopped table continues), unless Fresh, when
	// its model configuration is this request's; another configuration is an *option.Error.
	Out   string
	Fresh bool
	// Converge is each fit's rule and caps: MaxSeconds and MaxIters cap the MF fit, MaxSeconds each
	// continuation (converge.Options; Observe sees the L-BFGS iterations).
	Converge converge.Options
	// Adam is the continuations' rule (zero fields: converge.AdamRule's defaults).
	Adam converge.AdamRule
	// Configure and Explicit apply the caller's settings to each training's configuration and say
	// which it set (protocol.Training); on top of Table 4's, Batch is 0 (full batch), AdaptEta
	// false (adapting eta is not an ascent on the bound) and LR ContinueLR for the methods other
	// than mf, unless Configure sets them.
	Configure func(*model.Config) error
	Explicit  func(field string) bool
	Backend   string   // backend.Start's spec
	Figures   bool     // each run's figures
	Command   []string // the command line, recorded in every run's metrics.json
	Log       io.Writer
}

// Converged runs r (its trainings one at a time, so that their seconds compare) and writes the
// summary of Out/runs (paper.ConvergedSummaryWith: each bound's -ELBO at its optimum, its
// difference to MF's on the same seed with a t-interval, convergence and seconds) as
// table1-converged.md and .json in Out. It returns the Markdown and the directory, closed.
// Errors: an *option.Error for a request that cannot run; a training's; ctx's end stops the
// training in progress after its step (its run keeps a partial checkpoint) and returns an error
// wrapping train.ErrInterrupted.
func Converged(ctx context.Context, r ConvergedRequest) (string, *rundir.Dir, error) {
	if err := r.defaults(); err != nil {
		return "", nil, err
	}
	dir, err := rundir.Open(r.Out, ConvergedOutputs, rundir.Options{Run: "table1-converged", Overwrite: true})
	if err != nil {
		return "", nil, err
	}
	defer dir.Close()
	runs := filepath.Join(r.Out, "runs")
	for seed := 1; seed <= r.Runs; seed++ {
		for _, ds := range r.Datasets {
			mf := filepath.Join(runs, fmt.Sprintf("%s-mf-seed%d", ds, seed))
			for _, method := range r.Methods {
				out := filepath.Join(runs, fmt.Sprintf("%s-%s-seed%d", ds, method, seed))
				from := ""
				if method != "mf" {
					from = filepath.Join(mf, "checkpoint.gob")
				}
				if err := r.train(ctx, ds, method, uint64(seed), out, from); err != nil {
					return "", dir, fmt.Errorf("%s %s seed %d: %w", ds, method, seed, err)
				}
			}
		}
	}
	intro := fmt.Sprintf("# Table 1 at convergence\n\nMade with `%s`; each training's folder is under runs/.\n\n",
		experiment.Provenance(r.Command)["command"])
	md, js, err := paper.ConvergedSummaryWith(runs, intro)
	if err != nil {
		return "", dir, err
	}
	if err := dir.WriteFile(ConvergedOutputs[0], []byte(md)); err != nil {
		return "", dir, err
	}
	if err := dir.WriteFile(ConvergedOutputs[1], js); err != nil {
		return "", dir, err
	}
	return md, dir, dir.Commit()
}

// defaults fills in r's defaults and checks it.
func (r *ConvergedRequest) defaults() error {
	if len(r.Datasets) == 0 {
		r.Datasets = []string{"oilflow", "wine"}
	}
	if len(r.Methods) == 0 {
		r.Methods = []string{"mf", "iwvi", "vais"}
	}
	r.Methods = append([]string{"mf"}, slices.DeleteFunc(slices.Clone(r.Methods), func(m string) bool { return m == "mf" })...)
	if r.Out == "" {
		r.Out = filepath.Join("out", "table1-converged")
	}
	if r.Log == nil {
		r.Log = os.Stderr
	}
	for _, ds := range r.Datasets {
		if data.IsImage(ds) || !slices.Contains(data.Names(), ds) {
			return option.Of("Datasets", "Datasets %q: Table 1 at convergence fits the tabular built-in datasets (the image sets need mini-batches, which the collapsed bound has not)", ds)
		}
	}
	for _, m := range r.Methods {
		if !slices.Contains(model.Methods(), m) {
			return option.Of("Methods", "Methods %q: want some of %v", m, model.Methods())
		}
	}
	if r.Runs < 1 {
		return option.Of("Runs", "Runs %d: want >= 1", r.Runs)
	}
	return nil
}

// train fits one training into out (skipped when out holds its finished run), from the converged
// MF checkpoint from when not "".
func (r *ConvergedRequest) train(ctx context.Context, ds, method string, seed uint64, out, from string) error {
	configure := func(c *model.Config) error {
		c.Batch, c.AdaptEta = 0, false
		if method != "mf" {
			c.LR = ContinueLR
		}
		if r.Configure != nil {
			return r.Configure(c)
		}
		return nil
	}
	explicit := func(field string) bool { return field == "Batch" || (r.Explicit != nil && r.Explicit(field)) }
	src := experiment.Source{Dataset: ds}
	if !r.Fresh {
		if done, err := finished(out, ds, method, seed, configure, explicit); done || err != nil {
			return err
		}
	}
	opts := r.Converge
	fmt.Fprintf(r.Log, "table 1 at convergence: %s %s seed %d -> %s\n", ds, method, seed, out)
	cfg, _, err := protocol.Training(method, ds, seed, 0, 0, configure, explicit)
	if err != nil {
		return err
	}
	run := experiment.TrainRun{Source: src, Config: cfg, Out: out, Overwrite: true, Backend: r.Backend, Log: r.Log,
		Fit: func(c model.Config, n, d int, _ bool) (model.Config, error) {
			c, _, err := protocol.Training(method, ds, seed, n, d, configure, explicit)
			return c, err
		},
		TrainOptions: experiment.TrainOptions{Iters: 1, CheckpointEvery: 1, Seed: seed, Figures: r.Figures, Converge: &opts, ConvergeAdam: converge.AdamOptions{Rule: r.Adam},
			ConvergeFrom: from, Provenance: experiment.Provenance(r.Command), Warn: func(w string) { fmt.Fprintln(r.Log, "vaisgplvm: warning:", w) }}}
	_, _, err = experiment.RunTrain(ctx, run)
	return err
}

// finished reports whether out holds a finished run of this training: its metrics.json with the
// configuration this request gives it. A finished run of another configuration is an *option.Error.
func finished(out, ds, method string, seed uint64, configure func(*model.Config) error, explicit func(string) bool) (bool, error) {
	buf, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	if err != nil {
		return false, nil // not finished: trained (again)
	}
	var met struct {
		Config model.Config `json:"config"`
	}
	if err := json.Unmarshal(buf, &met); err != nil {
		return false, fmt.Errorf("%s: %w", filepath.Join(out, "metrics.json"), err)
	}
	x, err := protocol.LoadTabular(ds, false)
	if err != nil {
		return false, err
	}
	want, _, err := protocol.Training(method, ds, seed, len(x.X), len(x.X[0]), configure, explicit)
	if err != nil {
		return false, err
	}
	if !reflect.DeepEqual(met.Config, want) {
		return false, option.Errorf([]string{"Out", "Fresh"}, "%s holds a run of another configuration than this table's: choose another Out, or set Fresh to fit it again", out)
	}
	return true, nil
}
