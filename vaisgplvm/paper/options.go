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
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Options are the settings of a table run. The zero value is the table's default protocol, on
// mini-batches and with one seed, sized to run on a laptop; Paper selects the paper's protocol.
type Options struct {
	// Datasets to run (nil: Table 1 oilflow, wine; Tables 2 frey, mnist; Table 3 frey; Table 5
	// oilflow, wine, frey, mnist; Table 6 is Frey only).
	Datasets []string
	// Methods to compare: "mf", "iwvi", "vais" (nil: all three; Tables 3 and 6: iwvi, vais).
	// Table 5 always compares "standard" with "vais".
	Methods []string
	// Runs is the number of seeds per cell, seeds 1..Runs (0: 1; Paper: 10, or fewer when set: the
	// first Runs of the paper's seeds, e.g. to make a table from a store still being filled).
	Runs int
	// Iters is the number of training iterations (0: Table 1 3000, Tables 2 and 3 300, Table 5
	// 400; Paper: 3000, and a value set here runs the paper's protocol that much longer or
	// shorter). Tables 1-3 report rows at Iters/3, 2 Iters/3 and Iters.
	Iters int
	// Paper selects the paper's protocol: 3000 iterations (unless Iters is set) and 10 runs;
	// Tables 1 and 5 full batch (Table 5: all of oilflow and wine).
	Paper bool
	// Pixels is the image scale of Tables 2 and 3: "unit" ([0, 1], also for "") or "raw" (0-255).
	Pixels string
	// Standardize standardises every column of oilflow and wine (changes the metrics' scale).
	Standardize bool
	// Data runs Table 1 on your own data instead of Datasets: Data.Name names it, Data.X [N, D]
	// holds NaN at missing entries (Data.Mask 0 there) and Data.Labels, when set, gives the 1-NN
	// error. Q defaults to OwnDataQ(N, D).
	Data *data.Dataset
	// Jobs is the number of trainings run at the same time (0: runtime.NumCPU()); results do not
	// depend on it.
	Jobs int
	// Configure, when set, adjusts the configuration of every training after the paper's protocol
	// (Config) has filled it in: the command applies the flags given on its command line here.
	Configure func(c *model.Config) error
	// OpenBackend, when set, starts the backend for total trainings run jobs at a time; nil opens
	// backend.OpenShared("auto" for the configurations' dtype).
	OpenBackend func(jobs, total int) (backends.Backend, error)
	// Observer, when set, sees the run: the plan, every training's steps and every training
	// finished (Observer's methods; nil: nothing is observed).
	Observer Observer
	// Log, when set, receives one line per finished training.
	Log io.Writer
	// Figures keeps what WriteFigures needs (curves, latents, reconstructions of the first seed).
	Figures bool
	// Store, when set, is a directory where Tables 1-3 and 5 keep each finished training (its
	// evaluations, curve and time; for seed 1 what the figures need; Table 5: each fit's scores),
	// filed under a hash of everything that decides its results (table, data, method, seed,
	// configuration, snapshots; Table 5: subset size and held-out fit too).
	// A later run with the same options reads those back instead of training them again, so that
	// a table stopped part way (Ctrl-C, the end of a sitting) continues where it stopped, per
	// seed and method, and ends with the rows of one uninterrupted run. Code changes are not in
	// the key: use Fresh after a change that alters results.
	Store string
	// Fresh trains every training again even when Store holds it (and replaces what it holds).
	Fresh bool
	// StoreOnly reads every training from Store and trains none, writing nothing there: the table
	// so far of a run that is still filling Store (reproduce --from). Trainings that Store lacks
	// are an error (ErrNotStored) that names the first of them; StoreOnly needs Store and excludes
	// Fresh.
	StoreOnly bool

	// Subset is Table 5's number of points per dataset, a seeded random subset (0: 300; AllPoints:
	// every point).
	Subset int
	// ReconIters is Table 5's number of Adam iterations fitting the held-out points' latents (0: 200).
	ReconIters int
	// Exact also scores the hidden entries of Tables 2, 3 (complete images) and 5 (training
	// points; Tables 2, 3: at the last row's iterations) under the exact GP conditional, at the trained hyperparameters and refitted with a
	// validated predictive noise (train.Exact, infer.ValidatedExact; the exact and refit
	// columns): per snapshot float64 Choleskys of those rows, a refit's up to 80 of ExactFitRows
	// rows and a latent fit of the validation rows: tens of seconds to minutes per training.
	Exact bool
	// ExactFitRows is the refit's number of rows (0: train.DefaultExactFitRows).
	ExactFitRows int
	// Ks are Table 6's values of K (nil: 5, 10, 15, 20, 25).
	Ks []int
	// Reps is Table 6's number of timed iterations per cell after one warm-up (0: 5; Paper: 10).
	Reps int
}

// AllPoints as Options.Subset keeps every point of Table 5's datasets.
const AllPoints = -1

// Check returns the error that the registered table's function would return for options o before
// training (an *option.Error, or Configure's error), or nil: the command checks its flags with it
// before it touches any output directory. It builds every configuration but reads no data.
func (o Options) Check(table int) error {
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
func (o Options) withDefaults(table int) (Options, error) {
	def, err := Lookup(table)
	if err != nil {
		return o, err
	}
	if err := checkStoreOnlyOptions(o); err != nil {
		return o, err
	}
	if o.StoreOnly && !def.UsesField("Store") {
		return o, fmt.Errorf("paper: StoreOnly works with table %s, which keep their trainings in a Store", TablesUsing("Store"))
	}
	if o.Data != nil {
		if !def.UsesField("Data") {
			return o, option.Of("Data", "Data: your own data works with table %s", TablesUsing("Data"))
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
func (o Options) datasetsOf(table Spec) []string {
	if o.Data != nil {
		return []string{o.Data.Name}
	}
	return slices.Clone(table.Datasets)
}

// validate checks the options of a table after withDefaults.
func (o Options) validate(table Spec) error {
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
		return option.Of("ExactFitRows", "ExactFitRows = %d: want >= 0 (0 = %d)", o.ExactFitRows, train.DefaultExactFitRows)
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
func (o Options) config(table int, method, dataset string, seed uint64) (model.Config, error) {
	spec, err := Lookup(table)
	if err != nil {
		return model.Config{}, err
	}
	c := protocol.Config(method, dataset, seed)
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
func (o Options) openBackend(dtype string, total int) (backends.Backend, error) {
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
func (o Options) jobsFor(b backends.Backend) Options {
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
func (o Options) plan(n int) {
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
func (o Options) observer(dataset, method string, seed uint64, total int) func(train.Event) {
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
