package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/paper"
)

// modelFlags registers the model settings shared by train and reproduce.
type modelFlags struct {
	q, m, k, samples, batch    int
	kernel, schedule, dtype    string
	eta, lr, scale0, noise0    float64
	clipGrad, adamBeta2        float64
	acceptTarget, adaptRate    float64
	adaptEta, pointEta         bool
	unwhitened, diag, stopGrad bool
	stl                        bool
	learnEta, standardize      bool
	paperEta                   bool
	precondition, tamed        bool
	sharedQSqrt, meanBias      bool
	// boundSettings are the flags --BOUND-SETTING of the registered bounds' own settings
	// (bounds.Configurable), by flag name.
	boundSettings map[string]*boundSetting
}

// boundSetting is one bound's setting as a flag.
type boundSetting struct {
	method, name string
	value        float64
}

// register adds the model flags with model.DefaultConfig's values as defaults.
func (f *modelFlags) register(fs *flag.FlagSet) {
	d := model.DefaultConfig("vais", 1)
	fs.IntVar(&f.q, "q", 0, "latent dimensions Q (0 = the paper's: 10 oilflow, 9 wine and wine-white, 20 frey, 5 mnist; min(10, D) for --data)")
	fs.IntVar(&f.m, "m", d.M, "inducing points M")
	fs.IntVar(&f.k, "k", d.K, "IWVI samples / VAIS annealing steps K")
	fs.IntVar(&f.samples, "samples", d.Samples, "MF samples / VAIS independent chains")
	fs.IntVar(&f.batch, "batch", d.Batch, "mini-batch size B (0 = full batch)")
	fs.StringVar(&f.kernel, "kernel", d.Kernel, "kernel: "+strings.Join(kernels.Names(), ", "))
	fs.StringVar(&f.dtype, "dtype", "float64", "floating-point type of parameters and graphs: float64 or float32")
	fs.StringVar(&f.schedule, "schedule", d.Schedule, "annealing schedule: linear, sigmoid, power, learned, or custom:b1,b2,...,1")
	fs.Float64Var(&f.eta, "eta", d.Eta, "Langevin step size eta (initial value when adapted or learned; 0 = 0.25/K); relative to q0's spread when preconditioned")
	fs.BoolVar(&f.learnEta, "learn-eta", d.LearnEta, "learn log eta_k by gradient (instead of adapting it)")
	fs.BoolVar(&f.paperEta, "paper-eta", d.PaperEta, "the paper's App. D step-size rule eta_k = 0.9 eta_{k-1} + 0.1 eta_0 / sqrt(G_k) from --eta, G_k the running sum of mean squared scores (of the previous iteration's batch, so the bound stays valid); turns --adapt-eta off")
	fs.BoolVar(&f.adaptEta, "adapt-eta", d.AdaptEta, "adapt log eta_k from --eta toward --accept-target (the Metropolis-Hastings acceptance rate of each transition; the chain stays unadjusted); --adapt-eta=false keeps eta fixed; --learn-eta turns it off")
	fs.Float64Var(&f.acceptTarget, "accept-target", anneal.DefaultTargetAccept, "target acceptance rate of --adapt-eta, in (0, 1)")
	fs.Float64Var(&f.adaptRate, "adapt-rate", anneal.DefaultAdaptRate, "gain of --adapt-eta on log eta_k per iteration, in (0, 1]")
	fs.BoolVar(&f.pointEta, "point-eta", d.PointEta, "with --adapt-eta: give every point its own factor on eta_k, adapted toward equal acceptance rates across points (VAIS)")
	fs.BoolVar(&f.precondition, "precondition", d.Precondition, "run the Langevin chain in q0's whitened coordinates (false = plain Langevin as printed in the paper)")
	fs.BoolVar(&f.tamed, "tamed", d.Tamed, "tamed Langevin drift g/(1+eta|g|) (false = the paper's plain drift)")
	fs.Float64Var(&f.lr, "lr", d.LR, "Adam learning rate")
	fs.Float64Var(&f.clipGrad, "clip-grad", d.ClipGrad, "clip each step's global gradient norm at this many times the RMS of the last ~100 steps' norms (0 = off; e.g. 5)")
	fs.Float64Var(&f.adamBeta2, "adam-beta2", model.DefaultAdamBeta2, "decay of Adam's second-moment average, in (0, 1)")
	fs.Float64Var(&f.scale0, "q0-scale", d.Scale0, "initial standard deviation of q0(h)")
	fs.Float64Var(&f.noise0, "noise0", d.Noise0, "initial noise variance as a fraction of the mean data variance")
	fs.BoolVar(&f.unwhitened, "unwhitened", !d.Whitened, "parameterise q(u) directly instead of whitened")
	fs.BoolVar(&f.diag, "diag-q0", d.DiagQ0, "diagonal q0 covariance")
	fs.BoolVar(&f.sharedQSqrt, "shared-q-sqrt", d.SharedQSqrt, "one q(u) covariance factor shared by all outputs")
	fs.BoolVar(&f.meanBias, "mean-bias", d.MeanBias, "learned constant mean per output (initialised at the column mean) instead of zero-mean GPs")
	fs.BoolVar(&f.stopGrad, "stop-grad", d.StopGrad, "stop gradients through the chain's scores (the bound's value is unchanged); on by default for VAIS on frey, where --stop-grad=false gives the paper's gradient through every step")
	fs.BoolVar(&f.stl, "stl", d.STL, "VAIS, one chain: q0's initial density contributes only its path derivative to the gradient (sticking the landing; the bound's value is unchanged)")
	fs.BoolVar(&f.standardize, "standardize", false, "standardise every column (changes the metrics' scale)")
	f.boundSettings = map[string]*boundSetting{}
	for _, name := range bounds.Names() {
		b, err := bounds.Lookup(name)
		if err != nil {
			continue // unregistered since Names was read
		}
		for _, st := range bounds.SettingsOf(b) {
			bs := &boundSetting{method: name, name: st.Name}
			f.boundSettings[name+"-"+st.Name] = bs
			fs.Float64Var(&bs.value, name+"-"+st.Name, st.Default, st.Usage+" (--method "+name+")")
		}
	}
}

// applyBoundSettings sets c.BoundSettings from the flags --BOUND-SETTING of c's bound that set names
// (all of them when set is nil). A flag of another bound named in set is a usage error.
func (f *modelFlags) applyBoundSettings(c *model.Config, set map[string]bool) error {
	for _, flagName := range slices.Sorted(maps.Keys(f.boundSettings)) {
		bs := f.boundSettings[flagName]
		if set != nil && !set[flagName] {
			continue
		}
		if bs.method != c.Method {
			if set == nil {
				continue
			}
			return usagef("--%s is a setting of --method %s, not of %s", flagName, bs.method, c.Method)
		}
		if c.BoundSettings == nil {
			c.BoundSettings = map[string]float64{}
		}
		c.BoundSettings[bs.name] = bs.value
	}
	return nil
}

// config returns the configuration of a training of method on dataset (its paper Q unless --q)
// with seed: model.DefaultConfig with every model flag applied.
func (f *modelFlags) config(method, dataset string, seed uint64) (model.Config, error) {
	c := model.DefaultConfig(method, paper.Q(dataset))
	c.Seed = seed
	return c, f.apply(&c, nil)
}

// apply sets in c the settings of the model flags named in set (every flag when set is nil) and
// validates the result; errors are usage errors.
func (f *modelFlags) apply(c *model.Config, set map[string]bool) error {
	given := func(name string) bool { return set == nil || set[name] }
	if given("q") && f.q != 0 {
		c.Q = f.q
	}
	copyGiven(given, map[string][2]*int{"m": {&c.M, &f.m}, "k": {&c.K, &f.k}, "samples": {&c.Samples, &f.samples},
		"batch": {&c.Batch, &f.batch}})
	copyGiven(given, map[string][2]*float64{"eta": {&c.Eta, &f.eta}, "lr": {&c.LR, &f.lr},
		"q0-scale": {&c.Scale0, &f.scale0}, "noise0": {&c.Noise0, &f.noise0}, "clip-grad": {&c.ClipGrad, &f.clipGrad}})
	copyGiven(given, map[string][2]*bool{"learn-eta": {&c.LearnEta, &f.learnEta}, "diag-q0": {&c.DiagQ0, &f.diag},
		"stop-grad": {&c.StopGrad, &f.stopGrad}, "stl": {&c.STL, &f.stl}, "precondition": {&c.Precondition, &f.precondition},
		"tamed": {&c.Tamed, &f.tamed}, "shared-q-sqrt": {&c.SharedQSqrt, &f.sharedQSqrt}, "mean-bias": {&c.MeanBias, &f.meanBias}})
	copyGiven(given, map[string][2]*string{"kernel": {&c.Kernel, &f.kernel}, "schedule": {&c.Schedule, &f.schedule}})
	if given("unwhitened") {
		c.Whitened = !f.unwhitened
	}
	if given("adam-beta2") && f.adamBeta2 != model.DefaultAdamBeta2 {
		if f.adamBeta2 == 0 {
			return usagef("--adam-beta2 = 0: want a decay in (0, 1)")
		}
		c.AdamBeta2 = f.adamBeta2 // 0 means the default, so that checkpoints of either spelling match
	}
	if !(f.acceptTarget > 0 && f.acceptTarget < 1) || !(f.adaptRate > 0 && f.adaptRate <= 1) {
		return usagef("--accept-target must be in (0, 1) and --adapt-rate in (0, 1], got %g and %g", f.acceptTarget, f.adaptRate)
	}
	if given("paper-eta") {
		c.PaperEta = f.paperEta
	}
	if given("adapt-eta") || given("learn-eta") || given("paper-eta") {
		c.AdaptEta = f.adaptEta && !f.learnEta && !f.paperEta
	}
	if c.AdaptEta {
		if given("accept-target") {
			c.AcceptTarget = f.acceptTarget
		}
		if given("adapt-rate") {
			c.AdaptRate = f.adaptRate
		}
	}
	if given("point-eta") {
		c.PointEta = f.pointEta && annealed(c.Method)
	}
	if given("dtype") && f.dtype != "float64" {
		c.DType = f.dtype
	}
	if err := f.applyBoundSettings(c, set); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// copyGiven copies, for every flag name that given reports, its value (fields[name][1]) to its
// configuration field (fields[name][0]).
func copyGiven[T any](given func(string) bool, fields map[string][2]*T) {
	for name, p := range fields {
		if given(name) {
			*p[0] = *p[1]
		}
	}
}

// annealed reports whether the bound named method runs the annealed chain (bounds.Method.Annealed).
func annealed(method string) bool {
	b, err := bounds.Lookup(method)
	return err == nil && b.Annealed()
}

// parse parses flags, turning errors and stray arguments into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fs.SetOutput(nil)
			fs.PrintDefaults()
			return usagef("help requested")
		}
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

// openConfigBackend opens the backend named by spec for one training of cfg (its dtype), as a
// usage error when the spec is bad.
func openConfigBackend(spec string, cfg model.Config) (backends.Backend, error) {
	dtype := cfg.DType
	if dtype == "" {
		dtype = "float64"
	}
	b, err := openBackend(spec, dtype, 1, 1)
	if err != nil {
		return nil, backendUsage(spec, err)
	}
	return b, nil
}

// backendUsage names where a bad backend spec came from: --backend, or $VAISGPLVM_BACKEND when the
// flag was not given.
func backendUsage(spec string, err error) error {
	if spec == "" && os.Getenv("VAISGPLVM_BACKEND") != "" {
		return usagef("$VAISGPLVM_BACKEND: %v (unset it or fix it, or give --backend)", err)
	}
	return usagef("--backend: %v", err)
}

const backendHelp = "backend: auto, go, go:SIMPLEGO_CONFIG, xla, xla:NAME or xla:/abs/plugin.so, auto or an xla spec optionally followed by ,tf32 (TensorFloat-32 float32 products) or ,f64 (added for --dtype float64: XLA's GPU defaults) (default $VAISGPLVM_BACKEND, then auto; xla needs a -tags xla build)"

// openBackend starts the backend named by spec for total trainings run jobs at a time
// (backend.OpenShared) and logs which one and why on stderr; for XLA the line also names the PJRT
// plugin, its C API version and the device count. For dtype "float64" an auto or xla spec gets
// the f64 option (backend.ForDType): XLA's GPU defaults, without the exact-float32 settings.
func openBackend(spec, dtype string, jobs, total int) (backends.Backend, error) {
	c, err := backend.OpenShared(backend.ForDType(spec, dtype), jobs, total)
	if err != nil {
		return nil, err
	}
	desc := ""
	if strings.HasPrefix(c.Spec, "xla") {
		desc = "; " + c.Backend.Description()
	}
	fmt.Fprintf(os.Stderr, "backend: %s (%s%s)\n", c.Spec, c.Reason, desc)
	return c.Backend, nil
}

// ownDataQ gives --q, when not set, its default for your own data of n points and d columns
// (paper.OwnDataQ).
func (f *modelFlags) ownDataQ(n, d int) {
	if f.q == 0 {
		f.q = paper.OwnDataQ(n, d)
	}
}

// boundDefaults sets the chain flags that set does not name to method's defaults
// (model.DefaultConfig: a bounds.Defaulted bound's own, e.g. uha's stop-gradient chain). Call it
// before imageDefaults.
func (f *modelFlags) boundDefaults(set map[string]bool, method string) {
	d := model.DefaultConfig(method, 1)
	if !set["adapt-eta"] && !set["learn-eta"] && !set["paper-eta"] {
		f.adaptEta = d.AdaptEta
	}
	if !set["stop-grad"] {
		f.stopGrad = d.StopGrad
	}
}

// imageDefaults applies the preset of paper.Config for method on the image dataset (Table 4's
// K = 25 and one q(u) square root shared by the outputs; for VAIS on frey the stop-gradient chain) to those
// of the flags not in set (the flags given explicitly). Q's default comes from config (20 frey,
// 5 mnist); M = 50 and lr 0.02 are every dataset's defaults.
func (f *modelFlags) imageDefaults(set map[string]bool, method, dataset string) {
	p := paper.Config(method, dataset, 0)
	if !set["k"] {
		f.k = p.K
	}
	if !set["shared-q-sqrt"] {
		f.sharedQSqrt = p.SharedQSqrt
	}
	if !set["stop-grad"] {
		f.stopGrad = p.StopGrad
	}
}

// setDefaultBatch makes b the default mini-batch size of fs (tables train with mini-batches).
func (f *modelFlags) setDefaultBatch(fs *flag.FlagSet, b int) {
	fs.Lookup("batch").DefValue = fmt.Sprint(b)
	f.batch = b
}

// parseSet parses args and returns the names of the flags set explicitly.
func parseSet(fs *flag.FlagSet, args []string) (map[string]bool, error) {
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set, nil
}
