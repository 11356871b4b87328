package paper

import (
	"io"
	"reflect"
	"strings"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// TableOptions is a pointer to one table's options: Table1Options, ImageOptions (Tables 2 and 3),
// Table5Options, Table6Options, or Options itself for a table that reads nothing else. Each embeds
// Options, what every table reads; a table that trains many models embeds Trainings, one with
// snapshot rows Snapshots, and its own settings are its own fields. A field that a reproduce flag
// sets carries that flag's name: `flag:"NAME"` with its `usage` (and `min`) when the command binds
// the field itself (option.Bind, option.SetGiven), `flags:"NAME,..."` when the command maps the
// flags to it by hand. Spec.Takes
// reads these tags, so the command refuses a flag that the table's options do not have.
type TableOptions interface {
	// Common returns the options every table reads.
	Common() *Options
}

// Options are what every table reads. The zero value is the table's default protocol, on
// mini-batches and with one seed, sized to run on a laptop; Paper selects the paper's protocol.
type Options struct {
	// Methods to compare: "mf", "iwvi", "vais" (nil: the table's, Spec.Methods: Tables 1 and 2 all
	// three, Tables 3 and 6 iwvi and vais, Table 5 "standard" and vais).
	Methods []string
	// Runs is the number of seeds per cell, seeds 1..Runs (0: 1; Paper: 10, or fewer when set: the
	// first Runs of the paper's seeds, e.g. to make a table from a store still being filled).
	Runs int
	// Iters is the number of training iterations (0: Table 1 3000, Tables 2 and 3 300, Table 5
	// 400; Paper: 3000, and a value set here runs the paper's protocol that much longer or
	// shorter). Tables 1-3 report rows at Iters/3, 2 Iters/3 and Iters.
	Iters int
	// Paper selects the paper's protocol: 3000 iterations (unless Iters is set) and 10 runs;
	// Tables 1 and 5 full batch (Table 5: all of oilflow and wine); Table 6 10 timed iterations.
	Paper bool
	// Standardize standardises every column of oilflow and wine (changes the metrics' scale).
	Standardize bool
	// Configure, when set, adjusts the configuration of every training after the paper's protocol
	// (protocol.Config) has filled it in: the command applies the flags given on its command line
	// here.
	Configure func(c *model.Config) error
	// OpenBackend, when set, starts the backend for total trainings run jobs at a time; nil opens
	// backend.OpenShared("auto" for the configurations' dtype).
	OpenBackend func(jobs, total int) (backends.Backend, error)
	// Observer, when set, sees the run: the plan, every training's steps and every training
	// finished (Observer's methods; nil: nothing is observed).
	Observer Observer
	// Log, when set, receives one line per finished training.
	Log io.Writer
}

// Common returns o (TableOptions).
func (o *Options) Common() *Options { return o }

// Trainings are the options of the tables made of many trainings run side by side and kept in a
// store (Tables 1, 2, 3 and 5).
type Trainings struct {
	// Datasets to run (nil: the table's, Spec.Datasets: Table 1 oilflow, wine; Table 2 frey,
	// mnist; Table 3 frey; Table 5 oilflow, wine, frey, mnist).
	Datasets []string `flags:"datasets"`
	// Jobs is the number of trainings run at the same time (0: runtime.NumCPU()); results do not
	// depend on it.
	Jobs int `flags:"jobs"`
	// Store, when set, is a directory where the table keeps each finished training (its
	// evaluations, curve and time; for seed 1 what the figures need; Table 5: each fit's scores),
	// filed under a hash of everything that decides its results (table, data, method, seed,
	// configuration, snapshots; Table 5: subset size and held-out fit too). A later run with the
	// same options reads those back instead of training them again, so that a table stopped part
	// way (Ctrl-C, the end of a sitting) continues where it stopped, per seed and method, and ends
	// with the rows of one uninterrupted run. Code changes are not in the key: use Fresh after a
	// change that alters results.
	Store string `flags:"fresh,from"`
	// Fresh trains every training again even when Store holds it (and replaces what it holds).
	Fresh bool
	// StoreOnly reads every training from Store and trains none, writing nothing there: the table
	// so far of a run that is still filling Store (reproduce --from). Trainings that Store lacks
	// are an error (ErrNotStored) that names the first of them; StoreOnly needs Store and excludes
	// Fresh.
	StoreOnly bool
}

// WithTrainings are the options of a table that embed Trainings.
type WithTrainings interface {
	TableOptions
	TrainingOptions() *Trainings
}

// WithSnapshots are the options of a table that embed Snapshots.
type WithSnapshots interface {
	TableOptions
	SnapshotOptions() *Snapshots
}

// TrainingOptions returns t (WithTrainings).
func (t *Trainings) TrainingOptions() *Trainings { return t }

// Snapshots are the options of the tables whose rows are snapshots of each training at Iters/3,
// 2 Iters/3 and Iters (Tables 1-3); their trainings reach Observer.Trained (reproduce
// --checkpoints saves them).
type Snapshots struct {
	// Figures keeps what WriteFigures needs (curves, latents, reconstructions of the first seed).
	Figures bool `flags:"no-figures"`
}

// SnapshotOptions returns s (WithSnapshots).
func (s *Snapshots) SnapshotOptions() *Snapshots { return s }

// Table1Options are Table 1's options.
type Table1Options struct {
	Options
	Trainings
	Snapshots `flags:"checkpoints"`
	// Data runs Table 1 on your own data instead of Datasets: Data.Name names it, Data.X [N, D]
	// holds NaN at missing entries (Data.Mask 0 there) and Data.Labels, when set, gives the 1-NN
	// error. Q defaults to protocol.OwnDataQ(N, D).
	Data *data.Dataset `flags:"data,labels"`
}

// ImageOptions are the options of Tables 2 and 3 (the missing pixels of Frey and MNIST).
type ImageOptions struct {
	Options
	Trainings
	Snapshots `flags:"checkpoints"`
	// Pixels is the image scale: "unit" ([0, 1], also for "") or "raw" (0-255).
	Pixels string `flag:"pixels" usage:"pixel scale, unit ([0, 1]) or raw (0-255)"`
	// Exact also scores the hidden entries of the complete images, at the last row's iterations,
	// under the exact GP conditional at the trained hyperparameters and refitted with a validated
	// predictive noise (eval.Exact, infer.ValidatedExact; the exact and refit columns): per
	// snapshot float64 Choleskys of those rows, a refit's up to 80 of ExactFitRows rows and a
	// latent fit of the validation rows: tens of seconds to minutes per training.
	Exact bool `flag:"exact" usage:"also score the hidden entries under the exact GP conditional on the complete rows, at the trained hyperparameters and refitted with a validated noise (the exact and refit columns; tens of seconds to minutes per training)"`
	// ExactFitRows is the refit's number of rows (0: eval.DefaultExactFitRows).
	ExactFitRows int
}

// Table5Options are Table 5's options.
type Table5Options struct {
	Options
	Trainings
	// Subset is the number of points per dataset, a seeded random subset (0: 300; AllPoints:
	// every point).
	Subset int `flag:"subset" usage:"points per data set (a seeded random subset; 0 = all)" min:"0"`
	// ReconIters is the number of Adam iterations fitting the held-out points' latents (0: 200).
	ReconIters int `flag:"recon-iters" usage:"Adam iterations fitting the latents of the held-out points" min:"1"`
	// Exact also scores the hidden entries of the training points under the exact GP conditional
	// (as ImageOptions.Exact).
	Exact bool `flag:"exact" usage:"also score the hidden entries under the exact GP conditional on the complete rows, at the trained hyperparameters and refitted with a validated noise (the exact and refit columns; tens of seconds to minutes per training)"`
	// ExactFitRows is the refit's number of rows (0: eval.DefaultExactFitRows).
	ExactFitRows int
	// ValidatePPCA adds a baseline line of PPCA with its number of components chosen per seed on
	// validation rows of the training points (baselines.PPCAValidated) beside PPCA with the GPLVMs'
	// Q: ten EM fits per seed, seconds on oil flow and wine.
	ValidatePPCA bool `flag:"validate-ppca" usage:"add PPCA with its number of components chosen per seed on validation rows of the training points to the held-out imputation baselines"`
	// Converge, when not nil, fits every model to its optimum instead of for Iters Adam steps: each
	// Bayesian GPLVM as `train --converge` does (converge.Train; oil flow and wine full batch, so
	// MF by L-BFGS on the collapsed bound and every other bound from that fit by Adam with
	// ConvergeAdam, from a step of at most converge.ContinueStep and with eta_k held fixed unless
	// Configure adapts it; Frey and MNIST by Adam alone on their mini-batches), the standard GPLVM by
	// L-BFGS on its MAP objective (standard.Model.Converge). Each run records how its fit ended
	// (Run5.Convergence).
	Converge     *converge.Options
	ConvergeAdam converge.AdamRule
	// ConvergeProgress, when not nil, returns the progress callback (both stages') of the fit to
	// convergence of the training named, e.g. "oilflow mf seed 1"; nil: Converge's Observe for
	// the L-BFGS stages, none for Adam's.
	ConvergeProgress func(training string) func(converge.Progress)
}

// Table6Options are Table 6's options: it times one training at a time on Frey, keeps nothing.
type Table6Options struct {
	Options
	// Ks are the values of K (nil: 5, 10, 15, 20, 25).
	Ks []int `flag:"ks" usage:"comma-separated K values"`
	// Reps is the number of timed iterations per cell after one warm-up (0: 5; Paper: 10).
	Reps int `flag:"reps" usage:"timed iterations per cell after one warm-up (the median is reported)" min:"1"`
}

// AllPoints as Table5Options.Subset keeps every point of Table 5's datasets.
const AllPoints = -1

// Check returns the error that table t's function would return for o before training (an
// *option.Error, or Configure's error), or nil: the command checks its flags with it before it
// touches any output directory. It builds every configuration but reads no data. Errors also: o
// is not the table's options type (Spec.Options).
func Check(t int, o TableOptions) error {
	s, err := optsFor(t, o)
	if err != nil {
		return err
	}
	return s.check(t)
}

// optsFor returns o as opts after checking that it is table t's options type.
func optsFor(t int, o TableOptions) (opts, error) {
	spec, err := Lookup(t)
	if err != nil {
		return opts{}, err
	}
	want := spec.NewOptions()
	if o == nil || reflect.ValueOf(o).IsNil() {
		o = want
	}
	if reflect.TypeOf(o) != reflect.TypeOf(want) {
		return opts{}, option.Of("Options", "table %d takes %T, not %T", t, want, o)
	}
	return optsOf(o), nil
}

// Copy returns a new TableOptions holding o's values (a shallow copy: slices and the Data are
// shared), for a caller that sets fields without touching o.
func Copy(o TableOptions) TableOptions {
	v := reflect.ValueOf(o).Elem()
	c := reflect.New(v.Type())
	c.Elem().Set(v)
	return c.Interface().(TableOptions)
}

// optsOf copies every field of *o into opts by name (the fields of the embedded structs
// included); TestOptionsTypes checks that every field of the tables' types has its place there.
func optsOf(o TableOptions) opts {
	var s opts
	copyFields(reflect.ValueOf(&s).Elem(), reflect.ValueOf(o).Elem())
	return s
}

// setOpts copies s back into *o, field by name: o with the defaults that withDefaults filled in.
func setOpts(o TableOptions, s opts) {
	copyFields(reflect.ValueOf(o).Elem(), reflect.ValueOf(s))
}

// copyFields sets each field of dst that src has too, by name and type (embedded structs are
// walked, not copied whole).
func copyFields(dst, src reflect.Value) {
	for _, f := range reflect.VisibleFields(dst.Type()) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		if sf, ok := src.Type().FieldByName(f.Name); ok && sf.Type == f.Type && !sf.Anonymous {
			dst.FieldByIndex(f.Index).Set(src.FieldByIndex(sf.Index))
		}
	}
}

// flagsOf returns the reproduce flags that set fields of options type o: `flag` and `flags` tags,
// of every field and embedded struct.
func flagsOf(o TableOptions) []string {
	var names []string
	for _, f := range reflect.VisibleFields(reflect.TypeOf(o).Elem()) {
		if n := f.Tag.Get("flag"); n != "" {
			names = append(names, n)
		}
		if n := f.Tag.Get("flags"); n != "" {
			names = append(names, strings.Split(n, ",")...)
		}
	}
	return names
}

// hasField reports whether options type o has a field named name (an embedded struct's included).
func hasField(o TableOptions, name string) bool {
	_, ok := reflect.TypeOf(o).Elem().FieldByName(name)
	return ok
}
