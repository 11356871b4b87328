// Package model assembles the Bayesian GPLVM (kernel, inducing variables, likelihood, latent
// distribution) and evaluates the chosen bound on a batch. It owns no training loop (see train).
package model

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/memory"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// Methods returns the bounds a model can be trained with: the names registered in package bounds
// when it is called ("mf", "iwvi", "vais", then any other registered bound).
func Methods() []string { return bounds.Names() }

// Config is every setting of a training: the model (ModelConfig), its bound (BoundConfig) and
// the optimiser (TrainConfig). The three parts are embedded, so c.K, c.Q and c.LR name their fields
// directly, and JSON (metrics.json, configuration comparisons) lists every field at the top level.
// Defaults (DefaultConfig) follow the paper's Table 4 for oilflow and wine: M = 50, K = 5, lr 0.02.
//
// A field with a `flag` tag is the command's flag of that name (train, reproduce, bench), with the
// `usage` tag as its help and DefaultConfig's value as its default: a new setting is one field.
type Config struct {
	ModelConfig
	BoundConfig
	TrainConfig
}

// ModelConfig is the GPLVM itself: latent dimensions, inducing points, kernel, q(u), q0 and the
// initial noise.
type ModelConfig struct {
	Q int `json:"q"` // latent dimensions
	// M is the number of inducing points.
	M int `json:"m" flag:"m" usage:"inducing points M"`
	// Kernel is a registered kernel (kernels.Names: se, matern32, matern52, linear ...).
	Kernel   string `json:"kernel" flag:"kernel" usage:"kernel"`
	Whitened bool   `json:"whitened"` // whitened q(u) (default true)
	// DiagQ0 makes L_n in q0 diagonal.
	DiagQ0 bool `json:"diag_q0" flag:"diag-q0" usage:"diagonal q0 covariance"`
	// SharedQSqrt shares one square root S across the D outputs of q(u) (see gp.Inducing).
	SharedQSqrt bool `json:"shared_q_sqrt" flag:"shared-q-sqrt" usage:"one q(u) covariance factor shared by all outputs"`
	// MeanBias gives every output a learned constant mean, initialised at the observed column mean
	// (default false: the paper's zero-mean GPs on raw data).
	MeanBias bool `json:"mean_bias" flag:"mean-bias" usage:"learned constant mean per output (initialised at the column mean) instead of zero-mean GPs"`
	// Scale0 is the initial standard deviation of q0.
	Scale0 float64 `json:"q0_scale0" flag:"q0-scale" usage:"initial standard deviation of q0(h)"`
	// Noise0 is the initial noise variance as a fraction of the mean data variance.
	Noise0 float64 `json:"noise0" flag:"noise0" usage:"initial noise variance as a fraction of the mean data variance"`
	Jitter float64 `json:"jitter"` // relative jitter on Kuu
	// DType is the floating-point type of every parameter and graph: "float64" (default, also
	// when empty) or "float32".
	DType string `json:"dtype,omitempty"`
}

// BoundConfig is the bound and, for the annealed bound, its chain. What K and Samples mean is the
// bound's (bounds.Sizes): K is the paper's K (IWVI's importance samples, VAIS's annealing steps),
// Samples is MF's Monte Carlo draws or VAIS's independent chains per point.
type BoundConfig struct {
	Method string `json:"method"` // a bound registered in package bounds: "mf", "iwvi" or "vais"
	// K is IWVI's importance samples or an annealed bound's steps.
	K int `json:"k" flag:"k" usage:"IWVI samples / annealing steps K"`
	// Samples is MF's Monte Carlo samples, or an annealed bound's independent chains S (default 1).
	Samples int `json:"samples" flag:"samples" usage:"MF samples / annealed bounds' independent chains"`
	// Schedule is the annealing schedule beta_k (anneal.ParseSchedule).
	Schedule string `json:"schedule" flag:"schedule" usage:"annealing schedule: linear, sigmoid, power, learned, or custom:b1,b2,...,1"`
	// Eta is the Langevin step size (initial when adapted or learned); 0 = EtaTimesK / K.
	Eta float64 `json:"eta" flag:"eta" usage:"Langevin step size eta (initial value when adapted or learned; 0 = 0.25/K); relative to q0's spread when preconditioned"`
	// LearnEta learns log eta_k by gradient.
	LearnEta bool `json:"learn_eta" flag:"learn-eta" usage:"learn log eta_k by gradient (instead of adapting it)"`
	// PaperEta uses the paper's App. D step-size rule (anneal.StepSize.PaperD) from Eta; exclusive
	// with LearnEta and AdaptEta.
	PaperEta bool `json:"paper_eta,omitempty" flag:"paper-eta" usage:"the paper's App. D step-size rule eta_k = 0.9 eta_{k-1} + 0.1 eta_0 / sqrt(G_k) from --eta, G_k the running sum of mean squared scores (of the previous iteration's batch, so the bound stays valid); turns --adapt-eta off"`
	// AdaptEta adapts log eta_k toward a target acceptance rate (see anneal.StepSize.Adaptive);
	// AcceptTarget and AdaptRate tune it (0: anneal.DefaultTargetAccept, anneal.DefaultAdaptRate).
	AdaptEta     bool    `json:"adapt_eta,omitempty"`
	AcceptTarget float64 `json:"accept_target,omitempty"`
	AdaptRate    float64 `json:"adapt_rate,omitempty"`
	// PointEta (with AdaptEta) gives every point its own factor on eta_k, adapted toward equal
	// acceptance rates across points (see anneal.StepSize.PerPoint; kept with the latents).
	PointEta bool `json:"point_eta,omitempty"`
	// StopGrad stops gradients through the chain's scores.
	StopGrad bool `json:"stop_grad" flag:"stop-grad" usage:"stop gradients through the chain's scores (the bound's value is unchanged); on by default for VAIS on frey, where --stop-grad=false gives the paper's gradient through every step"`
	// STL ("sticking the landing", Roeder et al. 2017) lets q0's initial density log q0(H_0) in
	// the VAIS weight contribute its path derivative only: its score term, whose expectation is
	// 0, is dropped from the gradient (the bound's value is unchanged). VAIS with one chain
	// (samples 1) only: with several chains the dropped term no longer has expectation 0.
	STL bool `json:"stl,omitempty" flag:"stl" usage:"VAIS, one chain: q0's initial density contributes only its path derivative to the gradient (sticking the landing; the bound's value is unchanged)"`
	// BoundSettings are values of the bound's own settings (bounds.Configurable: names and
	// defaults), by name; a setting not given takes its default.
	BoundSettings map[string]float64 `json:"bound_settings,omitempty"`
	// Precondition runs the Langevin chain in q0's whitened coordinates (default true; see
	// anneal.Options.Precondition). Eta is then relative to q0's spread.
	Precondition bool `json:"precondition" flag:"precondition" usage:"run the Langevin chain in q0's whitened coordinates (false = plain Langevin as printed in the paper)"`
	// Tamed uses the tamed drift g / (1 + eta |g|) in the chain (default true; see
	// anneal.Options.Tamed).
	Tamed bool `json:"tamed" flag:"tamed" usage:"tamed Langevin drift g/(1+eta|g|) (false = the paper's plain drift)"`
}

// TrainConfig is the optimiser and the randomness: Adam's learning rate and second-moment decay,
// gradient clipping, the mini-batch size and the seed.
type TrainConfig struct {
	// LR is Adam's learning rate.
	LR float64 `json:"lr" flag:"lr" usage:"Adam learning rate"`
	// ClipGrad clips the global norm of each step's gradient at ClipGrad times the root mean square
	// of the recent (clipped) norms (see train's gradient clipping); 0 = off (the default).
	ClipGrad float64 `json:"clip_grad,omitempty" flag:"clip-grad" usage:"clip each step's global gradient norm at this many times the RMS of the last ~100 steps' norms (0 = off; e.g. 5)"`
	// NatGrad, when > 0, trains q(u) by natural-gradient steps of this size in (0, 1]
	// (gp.NaturalStep: Hensman et al. 2013; Salimbeni et al. 2018) instead of Adam, which then
	// trains every other parameter; 0 = Adam for all (the default, the paper's). One q(u) factor
	// per output only (SharedQSqrt false).
	NatGrad float64 `json:"natgrad,omitempty" flag:"natgrad" usage:"train q(u) by natural-gradient steps of this size in (0, 1] instead of Adam (0 = Adam for every parameter; 1 is the optimal q(u) of each step's full-batch draws; try 0.1-0.5 with mini-batches); needs one q(u) factor per output"`
	// AdamBeta2 is the decay of Adam's second-moment average, in (0, 1); 0 = DefaultAdamBeta2.
	AdamBeta2 float64 `json:"adam_beta2,omitempty"`
	// Batch is the mini-batch size B; 0 = full batch.
	Batch int    `json:"batch" flag:"batch" usage:"mini-batch size B (0 = full batch)"`
	Seed  uint64 `json:"seed"` // seeds initialisation, batches and noise
}

// DefaultConfig returns the paper's settings (Table 4) for a method on a dataset with q latent
// dimensions: M = 50, K = 5, lr 0.02, SE-ARD kernel, whitened q(u), full-rank q0, linear schedule,
// and our chain: preconditioned, tamed, eta adapted from EtaTimesK / K (set AdaptEta false for a
// fixed eta, and when setting LearnEta).
//
// A bound with chain defaults of its own (bounds.Defaulted: the underdamped bound trains with the
// stop-gradient chain) sets AdaptEta and StopGrad.
func DefaultConfig(method string, q int) Config {
	c := Config{
		ModelConfig: ModelConfig{Q: q, M: 50, Kernel: "se", Whitened: true, Scale0: 0.1, Noise0: 0.1},
		BoundConfig: BoundConfig{Method: method, K: 5, Samples: 1, Schedule: "linear", Eta: 0, AdaptEta: true,
			Precondition: true, Tamed: true},
		TrainConfig: TrainConfig{LR: 0.02, Seed: 1},
	}
	if b, err := bounds.Lookup(method); err == nil {
		if d, ok := b.(bounds.Defaulted); ok {
			cd := d.ChainDefaults()
			c.AdaptEta, c.StopGrad = cd.AdaptEta, cd.StopGrad
			if cd.Samples > 0 {
				c.Samples = cd.Samples
			}
		}
	}
	return c
}

// Equal reports whether c and o are the same configuration (bound settings compared by value; an
// empty and a nil map are equal).
func (c Config) Equal(o Config) bool {
	if !maps.Equal(c.BoundSettings, o.BoundSettings) {
		return false
	}
	c.BoundSettings, o.BoundSettings = nil, nil
	return reflect.DeepEqual(c, o)
}

// Diff returns the Go names of the fields in which c and o differ, in the order of Config's
// fields, embedded ones included (BoundSettings compared as one field).
func (c Config) Diff(o Config) []string {
	var d []string
	cv, ov := reflect.ValueOf(c), reflect.ValueOf(o)
	for _, f := range reflect.VisibleFields(cv.Type()) {
		if f.Anonymous {
			continue // its fields are visited one by one
		}
		if f.Name == "BoundSettings" {
			if !maps.Equal(c.BoundSettings, o.BoundSettings) {
				d = append(d, f.Name)
			}
		} else if !reflect.DeepEqual(cv.FieldByIndex(f.Index).Interface(), ov.FieldByIndex(f.Index).Interface()) {
			d = append(d, f.Name)
		}
	}
	return d
}

// MaxK bounds K (annealing steps of VAIS, importance samples of IWVI): both are unrolled into the
// training graph when it is built.
const MaxK = 1000

// MaxSamples bounds Samples (MF draws, VAIS independent chains per point).
const MaxSamples = 10000

// DefaultAdamBeta2 is Adam's usual second-moment decay (Kingma & Ba 2015; GoMLX's, PyTorch's and
// GPflow's default), used when Config.AdamBeta2 is 0.
const DefaultAdamBeta2 = 0.999

// EtaTimesK is the default total chain time eta * K: with the preconditioned, tamed chain the step
// size defaults to EtaTimesK / K (0.05 for K = 5, 0.01 for K = 25), the best of a grid on oilflow
// and on Frey (docs/benchmarks.md, "Figures behind the code's choices"); with AdaptEta it is only
// the starting value.
const EtaTimesK = 0.25

// StepSize returns the Langevin step size: Eta, or EtaTimesK / K when Eta is 0.
func (c *Config) StepSize() float64 {
	if c.Eta != 0 {
		return c.Eta
	}
	return EtaTimesK / float64(max(c.K, 1))
}

// StepRule returns the chain's step-size rule: eta from StepSize, fixed, learned or adaptive.
func (c *Config) StepRule() anneal.StepSize {
	return anneal.StepSize{Eta0: c.StepSize(), Learned: c.LearnEta, Adaptive: c.AdaptEta, PaperD: c.PaperEta,
		TargetAccept: c.AcceptTarget, AdaptRate: c.AdaptRate, PerPoint: c.PointEta}
}

// Validate checks every setting and names the first bad one. Errors are *option.Error naming the
// Config field at fault.
func (c *Config) Validate() error { return c.validateWith(Components{}) }

// validateWith is Validate with the kernel and the bound of parts where they are given.
func (c *Config) validateWith(parts Components) error {
	method := parts.Bound
	if method == nil {
		var err error
		if method, err = bounds.Lookup(c.Method); err != nil {
			return option.Of("Method", "Method: %v", err)
		}
	}
	if c.Q <= 0 {
		return option.Of("Q", "Q = %d: want > 0", c.Q)
	}
	if c.M <= 0 {
		return option.Of("M", "M = %d: want > 0", c.M)
	}
	if err := method.Validate(bounds.Sizes{K: c.K, Samples: c.Samples}); err != nil {
		return option.Errorf([]string{"K", "Samples"}, "K = %d, Samples = %d: %v", c.K, c.Samples, err)
	}
	if _, err := bounds.ResolveSettings(method, c.BoundSettings); err != nil {
		return option.Errorf(nil, "%v", err) // names the bound's setting (a command's flag --BOUND-SETTING)
	}
	if c.K < 0 {
		return option.Of("K", "K = %d: want >= 0", c.K)
	}
	if c.Samples < 1 {
		return option.Of("Samples", "Samples = %d: want >= 1", c.Samples)
	}
	if c.K > MaxK {
		return option.Of("K", "K = %d: the annealing steps and importance samples are unrolled into the training graph "+
			"(hundreds of operations each), so K > %d would take minutes to gigabytes to build; use K <= %d", c.K, MaxK, MaxK)
	}
	if c.Samples > MaxSamples {
		return option.Of("Samples", "Samples = %d: want <= %d draws per point", c.Samples, MaxSamples)
	}
	if _, err := parts.kernel(c.Kernel)(kernels.Config{Q: c.Q, Variance: 1, Lengthscale: 1}); err != nil {
		return option.Of("Kernel", "Kernel: %v", err)
	}
	if method.Annealed() {
		if err := c.validateChain(); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"LR", c.LR}, {"Scale0", c.Scale0}, {"Noise0", c.Noise0}} {
		if !(p.v > 0) || math.IsInf(p.v, 0) {
			return option.Of(p.name, "%s = %g: want a positive finite number", p.name, p.v)
		}
	}
	if c.Batch < 0 {
		return option.Of("Batch", "Batch = %d: want >= 0 (0 = full batch)", c.Batch)
	}
	if !(c.NatGrad >= 0 && c.NatGrad <= 1) {
		return option.Of("NatGrad", "NatGrad = %g: want a step in (0, 1], or 0 for Adam", c.NatGrad)
	}
	if c.NatGrad > 0 && c.SharedQSqrt {
		return option.Errorf([]string{"NatGrad", "SharedQSqrt"}, "NatGrad needs one q(u) factor per output: turn SharedQSqrt off")
	}
	if c.DType != "" && c.DType != "float64" && c.DType != "float32" {
		return option.Of("DType", "DType %q: want float64 or float32", c.DType)
	}
	if c.STL && !method.SupportsSTL(bounds.Sizes{K: c.K, Samples: c.Samples}) {
		return option.Errorf([]string{"STL", "Method", "Samples"}, "STL: the sticking-the-landing gradient is unbiased for VAIS with one chain only "+
			"(Method %s, Samples %d); use Method vais with Samples 1", c.Method, c.Samples)
	}
	if b := c.AdamBeta2; b != 0 && !(b > 0 && b < 1) {
		return option.Of("AdamBeta2", "AdamBeta2 = %g: want a decay in (0, 1)", b)
	}
	if !(c.ClipGrad == 0 || c.ClipGrad >= 1) || math.IsInf(c.ClipGrad, 0) {
		return option.Of("ClipGrad", "ClipGrad = %g: want 0 (off) or a finite factor >= 1", c.ClipGrad)
	}
	if !(c.Jitter >= 0) || math.IsInf(c.Jitter, 0) {
		return option.Of("Jitter", "Jitter = %g: want >= 0", c.Jitter)
	}
	return nil
}

// validateChain checks an annealed bound's schedule and step-size rule.
func (c *Config) validateChain() error {
	s, err := anneal.ParseSchedule(c.Schedule)
	if err != nil {
		return option.Of("Schedule", "Schedule: %v", err)
	}
	if f, ok := s.(anneal.Fixed); ok && c.K > 0 {
		if _, err := f.BetaValues(c.K); err != nil {
			return option.Errorf([]string{"Schedule", "K"}, "Schedule with K = %d: %v", c.K, err)
		}
	}
	if c.K == 0 && strings.HasPrefix(c.Schedule, "custom:") {
		return option.Errorf([]string{"Schedule", "K"}, "Schedule %s with K = 0: a custom schedule gives one beta per annealing step; set K to its length", c.Schedule)
	}
	if err := c.StepRule().Validate(); err != nil {
		return option.Errorf([]string{"Eta", "AcceptTarget", "AdaptRate"}, "step size: %v", err)
	}
	return nil
}

// StepBytes estimates, within a small factor, the memory in bytes that one training step on n
// points of d columns holds: per latent point at which the bound evaluates the likelihood
// (bounds.Method.Evaluations) the rows of K_uf [M], the predictive moments [D] and the latents
// [Q] in float64, for every intermediate that autodiff keeps (about 8 of each). Sizes are
// multiplied in float64, so that no product overflows.
func (c *Config) StepBytes(n, d int) float64 {
	draws := float64(c.Samples) * float64(max(c.K, 1))
	if b, err := bounds.Lookup(c.Method); err == nil {
		draws = float64(b.Evaluations(bounds.Sizes{K: c.K, Samples: c.Samples}))
	}
	return 8 * memory.Floats(c.batchOf(n)) * draws * float64(c.M+d+c.Q)
}

// batchOf returns the points per step on n points (Batch, or n for a full batch).
func (c *Config) batchOf(n int) int {
	if c.Batch <= 0 || c.Batch > n {
		return n
	}
	return c.Batch
}

// CheckMemory refuses (*option.Error) a configuration whose training step on n points of d
// columns would not fit in this machine's memory (StepBytes).
func (c *Config) CheckMemory(n, d int) error {
	what := fmt.Sprintf("a training step (%s, K = %d, %d samples, %d points per step)", c.Method, c.K, c.Samples, c.batchOf(n))
	return memory.Check(what, c.StepBytes(n, d), "K", "Samples", "Batch")
}
