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
// number, what it runs by default, its options type, how the paper's protocol (Options.Paper)
// applies to it, its function and its outputs. A new table is one file with its function (and its
// options type, when it reads more than Options) and one Register call in that file's init.
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
	// Options returns a new value of the table's options type (TableOptions) holding the defaults
	// that its flags show (nil: &Options{}, a table that reads only what every table reads). The
	// zero value of the type means the same defaults.
	Options func() TableOptions
	// Sequential runs one training at a time whatever Trainings.Jobs says (Table 6 times them).
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
	// Run runs the table with o, of the type that Options returns, its defaults filled in (RunTable).
	Run func(ctx context.Context, o TableOptions) (Output, error)
}

// NewOptions returns a new value of the table's options type holding its flags' defaults
// (Spec.Options).
func (s Spec) NewOptions() TableOptions {
	if s.Options == nil {
		return &Options{}
	}
	return s.Options()
}

// Takes reports whether the table's options have a field that the reproduce flag named name sets
// (the tags of TableOptions); the command refuses the flag for a table that has none.
func (s Spec) Takes(name string) bool { return slices.Contains(flagsOf(s.NewOptions()), name) }

// reads reports whether the table's options have the field named f.
func (s Spec) reads(f string) bool { return hasField(s.NewOptions(), f) }

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

// TablesTaking returns the numbers of the registered tables that take the reproduce flag named
// name (Spec.Takes), in words.
func TablesTaking(name string) string { return tablesWhere(func(s Spec) bool { return s.Takes(name) }) }

// tablesReading returns the numbers of the registered tables whose options have field f, in words.
func tablesReading(f string) string { return tablesWhere(func(s Spec) bool { return s.reads(f) }) }

func tablesWhere(ok func(Spec) bool) string {
	var nums []int
	for _, s := range Specs() {
		if ok(s) {
			nums = append(nums, s.Number)
		}
	}
	return andList(nums)
}
