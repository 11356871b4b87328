package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/reproduce"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/interrupt"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
)

// bindTableFlags binds the flags of the tables' own options (paper.TableOptions' `flag` tags), each
// once, their usage saying which tables take them.
func bindTableFlags(fs *flag.FlagSet) {
	before := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
	for _, s := range paper.Specs() {
		option.Bind(fs, s.NewOptions(), nil)
	}
	fs.VisitAll(func(f *flag.Flag) {
		if tables := paper.TablesTaking(f.Name); !before[f.Name] {
			f.Usage = map[bool]string{false: "table ", true: "tables "}[strings.Contains(tables, " and ")] + tables + ": " + f.Usage
		}
	})
}

// tableHelp lists the registered tables for --table's help.
func tableHelp() string {
	var s []string
	for _, t := range paper.Specs() {
		s = append(s, fmt.Sprintf("%d (%s)", t.Number, t.Title))
	}
	return "paper table: " + strings.Join(s, ", ")
}

// runReproduce maps reproduce's flags to the table's options (paper.Spec.NewOptions), runs the table and writes tableN.md,
// tableN.json and (tables 1-3) the figures under --out.
func runReproduce(args []string) error {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	tab := fs.Int("table", 1, tableHelp())
	runs := fs.Int("runs", 1, "seeds per cell, seeds 1..runs (the paper: 10; with --paper, fewer of its seeds)")
	iters := fs.Int("iters", 0, "training iterations (0 = table 1: 3000; tables 2, 3: 300; table 5: 400); tables 1-3 report rows at 1/3, 2/3 and all of them")
	paperProto := fs.Bool("paper", false, "the paper's protocol: 3000 iterations (or --iters), 10 runs (or --runs); tables 1, 5 full batch (table 5: all of oilflow and wine); table 6: 10 timed iterations")
	datasets := fs.String("datasets", "", "comma-separated datasets (default: the table's)")
	methods := fs.String("methods", "", "comma-separated methods (default: the table's; table 5 compares standard and vais)")
	out := fs.String("out", "", "directory for tableN.md, tableN.json and figures (default out/tableN)")
	backendName := fs.String("backend", "", backendHelp)
	jobs := fs.Int("jobs", runtime.NumCPU(), "trainings run at the same time (results do not depend on it; on a CUDA GPU one at a time, whatever this says: docs/gpu.md)")
	noFigures := fs.Bool("no-figures", false, "do not write the PNG figures")
	jsonOut := fs.Bool("json", false, "also print tableN.json on stdout after the table (it is always written under --out)")
	file := fs.String("data", "", "table 1 on your own data instead of --datasets: a delimited file as for train --data (missing entries masked)")
	labels := fs.String("labels", "", "with --data: the header name of a class-label column")
	overwrite := fs.Bool("overwrite", false, "replace a table in --out that another command made (a rerun of the same command replaces its own table)")
	checkpoints := fs.String("checkpoints", "", "tables 1-3: also save each training this run trains as a checkpoint in this directory (DATASET-METHOD-seedS-KEY.checkpoint.gob, recording the data it saw), for evidence and infer; trainings read back from --out/jobs/ get none")
	fresh := fs.Bool("fresh", false, "tables 1-3 and 5: train every training again, even those --out/jobs/ holds from an earlier run of the same settings (which a stopped run continues from)")
	from := fs.String("from", "", "tables 1-3 and 5: make the table from the trainings that another run's --out DIR holds (DIR/jobs/), training none and writing nothing there: the table so far of a run that is still going, written to --out (another directory); an error when a training it needs is not there yet")
	bindTableFlags(fs)
	var cf convergeFlags
	cf.register(fs, "table 5: every fit to its optimum (Table5Options.Converge; oil flow and wine full batch); table 1 at convergence (reproduce.Converged): per dataset and seed, MF by L-BFGS on the collapsed bound (as train --converge), then each other method from that fit with Adam on its own bound from 1e-4 (--lr 0.001), one at a time, each in --out/runs/DATASET-METHOD-seedS (kept: a stopped run continues; --fresh fits them again); table1-converged.md and .json summarise them (default methods mf,iwvi,vais)", experiment.DefaultMaxSeconds)
	mf.setDefaultBatch(fs, protocol.DefaultBatch)
	set, err := parseSet(fs, args)
	if err != nil {
		return err
	}
	if err := cf.check(set); err != nil {
		return err
	}
	split := func(name, v string) []string { // a list flag's values, nil when not given
		if !set[name] {
			return nil
		}
		return strings.Split(v, ",")
	}
	if cf.on {
		for _, f := range []string{"iters", "paper", "data", "jobs", "from", "checkpoints", "overwrite", "batch"} {
			if set[f] && (*tab == 1 && (f != "batch" || mf.v.Batch != 0) || f == "iters") {
				return usagef("--converge fits every training of table %d to its optimum: leave out --%s", *tab, f)
			}
		}
		if *tab != 1 && *tab != 5 {
			return usagef("--converge works with --table 1 or 5, not %d", *tab)
		}
	}
	if cf.on && *tab == 1 {
		req := reproduce.ConvergedRequest{Runs: *runs, Out: *out, Fresh: *fresh, Converge: *cf.options(cf.maxSeconds, false), Adam: converge.AdamRule{Halvings: cf.halvings}, Backend: *backendName,
			Figures: !*noFigures, Command: append([]string{"reproduce"}, args...), Configure: mf.configure(set), Explicit: mf.explicit(set)}
		req.Datasets, req.Methods = split("datasets", *datasets), split("methods", *methods)
		stop := interrupt.Notify()
		defer stop.Release()
		md, dir, err := reproduce.Converged(stop.Context(), req)
		if errors.Is(err, train.ErrInterrupted) {
			return interrupt.Error{Msg: fmt.Sprintf("%v; the same command continues from the trainings finished", err)}
		}
		if err != nil {
			return err
		}
		fmt.Print(md)
		wrote(dir)
		return nil
	}
	spec, err := paper.Lookup(*tab)
	if err != nil {
		return err
	}
	for name := range set {
		if tables := paper.TablesTaking(name); tables != "" && !spec.Takes(name) {
			return usagef("--%s works with --table %s, not %d", name, tables, *tab)
		}
	}
	methodList := split("methods", *methods)
	if methodList == nil {
		methodList = model.Methods()
	}
	if err := mf.checkGiven(set, methodList...); err != nil {
		return err
	}
	if *labels != "" && *file == "" {
		return usagef("--labels names a column of --data")
	}
	if *from != "" && (*fresh || *checkpoints != "") {
		return usagef("--from reads another run's trainings and trains none: leave out --fresh and --checkpoints")
	}
	if *file != "" && set["datasets"] {
		return usagef("--data and --datasets exclude each other")
	}
	if *iters < 0 || *jobs < 1 || *runs < 1 {
		return usagef("--iters must be >= 0; --runs and --jobs >= 1")
	}
	if *paperProto && *runs > 10 {
		return usagef("--paper runs the paper's 10 seeds; --runs may only ask for fewer (1-10)")
	}
	if set["checkpoints"] && *checkpoints == "" {
		return usagef("--checkpoints: the directory is empty: name a directory for the checkpoints")
	}
	opts := spec.NewOptions() // the table's own flags, then what every table reads
	if err := option.SetGiven(fs, opts, func(name string) bool { return set[name] }); err != nil {
		return usagef("%v", err)
	}
	if t5, ok := opts.(*paper.Table5Options); ok {
		if t5.Subset == 0 {
			t5.Subset = paper.AllPoints // --subset 0
		}
		if cf.on {
			t5.Converge, t5.ConvergeAdam = cf.options(cf.maxSeconds, true), converge.AdamRule{Halvings: cf.halvings}
			t5.ConvergeProgress = reproduce.ConvergeProgress(os.Stderr, t5.Converge.Rule, cf.halvings)
		}
	}
	*opts.Common() = paper.Options{Runs: *runs, Iters: *iters, Paper: *paperProto, Standardize: mf.standardize, Log: os.Stderr,
		Methods: split("methods", *methods), Configure: func(c *model.Config) error { return mf.apply(c, set) },
		Observer: reproduce.Progress(os.Stderr), // a bar, or status lines when trainings run at once
		OpenBackend: func(jobs, total int) (backends.Backend, error) {
			return backend.Start(*backendName, mf.dtype, jobs, total, os.Stderr)
		}}
	if *paperProto && !set["runs"] {
		opts.Common().Runs = 0 // the paper's 10 seeds
	}
	if w, ok := opts.(paper.WithTrainings); ok {
		w.TrainingOptions().Datasets, w.TrainingOptions().Jobs = split("datasets", *datasets), *jobs
	}
	req := reproduce.Request{Table: *tab, Options: opts, Out: *out, Checkpoints: *checkpoints, Fresh: *fresh, From: *from,
		Overwrite: *overwrite, Figures: !*noFigures, Command: append([]string{"reproduce"}, args...),
		Stuck: func(ctx context.Context, msg string) func() { return interrupt.WhenStuck(ctx, 5*time.Second, msg) }}
	if *file != "" {
		req.Data = &experiment.Source{File: *file, Labels: *labels, Standardize: mf.standardize}
		req.FitData = func(n, d int) error { return mf.fitToData(set, n, d) }
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, dir, err := reproduce.Run(ctx, req)
	if err != nil && ctx.Err() != nil {
		return interrupt.Error{Msg: err.Error()}
	}
	if err != nil {
		return err
	}
	fmt.Print(res.Markdown())
	wrote(dir)
	if *jsonOut {
		return printJSON(res)
	}
	return nil
}
