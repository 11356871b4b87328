package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// modelFlags registers the model settings shared by train, reproduce and bench: one flag per
// model.Config field with a flag tag (configFlags), and those that need more than a copy.
type modelFlags struct {
	// v holds the values of the tagged flags (model.DefaultConfig's until parsed).
	v                       model.Config
	q                       int
	dtype                   string
	acceptTarget, adaptRate float64
	adamBeta2               float64
	adaptEta, pointEta      bool
	unwhitened, standardize bool
	// boundSettings are the flags --BOUND-SETTING of the registered bounds' own settings
	// (bounds.Configurable), by flag name.
	boundSettings map[string]*boundSetting
	// names are the flags register added.
	names []string
}

// boundSetting is one bound's setting as a flag.
type boundSetting struct {
	method, name string
	value        float64
}

// register adds the model flags with model.DefaultConfig's values as defaults.
func (f *modelFlags) register(fs *flag.FlagSet) {
	before := map[string]bool{}
	fs.VisitAll(func(fl *flag.Flag) { before[fl.Name] = true })
	defer fs.VisitAll(func(fl *flag.Flag) {
		if !before[fl.Name] {
			f.names = append(f.names, fl.Name)
		}
	})
	d := model.DefaultConfig("vais", 1)
	f.v = d
	option.Bind(fs, &f.v, map[string]string{"kernel": ": " + strings.Join(kernels.Names(), ", ")})
	fs.IntVar(&f.q, "q", 0, "latent dimensions Q (0 = the paper's: 10 oilflow, 9 wine and wine-white, 20 frey, 5 mnist; min(10, D) for --data)")
	fs.StringVar(&f.dtype, "dtype", "float64", "floating-point type of parameters and graphs: float64 or float32")
	fs.BoolVar(&f.adaptEta, "adapt-eta", d.AdaptEta, "adapt log eta_k from --eta toward --accept-target (the Metropolis-Hastings acceptance rate of each transition; the chain stays unadjusted); --adapt-eta=false keeps eta fixed; --learn-eta turns it off")
	fs.Float64Var(&f.acceptTarget, "accept-target", anneal.DefaultTargetAccept, "target acceptance rate of --adapt-eta, in (0, 1)")
	fs.Float64Var(&f.adaptRate, "adapt-rate", anneal.DefaultAdaptRate, "gain of --adapt-eta on log eta_k per iteration, in (0, 1]")
	fs.BoolVar(&f.pointEta, "point-eta", d.PointEta, "with --adapt-eta: give every point its own factor on eta_k, adapted toward equal acceptance rates across points (annealed bounds)")
	fs.Float64Var(&f.adamBeta2, "adam-beta2", model.DefaultAdamBeta2, "decay of Adam's second-moment average, in (0, 1)")
	fs.BoolVar(&f.unwhitened, "unwhitened", !d.Whitened, "parameterise q(u) directly instead of whitened")
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

// configure returns the function that applies the model flags given (set) to a configuration
// (protocol.Training's configure).
func (f *modelFlags) configure(set map[string]bool) func(*model.Config) error {
	return func(c *model.Config) error { return f.apply(c, set) }
}

// explicit returns whether the flag of a model.Config field was given (protocol.Training's
// explicit).
func (f *modelFlags) explicit(set map[string]bool) func(field string) bool {
	return func(field string) bool { return set[flagName(field)] }
}

// apply sets in c the settings of the model flags named in set (every flag when set is nil) and
// validates the result; errors are usage errors.
func (f *modelFlags) apply(c *model.Config, set map[string]bool) error {
	given := func(name string) bool { return set == nil || set[name] }
	if given("q") && f.q != 0 {
		c.Q = f.q
	}
	option.CopyTagged(c, f.v, given)
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
	if given("adapt-eta") || given("learn-eta") || given("paper-eta") {
		c.AdaptEta = f.adaptEta && !f.v.LearnEta && !f.v.PaperEta
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
	return c.Validate() // an *option.Error, which run rewords with the flags
}

// checkGiven refuses model flags given explicitly (set) that a run of methods would not use (one
// rule for every command: an explicit flag the run drops is a usage error naming it): a bound's
// own setting (--uha-damping) when none of methods is that bound, and --adapt-eta with --learn-eta
// or --paper-eta, which turn it off.
func (f *modelFlags) checkGiven(set map[string]bool, methods ...string) error {
	for _, name := range slices.Sorted(maps.Keys(f.boundSettings)) {
		if bs := f.boundSettings[name]; set[name] && !slices.Contains(methods, bs.method) {
			return usagef("--%s is a setting of --method %s, which this run does not train (%s)", name, bs.method, strings.Join(methods, ", "))
		}
	}
	if set["adapt-eta"] && f.adaptEta {
		for _, other := range []string{"learn-eta", "paper-eta"} {
			if set[other] && ((other == "learn-eta" && f.v.LearnEta) || (other == "paper-eta" && f.v.PaperEta)) {
				return usagef("--adapt-eta and --%s exclude each other (--%s sets eta_k its own way): give one", other, other)
			}
		}
	}
	return nil
}

// annealed reports whether the bound named method runs the annealed chain (bounds.Method.Annealed).
func annealed(method string) bool {
	b, err := bounds.Lookup(method)
	return err == nil && b.Annealed()
}

// helpOut, when not nil, receives COMMAND -h's flag list instead of os.Stdout (the flag reference
// test reads it).
var helpOut io.Writer

// parse parses flags, turning errors and stray arguments into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			out := helpOut
			if out == nil {
				out = os.Stdout
			}
			fs.SetOutput(out)
			fmt.Fprintf(out, "vaisgplvm %s flags:\n", fs.Name())
			fs.PrintDefaults()
			return errHelp
		}
		return usagef("%s", strings.ReplaceAll(err.Error(), "flag -", "flag --"))
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

const backendHelp = "backend: auto, go, go:SIMPLEGO_CONFIG, xla, xla:NAME or xla:/abs/plugin.so, auto or an xla spec optionally followed by ,tf32 (TensorFloat-32 float32 products) or ,f64 (added for --dtype float64: XLA's GPU defaults) (default $VAISGPLVM_BACKEND, then auto; xla needs a -tags xla build)"

// setDefaultBatch makes b the default mini-batch size of fs (tables train with mini-batches).
func (f *modelFlags) setDefaultBatch(fs *flag.FlagSet, b int) {
	fs.Lookup("batch").DefValue = fmt.Sprint(b)
	f.v.Batch = b
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
