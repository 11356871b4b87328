package paper

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// opts is every setting of a table run in one flat struct: the union of the tables' own option
// types (Options, Trainings, Snapshots, Table1Options ... Table6Options), which optsOf copies in
// by field name. The tables' code reads this; callers never see it.
type opts struct {
	Datasets     []string
	Methods      []string
	Runs         int
	Iters        int
	Paper        bool
	Pixels       string
	Standardize  bool
	Data         *data.Dataset
	Jobs         int
	Configure    func(c *model.Config) error
	OpenBackend  func(jobs, total int) (backends.Backend, error)
	Observer     Observer
	Log          io.Writer
	Figures      bool
	Store        string
	Fresh        bool
	StoreOnly    bool
	Subset       int
	ReconIters   int
	Exact        bool
	ExactFitRows int
	ValidatePPCA bool
	Converge     *converge.Options
	ConvergeAdam converge.AdamRule
	// ConvergeProgress is Table5Options.ConvergeProgress.
	ConvergeProgress func(training string) func(converge.Progress)
	Ks               []int
	Reps             int
}

// check returns the error that table's function would return for o before training (Check).
func (o opts) check(table int) error {
	o, err := o.withDefaults(table)
	if err != nil {
		return err
	}
	for _, d := range o.Datasets {
		for _, m := range o.Methods {
			if m == "standard" {
				m = "vais" // Table 5's standard GPLVM takes its Q, kernel, lr and noise from the VAIS configuration
			}
			if _, err := o.config(table, m, d, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// withDefaults returns o with the table's defaults filled in, or an *option.Error.
func (o opts) withDefaults(table int) (opts, error) {
	def, err := Lookup(table)
	if err != nil {
		return o, err
	}
	if err := checkStoreOnlyOptions(o); err != nil {
		return o, err
	}
	if o.StoreOnly && !def.reads("Store") {
		return o, fmt.Errorf("paper: StoreOnly works with table %s, which keep their trainings in a Store", tablesReading("Store"))
	}
	if o.Data != nil {
		if !def.reads("Data") {
			return o, option.Of("Data", "Data: your own data works with table %s", tablesReading("Data"))
		}
		if o.Datasets != nil && !slices.Equal(o.Datasets, []string{o.Data.Name}) {
			return o, option.Errorf([]string{"Data", "Datasets"}, "Data and Datasets exclude each other")
		}
		if o.Data.Name == "" || len(o.Data.X) == 0 {
			return o, option.Of("Data", "Data: want a named dataset with at least one row")
		}
	}
	if o.Datasets == nil {
		o.Datasets = o.datasetsOf(def)
	}
	if o.Methods == nil {
		o.Methods = slices.Clone(def.Methods)
	}
	if o.Paper && o.Iters == 0 {
		o.Iters = 3000
	}
	if o.Paper {
		if o.Runs == 0 || o.Runs > 10 {
			o.Runs = 10
		}
		if def.PaperReps > 0 {
			o.Reps = def.PaperReps
		}
	}
	if o.Iters == 0 {
		o.Iters = def.Iters
	}
	if def.Sequential {
		o.Jobs = 1
	}
	if o.Runs == 0 {
		o.Runs = 1
	}
	if o.Jobs == 0 {
		o.Jobs = runtime.NumCPU()
	}
	if o.Subset == 0 {
		o.Subset = 300
	}
	if o.ReconIters == 0 {
		o.ReconIters = 200
	}
	if o.Ks == nil {
		o.Ks = []int{5, 10, 15, 20, 25}
	}
	if o.Reps == 0 {
		o.Reps = 5
	}
	return o, o.validate(def)
}

// datasetsOf returns the datasets table runs on: your own data's name, or the table's datasets.
func (o opts) datasetsOf(table Spec) []string {
	if o.Data != nil {
		return []string{o.Data.Name}
	}
	return slices.Clone(table.Datasets)
}

// validate checks the options of a table after withDefaults.
func (o opts) validate(table Spec) error {
	allowed := o.datasetsOf(table)
	methods := table.Accepts
	if methods == nil {
		methods = model.Methods()
	}
	switch {
	case o.Runs < 1 || o.Jobs < 1:
		return option.Errorf([]string{"Runs", "Jobs"}, "Runs = %d, Jobs = %d: want >= 1", o.Runs, o.Jobs)
	case table.Snapshots && o.Iters < 3:
		return option.Of("Iters", "Iters = %d: want >= 3 (rows at 1/3, 2/3 and all of them)", o.Iters)
	case o.Iters < 0 || (table.Iters > 0 && o.Iters < 1):
		return option.Of("Iters", "Iters = %d: want >= 1", o.Iters)
	case o.ExactFitRows < 0:
		return option.Of("ExactFitRows", "ExactFitRows = %d: want >= 0 (0 = %d)", o.ExactFitRows, eval.DefaultExactFitRows)
	case o.ReconIters < 1:
		return option.Of("ReconIters", "ReconIters = %d: want >= 1", o.ReconIters)
	case o.Subset != AllPoints && o.Subset < 20:
		return option.Of("Subset", "Subset = %d: want >= 20 points (or all of them)", o.Subset)
	case o.Reps < 1:
		return option.Of("Reps", "Reps = %d: want >= 1", o.Reps)
	}
	if table.Weighted {
		for _, m := range o.Methods {
			if b, err := bounds.Lookup(m); err == nil {
				if _, weighted := b.Particles(bounds.Sizes{K: 1, Samples: 1}, 1); !weighted {
					return option.Of("Methods", "Methods: table %d compares importance weights (iwvi, vais ...); %s has none", table.Number, m)
				}
			}
		}
	}
	if o.Pixels != "" && o.Pixels != "unit" && o.Pixels != "raw" {
		return option.Of("Pixels", "Pixels %q: want unit or raw", o.Pixels)
	}
	for _, k := range o.Ks {
		if k < 1 || k > model.MaxK {
			return option.Of("Ks", "Ks: %d is not in 1..%d", k, model.MaxK)
		}
	}
	for _, d := range o.Datasets {
		if !slices.Contains(allowed, d) {
			return option.Of("Datasets", "Datasets: unknown dataset %q for table %d (want %s)", d, table.Number, strings.Join(allowed, ", "))
		}
	}
	for _, m := range o.Methods {
		if !slices.Contains(methods, m) {
			return option.Of("Methods", "Methods: unknown method %q for table %d (want %s)", m, table.Number, strings.Join(methods, ", "))
		}
	}
	return nil
}

// config returns the configuration of one training: the protocol's (Config; Q from the data for
// your own data; full batch under Paper for tables 1 and 5), adjusted by Configure and validated.
func (o opts) config(table int, method, dataset string, seed uint64) (model.Config, error) {
	return o.configWith(table, method, dataset, seed, nil)
}

// configWith is config with pre applied to the protocol's configuration before the table's and the
// caller's settings (Configure), so that those still override it.
func (o opts) configWith(table int, method, dataset string, seed uint64, pre func(*model.Config)) (model.Config, error) {
	spec, err := Lookup(table)
	if err != nil {
		return model.Config{}, err
	}
	c := protocol.Config(method, dataset, seed)
	if pre != nil {
		pre(&c)
	}
	if o.Data != nil {
		c.Q = protocol.OwnDataQ(len(o.Data.X), len(o.Data.X[0]))
	}
	if o.Paper && spec.PaperFullBatch {
		c.Batch = 0
	}
	if o.Paper && c.Method == "vais" && protocol.PaperStopGradVAIS(dataset) {
		c.StopGrad = true // the paper's gradient diverges at its own length on MNIST
	}
	if spec.PaperGradient {
		c.StopGrad = false // e.g. Table 6 times the paper's estimator: gradients through every step
	}
	if o.Configure != nil {
		if err := o.Configure(&c); err != nil {
			return c, err
		}
	}
	if err := c.Validate(); err != nil {
		return c, option.Within(fmt.Sprintf("%s on %s", method, dataset), err)
	}
	return c, nil
}

// openBackend starts the backend of a table run (Options.OpenBackend, else backend.OpenShared for
// dtype).
func (o opts) openBackend(dtype string, total int) (backends.Backend, error) {
	if o.OpenBackend != nil {
		return o.OpenBackend(o.Jobs, total)
	}
	if dtype == "" {
		dtype = "float64"
	}
	c, err := backend.OpenShared(backend.ForDType("", dtype), o.Jobs, total)
	if err != nil {
		return nil, err
	}
	return c.Backend, nil
}

// jobsFor returns o with Jobs lowered to the trainings b lets run at once
// (backend.ConcurrentTrainings: one on a CUDA GPU), saying so on Log.
func (o opts) jobsFor(b backends.Backend) opts {
	if n := backend.ConcurrentTrainings(b); n > 0 && o.Jobs > n {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "%s: %d training at a time instead of %d (Jobs): trainings sharing one GPU failed in cuBLASLt (docs/gpu.md)\n",
				backend.Label(b), n, o.Jobs)
		}
		o.Jobs = n
	}
	return o
}

// plan tells the Observer, when set, that n trainings will report, Jobs at a time.
func (o opts) plan(n int) {
	if o.Observer != nil {
		o.Observer.Plan(n, o.Jobs)
	}
}

// trainingName names a training in logs and errors: "oilflow vais seed 1".
func trainingName(dataset, method string, seed uint64) string {
	return fmt.Sprintf("%s %s seed %d", dataset, method, seed)
}

// observer returns the observer of the training of method on dataset with seed, trained to
// iteration total in one or more Runs (the tables' snapshots): the Observer's for it, or nil. Its
// events carry total, not the snapshot's target.
func (o opts) observer(dataset, method string, seed uint64, total int) func(train.Event) {
	if o.Observer == nil {
		return nil
	}
	f := o.Observer.Training(trainingName(dataset, method, seed))
	if f == nil {
		return nil
	}
	return func(e train.Event) {
		e.Total = total
		f(e)
	}
}
