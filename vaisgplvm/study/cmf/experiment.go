package cmf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/ais"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// ExperimentOptions describe the held-out comparison of GP-LVM-CMF with its baselines on one
// data set; zero fields take the defaults in their comments.
type ExperimentOptions struct {
	Dataset string        `json:"dataset"` // "frey" (Gaussian decoder, pixels in [0, 1]) or "mnist" (the 10k test images binarised, Bernoulli)
	Data    *data.Dataset `json:"-"`       // your own data instead of Dataset (Config.Likelihood says which decoder)
	// Config is shared by every family (its Family field is ignored); Hidden defaults to Kingma &
	// Welling's widths, 200 for frey and 500 for mnist.
	Config   Config      `json:"config"`
	Families []string    `json:"families"`     // default cmf, meanfield, amortised
	Iters    int         `json:"iters"`        // training steps per family (default 2000)
	Test     int         `json:"test"`         // held-out points, drawn with Config.Seed (default 200 for frey, 1000 for mnist)
	FitIters int         `json:"fit_iters"`    // steps fitting the held-out points' locals (default 500)
	Draws    int         `json:"draws"`        // noise draws of each bound (default 10)
	Ks       []int       `json:"ks,omitempty"` // importance samples of the held-out IW bounds (default 1, 10, 100, 1000)
	Reps     int         `json:"reps"`         // repetitions of each IW bound (default 2)
	AIS      ais.Options `json:"ais,omitempty"`
	// AISPoints is how many held-out points get the AIS log-likelihood (0: 100, or all held-out
	// points when fewer; more than Test is an *option.Error), the first ones: the slowest part.
	AISPoints int              `json:"ais_points,omitempty"`
	Backend   backends.Backend `json:"-"`
	// WarmStart starts the cmf family from the trained mean-field family (Model.WarmStart with
	// WarmStartFraction; needs meanfield among the Families, which then trains first, and GP input
	// dim = latent dim): cmf then trains Iters steps of its own after mean-field's Iters.
	WarmStart bool `json:"warm_start"`
	// MarginalKs are the samples of r(X | z) of cmf's held-out marginal bounds L_K
	// (Model.MarginalBound; default 10 and 100; the collapsed bound only): how far the auxiliary
	// r(X | z) keeps the family's bound below its marginal ELBO.
	MarginalKs []int `json:"marginal_ks,omitempty"`
	// FreezeDecoder (with WarmStart) keeps the cmf family's decoder at mean-field's trained one
	// (Model.FreezeDecoder): cmf then fits only its q, and its bounds against mean-field's measure
	// the family as a posterior approximation at the same decoder (their AIS log p(y) agree).
	FreezeDecoder bool `json:"freeze_decoder"`
	// LRs, with two or more values, chooses each family's Adam learning rate by one rule (the
	// validation sweep, sweepLR): every family trains at every rate on the training points less a
	// validation share, fits the validation points' locals, and keeps the rate of the highest
	// validation bound; Config.LR is then not used. Rates that diverge are reported and skipped;
	// while the best is an end of the rates tried, the grid extends past it (MaxSweepExtensions).
	LRs []float64 `json:"lr_sweep,omitempty"`
	// SweepIters are the training steps of each sweep run (default Iters: the budget of the run).
	SweepIters int `json:"sweep_iters,omitempty"`
	// Validation is the share of the training points the sweep holds out (default 0.1).
	Validation float64 `json:"validation,omitempty"`
	// Progress, when not nil, is called after every training step and at every stage; sweep runs
	// report their steps under stage "sweep lr RATE".
	Progress func(family, stage string, iter int, negBound float64) `json:"-"`
}

// FamilyResult is one family's training and held-out evaluation, nats per point (log densities:
// higher is better).
type FamilyResult struct {
	Family     string   `json:"family"`
	LR         float64  `json:"lr"`          // the Adam learning rate it trained at
	TrainBound Estimate `json:"train_bound"` // on the training points, at the end
	TestBound  Estimate `json:"test_bound"`  // on the held-out points, after fitting their locals
	// TestTerms are the held-out bound's terms A, B and C (bound = A - B - C).
	TestTerms *Terms `json:"test_terms"`
	// GP summarises the trained cmf family's GP (kernel variance, s^2, |kappa~|); nil otherwise.
	GP *GPSummary `json:"gp,omitempty"`
	// IW holds the held-out importance-weighted bounds, one per K.
	IW []IWEstimate `json:"iw_bounds"`
	// Marginal holds cmf's held-out marginal bounds L_K, one per ExperimentOptions.MarginalKs
	// (nil for the baselines, whose q(z_i) has no auxiliary variable, and the auxiliary bound).
	Marginal []IWEstimate `json:"marginal_bounds,omitempty"`
	// LogLik is the decoder's log p(y) on the first AISPoints held-out points (AIS; no q), and
	// TestBoundAIS the held-out bound on the same points, for the gap.
	LogLik       Estimate `json:"log_likelihood_ais"`
	TestBoundAIS float64  `json:"test_bound_same_points"`
	// TestBoundAISSE is its MC standard error, approximated from the held-out bound's as
	// TestBound.SE sqrt(held-out points / AISPoints) (independent draws per point).
	TestBoundAISSE float64 `json:"test_bound_same_points_se"`
	AISAccept      float64 `json:"ais_accept_rate"` // mean MALA acceptance of the AIS runs
	// Warnings name what makes a number unreliable, such as an AIS estimate below the family's
	// own bound (see checkAIS).
	Warnings []string  `json:"warnings,omitempty"`
	Curve    []float64 `json:"-"` // -bound per point per training step
	// Rise is how much the training curve still climbed over its last fifth (CurveRise): within
	// two standard errors of zero, the family had flattened at this budget. Nil for fewer than 20
	// steps.
	Rise         *Rise   `json:"final_rise,omitempty"`
	TrainSeconds float64 `json:"train_seconds"`
	FitSeconds   float64 `json:"fit_seconds"`
	EvalSeconds  float64 `json:"eval_seconds"`
	Model        *Model  `json:"-"` // the trained model
	Held         *Model  `json:"-"` // the held-out points' model (Fit)
}

// IWEstimate is the importance-weighted bound with K samples.
type IWEstimate struct {
	K int `json:"k"`
	Estimate
}

// ExperimentResult holds every family's result and the settings that produced them.
type ExperimentResult struct {
	Dataset  string            `json:"dataset"`
	N, P     int               `json:"-"`
	Train    int               `json:"train_points"`
	Test     int               `json:"test_points"`
	Options  ExperimentOptions `json:"options"` // as run, after defaults
	Config   Config            `json:"config"`  // the shared configuration after defaults
	Families []FamilyResult    `json:"families"`
	// Sweep holds the learning-rate sweep's scores (ExperimentOptions.LRs), nil without one.
	Sweep     []LRScore `json:"lr_sweep,omitempty"`
	TestIndex []int     `json:"-"` // the held-out points' rows in the data set
	Labels    []int     `json:"-"` // the data set's labels (nil without)
	ImageRows int       `json:"-"`
	ImageCols int       `json:"-"`
	// Provenance says how the result was made (a command's line, the commit, the machine:
	// experiment.Provenance), set by the caller.
	Provenance map[string]any `json:"provenance,omitempty"`
}

// withDefaults fills the zero fields of o for a data set of n points.
func (o ExperimentOptions) withDefaults(n int) ExperimentOptions {
	if o.Families == nil {
		o.Families = slices.Clone(Families)
	}
	if o.Config.Hidden == 0 {
		o.Config.Hidden = map[bool]int{true: 500, false: 200}[o.Dataset == "mnist"]
	}
	if o.Config.Likelihood == "" && o.Dataset == "mnist" {
		o.Config.Likelihood = "bernoulli"
	}
	if o.Iters == 0 {
		o.Iters = 2000
	}
	if o.Test == 0 {
		o.Test = min(map[bool]int{true: 1000, false: 200}[o.Dataset == "mnist"], n/2)
	}
	if o.FitIters == 0 {
		o.FitIters = 500
	}
	if o.Draws == 0 {
		o.Draws = 10
	}
	if o.Ks == nil {
		o.Ks = []int{1, 10, 100, 1000}
	}
	if o.MarginalKs == nil {
		o.MarginalKs = []int{10, 100}
	}
	if o.Reps == 0 {
		o.Reps = 2
	}
	if o.AIS.Temps == 0 {
		o.AIS.Temps = 500
	}
	if o.AIS.Runs == 0 {
		o.AIS.Runs = 4
	}
	if o.AISPoints == 0 {
		o.AISPoints = min(100, o.Test) // a given AISPoints above Test is Experiment's *option.Error
	}
	if o.Config.Seed == 0 {
		o.Config.Seed = 1
	}
	if o.SweepIters == 0 {
		o.SweepIters = o.Iters
	}
	if o.Validation == 0 {
		o.Validation = 0.1
	}
	return o
}

// LoadExperimentData returns the named data set of the experiments: "frey" (pixels in [0, 1]) or
// "mnist" (the 10k test images binarised).
func LoadExperimentData(name string) (*data.Dataset, error) {
	switch name {
	case "frey":
		return data.Frey(data.Unit)
	case "mnist":
		return data.MNISTBinary()
	}
	return nil, fmt.Errorf("cmf: dataset %q: want frey or mnist", name)
}

// CanWarmStart reports whether o can train cmf from the mean-field family (WarmStart): cmf and
// meanfield among the families (nil: the default, all of them) and the GP's input dimension the
// latent dimension (InputDim 0 or LatentDim). Commands start warm whenever it can: from scratch the
// family stays far behind mean-field (docs/results.md, "GP-LVM-CMF").
func CanWarmStart(o ExperimentOptions) bool {
	fams := o.Families
	if len(fams) == 0 {
		fams = Families
	}
	return slices.Contains(fams, "cmf") && slices.Contains(fams, "meanfield") &&
		(o.Config.InputDim == 0 || o.Config.InputDim == o.Config.LatentDim)
}

// Check validates o before any work: the data set or your data, the families, the sizes. Errors
// are *option.Error naming the fields at fault.
func (o ExperimentOptions) Check() error {
	if o.Data == nil && o.Dataset != "frey" && o.Dataset != "mnist" {
		return option.Of("Dataset", "cmf: Dataset %q: want frey or mnist, or your own data", o.Dataset)
	}
	for _, f := range o.Families {
		if !slices.Contains(Families, f) {
			return option.Of("Family", "cmf: Family %q: want cmf, meanfield or amortised", f)
		}
	}
	for _, k := range o.Ks {
		if k < 1 || k > 100000 {
			return option.Of("Ks", "cmf: Ks: K = %d importance samples: want 1..100000", k)
		}
	}
	for _, k := range o.MarginalKs {
		if k < 0 || k > 10000 {
			return option.Of("MarginalKs", "cmf: MarginalKs: K = %d samples of r(X | z) for the marginal bound: want 0..10000", k)
		}
	}
	for _, lr := range o.LRs {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return option.Of("LRs", "cmf: LRs: learning rate %g in the sweep: want finite values > 0", lr)
		}
	}
	if len(o.LRs) == 1 {
		return option.Of("LRs", "cmf: LRs %g: give two or more rates to choose from (or Config.LR for one)", o.LRs[0])
	}
	if err := o.checkSizes(); err != nil {
		return err
	}
	fams := o.Families
	if len(fams) == 0 {
		fams = Families // the default
	}
	if o.WarmStart && (!slices.Contains(fams, "cmf") || !slices.Contains(fams, "meanfield")) {
		return option.Errorf([]string{"WarmStart", "Family"}, "cmf: a WarmStart trains cmf from the mean-field family: give both cmf and meanfield among the Family values")
	}
	if o.FreezeDecoder && !o.WarmStart {
		return option.Errorf([]string{"FreezeDecoder", "WarmStart"}, "cmf: FreezeDecoder keeps mean-field's decoder: it needs WarmStart")
	}
	if o.WarmStart && o.Config.InputDim != 0 && o.Config.InputDim != o.Config.LatentDim {
		return option.Errorf([]string{"WarmStart", "InputDim"}, "cmf: a WarmStart needs InputDim = the latent dim (%d), not %d", o.Config.LatentDim, o.Config.InputDim)
	}
	return nil
}

// checkSizes refuses sizes no data set can use (0 is a field's default).
func (o ExperimentOptions) checkSizes() error {
	c := o.Config
	zeroOrAtLeast2 := func(n int) bool { return n == 0 || n >= 2 }
	if err := option.Check(
		option.Rule{Field: "LatentDim", Value: float64(c.LatentDim), OK: c.LatentDim >= 0, Want: ">= 1 (0: 5)"},
		option.Rule{Field: "InputDim", Value: float64(c.InputDim), OK: c.InputDim >= 0, Want: ">= 1 (0: LatentDim)"},
		option.Rule{Field: "M", Value: float64(c.M), OK: c.M >= 0, Want: ">= 1 (0: 50)"},
		option.Rule{Field: "Hidden", Value: float64(c.Hidden), OK: c.Hidden >= 0, Want: ">= 1 (0: the dataset's default)"},
		option.Rule{Field: "AuxHidden", Value: float64(c.AuxHidden), OK: c.AuxHidden >= 0, Want: ">= 1 (0: 100)"},
		option.Rule{Field: "Samples", Value: float64(c.Samples), OK: c.Samples >= 0, Want: ">= 1"},
		option.Rule{Field: "Batch", Value: float64(c.Batch), OK: c.Batch >= 0, Want: ">= 1"},
		option.Rule{Field: "LR", Value: c.LR, OK: c.LR >= 0 && !math.IsInf(c.LR, 0), Want: "a finite rate > 0"},
		option.Rule{Field: "Iters", Value: float64(o.Iters), OK: o.Iters >= 0, Want: ">= 1 (0: 2000)"},
		option.Rule{Field: "Test", Value: float64(o.Test), OK: o.Test >= 0, Want: ">= 1 (0: the dataset's default)"},
		option.Rule{Field: "FitIters", Value: float64(o.FitIters), OK: o.FitIters >= 0, Want: ">= 1 (0: 500)"},
		option.Rule{Field: "Draws", Value: float64(o.Draws), OK: zeroOrAtLeast2(o.Draws), Want: ">= 2, for a standard error"},
		option.Rule{Field: "Reps", Value: float64(o.Reps), OK: zeroOrAtLeast2(o.Reps), Want: ">= 2, for a standard error"},
		option.Rule{Field: "AIS.Temps", Value: float64(o.AIS.Temps), OK: o.AIS.Temps >= 0, Want: ">= 1"},
		option.Rule{Field: "AIS.Runs", Value: float64(o.AIS.Runs), OK: zeroOrAtLeast2(o.AIS.Runs), Want: ">= 2, for a standard error"},
		option.Rule{Field: "AISPoints", Value: float64(o.AISPoints), OK: o.AISPoints >= 0, Want: ">= 1 (0: 100)"},
		option.Rule{Field: "SweepIters", Value: float64(o.SweepIters), OK: o.SweepIters >= 0, Want: ">= 1 (0: Iters)"},
		option.Rule{Field: "Validation", Value: o.Validation, OK: o.Validation >= 0 && o.Validation <= 0.5, Want: "a share in (0, 0.5]"},
	); err != nil {
		return option.Within("cmf", err)
	}
	switch {
	case c.TermB != "" && c.TermB != "closed" && c.TermB != "mc":
		return option.Of("TermB", "cmf: TermB %q: want closed or mc", c.TermB)
	case c.Bound != "" && c.Bound != "collapsed" && c.Bound != "auxiliary":
		return option.Of("Bound", "cmf: Bound %q: want collapsed or auxiliary", c.Bound)
	case c.DType != "" && c.DType != "float64":
		return option.Of("DType", "cmf: DType %q: experiments run in float64 only (float32 graphs of the decoder mix types and fail)", c.DType)
	}
	return nil
}

// OwnSettings are the settings (Go names) of GP-LVM-CMF's own family: none of the baselines uses them.
var OwnSettings = []string{"InputDim", "M", "TermB", "Bound", "PointVar", "MarginalKs", "WarmStart", "FreezeDecoder"}

// CheckGiven refuses settings a caller gave explicitly (explicit reports which, by Go name) that
// the experiment would not use: the cmf family's own settings without that family, LR with an LR
// sweep (LRs), Validation and SweepIters without one, MarginalKs with the auxiliary bound.
func (o ExperimentOptions) CheckGiven(explicit func(field string) bool) error {
	if o.Families != nil && !slices.Contains(o.Families, "cmf") {
		for _, f := range OwnSettings {
			if explicit(f) {
				return option.Errorf([]string{f, "Family"}, "cmf: %s sets the cmf family, which the Family list %v leaves out", f, o.Families)
			}
		}
	}
	switch {
	case len(o.LRs) > 0 && explicit("LR"):
		return option.Errorf([]string{"LR", "LRs"}, "cmf: LR is not used with LRs (each family trains at the rate the sweep chooses): give one of them")
	case len(o.LRs) == 0 && (explicit("Validation") || explicit("SweepIters")):
		return option.Errorf([]string{"Validation", "SweepIters", "LRs"}, "cmf: Validation and SweepIters set the LRs sweep, which is not given")
	case explicit("MarginalKs") && o.Config.Bound == "auxiliary":
		return option.Errorf([]string{"MarginalKs", "Bound"}, "cmf: MarginalKs bounds the collapsed bound's marginal; Bound auxiliary has none")
	}
	return nil
}

// Experiment trains each family on the training points (all but Test, drawn with the seed), fits
// the held-out points' locals with the globals frozen, and evaluates on them the bound, the
// importance-weighted bounds and the decoder's AIS log-likelihood. ctx cancels between steps (the
// result so far is returned with ctx's error). Errors: bad options or data, a diverging run.
func Experiment(ctx context.Context, o ExperimentOptions) (*ExperimentResult, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	ds := o.Data
	if ds == nil {
		var err error
		if ds, err = LoadExperimentData(o.Dataset); err != nil {
			return nil, err
		}
	} else if o.Dataset == "" {
		o.Dataset = ds.Name
	}
	n := len(ds.X)
	o = o.withDefaults(n)
	if o.Test < 1 || o.Test >= n {
		return nil, option.Of("Test", "cmf: Test = %d held-out points of %d: want 1 <= Test < N", o.Test, n)
	}
	if o.AISPoints > o.Test {
		return nil, option.Errorf([]string{"AISPoints", "Test"}, "cmf: AISPoints = %d held-out points for AIS, but only Test = %d are held out: want at most %d", o.AISPoints, o.Test, o.Test)
	}
	testIdx, trainIdx := split(n, o.Test, o.Config.Seed, 0x7e57)
	yTrain, yTest := data.Rows(ds.X, trainIdx), data.Rows(ds.X, testIdx)
	res := &ExperimentResult{Dataset: o.Dataset, N: n, P: len(ds.X[0]), Train: len(trainIdx), Test: len(testIdx), Options: o,
		Config: o.Config.WithDefaults(len(trainIdx)), TestIndex: testIdx, Labels: ds.Labels, ImageRows: ds.ImageRows, ImageCols: ds.ImageCols}
	order := slices.Clone(o.Families)
	if o.WarmStart { // mean-field first: cmf starts from it
		slices.SortStableFunc(order, func(a, b string) int { return boolInt(b == "meanfield") - boolInt(a == "meanfield") })
	}
	lrs := map[string]float64{}
	for _, fam := range order {
		lrs[fam] = res.Config.LR
	}
	if len(o.LRs) > 1 {
		var err error
		if res.Sweep, lrs, err = sweepLR(ctx, o, order, yTrain); err != nil {
			return res, err
		}
	}
	var mf *Model
	done := map[string]FamilyResult{}
	for _, fam := range order {
		fr, err := runFamily(ctx, o, fam, lrs[fam], yTrain, yTest, mf)
		if fr != nil {
			done[fam] = *fr
			if fam == "meanfield" {
				mf = fr.Model
			}
		}
		if err != nil {
			for _, f := range o.Families {
				if r, ok := done[f]; ok {
					res.Families = append(res.Families, r)
				}
			}
			return res, fmt.Errorf("family %s: %w", fam, err)
		}
	}
	for _, f := range o.Families {
		res.Families = append(res.Families, done[f])
	}
	return res, nil
}

// runFamily trains one family at learning rate lr and evaluates it on the held-out points; with
// o.WarmStart the cmf family starts from the trained mean-field model mf.
func runFamily(ctx context.Context, o ExperimentOptions, fam string, lr float64, yTrain, yTest [][]float64, mf *Model) (*FamilyResult, error) {
	fr, err := trainFamily(ctx, o, fam, lr, yTrain, mf, "train")
	if err != nil {
		return fr, err
	}
	if fr.TrainBound, err = fr.Model.Bound(o.Draws); err != nil {
		return fr, err
	}
	return fr, evaluateFamily(ctx, o, fr, yTest)
}

// trainFamily builds one family's model at learning rate lr on y (warm-started from mf for cmf
// with o.WarmStart) and trains it o.Iters steps, reporting them to o.Progress under stage.
func trainFamily(ctx context.Context, o ExperimentOptions, fam string, lr float64, y [][]float64, mf *Model, stage string) (*FamilyResult, error) {
	c := o.Config
	c.Family, c.LR = fam, lr
	m, err := New(c, y, o.Backend)
	if err != nil {
		return nil, err
	}
	if o.WarmStart && fam == "cmf" {
		if err := m.WarmStart(mf, WarmStartFraction); err != nil {
			return nil, err
		}
		if o.FreezeDecoder {
			if err := m.FreezeDecoder(); err != nil {
				return nil, err
			}
		}
	}
	fr := &FamilyResult{Family: fam, LR: lr, Model: m}
	if err := m.Train(ctx, o.Iters, o.progress(fam, stage)); err != nil {
		return fr, err
	}
	fr.Curve, fr.TrainSeconds = m.Curve, m.Seconds
	if r, err := CurveRise(m.Curve); err == nil {
		fr.Rise = &r
	}
	return fr, ctx.Err()
}

// report tells o.Progress, if any, that family fam entered stage.
func (o ExperimentOptions) report(fam, stage string) {
	if o.Progress != nil {
		o.Progress(fam, stage, 0, 0)
	}
}

// progress returns a step callback reporting to o.Progress (nil when there is none).
func (o ExperimentOptions) progress(fam, stage string) func(int, float64) {
	if o.Progress == nil {
		return nil
	}
	return func(it int, v float64) { o.Progress(fam, stage, it, v) }
}

// evaluateFamily fits the held-out points' locals of the trained fr.Model and evaluates on them
// the bound and its terms, the importance-weighted and marginal bounds and the AIS log-likelihood.
func evaluateFamily(ctx context.Context, o ExperimentOptions, fr *FamilyResult, yTest [][]float64) error {
	m, fam := fr.Model, fr.Family
	held, err := m.Fit(ctx, yTest, o.FitIters)
	if err != nil {
		return err
	}
	fr.Held, fr.FitSeconds = held, held.Seconds
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	o.report(fam, "evaluate")
	if fr.TestBound, err = held.Bound(o.Draws); err != nil {
		return err
	}
	if fr.TestTerms, err = held.Terms(o.Draws); err != nil {
		return err
	}
	if fr.GP, err = m.GP(); err != nil {
		return err
	}
	for _, k := range o.Ks {
		e, err := held.IWBound(k, o.Reps)
		if err != nil {
			return err
		}
		fr.IW = append(fr.IW, IWEstimate{K: k, Estimate: e})
	}
	if fam == "cmf" && held.Cfg.Bound == "collapsed" {
		for _, k := range o.MarginalKs {
			e, err := held.MarginalBound(k, o.Draws)
			if err != nil {
				return err
			}
			fr.Marginal = append(fr.Marginal, IWEstimate{K: k, Estimate: e})
		}
	}
	if o.AISPoints > 0 {
		o.report(fam, "ais")
		pts := make([]int, o.AISPoints)
		for i := range pts {
			pts[i] = i
			fr.TestBoundAIS += fr.TestBound.Points[i] / float64(o.AISPoints)
		}
		var res *ais.Result
		if fr.LogLik, res, err = held.LogLikelihood(ctx, pts, o.AIS); err != nil {
			return err
		}
		fr.AISAccept = res.Accept
		fr.TestBoundAISSE = fr.TestBound.SE * math.Sqrt(float64(len(yTest))/float64(o.AISPoints))
		if w := res.Warning(); w != "" {
			fr.Warnings = append(fr.Warnings, fam+": the decoder's log p(y): "+w+" (--ais-temps)")
		} else if w := fr.checkAIS(fr.TestBound.Points[:o.AISPoints], res.Temps); w != "" {
			fr.Warnings = append(fr.Warnings, w)
		}
	}
	fr.EvalSeconds = time.Since(start).Seconds()
	return nil
}

// checkAIS returns a warning when the AIS estimate LogLik of log p(y) is below the family's own
// bound on the same points (TestBoundAIS, the mean of bound per point, with its standard error
// TestBoundAISSE) by more than 3 combined standard errors: both are lower bounds on log p(y) in
// expectation, so AIS is then the looser one and did not converge for this decoder (too few
// temperatures for its posterior). It returns "" otherwise.
func (f *FamilyResult) checkAIS(bound []float64, temps int) string {
	ll := f.LogLik
	if ll.PerPoint >= f.TestBoundAIS-3*math.Hypot(ll.SE, f.TestBoundAISSE) {
		return ""
	}
	below := 0
	for i, b := range bound {
		if ll.Points[i] < b {
			below++
		}
	}
	return fmt.Sprintf("%s: the AIS log p(y) %.2f ± %.2f is below the family's own held-out bound %.2f ± %.2f on the same %d points (on %d of them): "+
		"AIS did not converge for this decoder and is no likelihood estimate here; raise the AIS temperatures (now %d)",
		f.Family, ll.PerPoint, ll.SE, f.TestBoundAIS, f.TestBoundAISSE, len(bound), below, temps)
}

// Warnings returns every family's warnings.
func (r *ExperimentResult) Warnings() []string {
	var w []string
	for _, f := range r.Families {
		w = append(w, f.Warnings...)
	}
	return append(w, r.sweepWarnings()...)
}

// sweepWarnings names each family whose chosen learning rate is the lowest or the highest the
// sweep tried (after its extensions): the best rate may lie beyond it.
func (r *ExperimentResult) sweepWarnings() []string {
	var w []string
	for _, f := range r.Families {
		var tried []float64
		for _, s := range r.Sweep {
			if s.Family == f.Family {
				tried = append(tried, s.LR)
			}
		}
		if len(tried) > 1 && (f.LR == slices.Min(tried) || f.LR == slices.Max(tried)) {
			w = append(w, fmt.Sprintf("%s: the learning-rate sweep chose lr %.3g, an end of the rates it tried (%.3g to %.3g, extended %d times at most): "+
				"the best rate may lie beyond it; give a wider --lr-sweep", f.Family, f.LR, slices.Min(tried), slices.Max(tried), MaxSweepExtensions))
		}
	}
	return w
}

// split draws k of the indices 0..n-1 (with seed and stream) and returns them and the others, each
// in increasing order.
func split(n, k int, seed, stream uint64) (drawn, rest []int) {
	perm := rand.New(rand.NewPCG(seed, stream)).Perm(n)
	drawn, rest = perm[:k], perm[k:]
	slices.Sort(drawn)
	slices.Sort(rest)
	return drawn, rest
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
