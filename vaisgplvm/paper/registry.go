package paper

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// Output is a table's result: its Markdown, its JSON (encoding/json) and its settings (Made),
// into which a caller adds how it was made (command, commit, machine). Result, Result5 and Result6
// are Outputs; an Output that also writes figures is a FigureWriter.
type Output interface {
	Markdown() string
	// Made returns the result's settings map (never nil; the caller may add keys to it).
	Made() map[string]any
}

// FigureWriter is an Output with figures: WriteFigures writes them under dir and returns their
// paths (Result: curves, latents, ARD, images and ESS histograms).
type FigureWriter interface {
	WriteFigures(dir string) ([]string, error)
}

// Spec is one table of the paper as the command, RunTable, the help and the docs see it: its
// number, what it runs by default, which Options it reads beyond the common ones, how the paper's
// protocol (Options.Paper) applies to it, its function and its outputs. A new table is one file
// with its function and one Register call in that file's init.
type Spec struct {
	Number int
	// Title says in a few words what the table compares (the command's help lists it).
	Title string
	// Datasets and Methods are the defaults; Accepts the methods it takes (nil: every registered
	// bound, model.Methods()).
	Datasets, Methods, Accepts []string
	// Iters is the default number of training iterations (0: the table trains no fixed length).
	Iters int
	// Snapshots: the table reports rows at 1/3, 2/3 and all of Iters (so Iters >= 3).
	Snapshots bool
	// Weighted: the table compares importance weights, so each method must have them (Table 3).
	Weighted bool
	// Uses lists the Options fields the table reads beyond Runs, Iters, Paper, Methods, Standardize,
	// Configure and the observers: "Datasets", "Data", "Pixels", "Figures", "Store", "Trained" (Observer.Trained), "Jobs",
	// "Subset", "ReconIters", "Ks", "Reps". The command refuses a flag for a field a table does not use.
	Uses []string
	// Sequential runs one training at a time whatever Options.Jobs says (Table 6 times them).
	Sequential bool
	// PaperFullBatch trains on full batches under Options.Paper (Tables 1 and 5, App. C).
	PaperFullBatch bool
	// PaperGradient keeps every training's gradient through every annealing step, whatever the
	// dataset's presets (Table 6 times the paper's estimator).
	PaperGradient bool
	// PaperReps is Reps under Options.Paper (0: unchanged).
	PaperReps int
	// Figures are the file patterns of the figures WriteTable may write besides tableN.md and
	// tableN.json.
	Figures []string
	// Run runs the table with o (after Options.Check).
	Run func(ctx context.Context, o Options) (Output, error)
}

// UsesField reports whether the table reads Options field f (Spec.Uses).
func (s Spec) UsesField(f string) bool { return slices.Contains(s.Uses, f) }

var (
	specMu sync.RWMutex
	specs  []Spec // by number
)

// Register adds a table. Errors: a number below 1 or already registered, no Run function.
func Register(s Spec) error {
	specMu.Lock()
	defer specMu.Unlock()
	if s.Number < 1 || s.Run == nil {
		return fmt.Errorf("paper: Register table %d: want a number >= 1 and a Run function", s.Number)
	}
	if slices.ContainsFunc(specs, func(o Spec) bool { return o.Number == s.Number }) {
		return fmt.Errorf("paper: table %d is already registered", s.Number)
	}
	specs = append(specs, s)
	slices.SortFunc(specs, func(a, b Spec) int { return a.Number - b.Number })
	return nil
}

// Unregister removes table n (nothing when there is none; for tests).
func Unregister(n int) {
	specMu.Lock()
	defer specMu.Unlock()
	specs = slices.DeleteFunc(specs, func(s Spec) bool { return s.Number == n })
}

// Lookup returns table n. Errors: an *option.Error about Table listing the registered tables.
func Lookup(n int) (Spec, error) {
	specMu.RLock()
	defer specMu.RUnlock()
	if i := slices.IndexFunc(specs, func(s Spec) bool { return s.Number == n }); i >= 0 {
		return specs[i], nil
	}
	return Spec{}, option.Of("Table", "Table %d: the paper's tables here are %s (4 lists settings)", n, numbersLocked())
}

// Specs returns the registered tables by number.
func Specs() []Spec {
	specMu.RLock()
	defer specMu.RUnlock()
	return slices.Clone(specs)
}

// Numbers returns the registered tables' numbers in words ("1, 2, 3, 5 and 6").
func Numbers() string {
	specMu.RLock()
	defer specMu.RUnlock()
	return numbersLocked()
}

func numbersLocked() string {
	var nums []int
	for _, s := range specs {
		nums = append(nums, s.Number)
	}
	return andList(nums)
}

// andList writes v as "1, 2 and 3".
func andList(v []int) string {
	s := ""
	for i, x := range v {
		switch {
		case i == 0:
		case i == len(v)-1:
			s += " and "
		default:
			s += ", "
		}
		s += fmt.Sprint(x)
	}
	return s
}

// TablesUsing returns the numbers of the registered tables that read Options field f, in words.
func TablesUsing(f string) string {
	var nums []int
	for _, s := range Specs() {
		if s.UsesField(f) {
			nums = append(nums, s.Number)
		}
	}
	return andList(nums)
}
