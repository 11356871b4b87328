package bounds

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
)

// Sizes are the two counts a bound's configuration gives: K as the paper uses it (IWVI's
// importance samples, VAIS's annealing steps; unused by MF) and Samples (MF's Monte Carlo samples,
// VAIS's independent chains per point; unused by IWVI). Each Method says what they mean for it.
type Sizes struct {
	K, Samples int
}

// Inputs are the graph inputs of one evaluation of a bound on a batch of B points.
type Inputs struct {
	Sizes    Sizes // the configured sizes
	Eps0     *Node // q0 noise [S, B, Q], S = Method.Draws
	ChainEps *Node // chain noise [Method.ChainSteps, S, B, Q] (unused unless Annealed)
	// Anneal returns the schedule beta_k [K] and the step sizes eta_k ([K], or [K, B] with per-point
	// factors) of an annealed bound; it is called once, after the chain noise is sliced.
	Anneal  func() (betas, etas *Node)
	Options anneal.Options // the chain's options (annealed bounds)
	// STL keeps only the path derivative of log q0(H_0) in the gradient (VAIS; see model.Config.STL).
	STL bool
	// Scope is the bound's own variable scope ("bound/NAME"): a bound creates its trainable
	// parameters there (Scope.VariableWithValue), and they are trained, checkpointed and restored
	// with the model's. Nil where no model built the inputs (tests of the bounds alone).
	Scope *mlmodel.Scope
	// Settings are the values of the bound's settings (Configurable), defaults filled in
	// (ResolveSettings); nil for a bound without settings.
	Settings map[string]float64
}

// Method is one bound the GPLVM can be trained with: everything that differs between MF, IWVI and
// VAIS for the model and the trainer. A new bound is one file with a type that embeds Base (which
// answers every question the way a plain Monte Carlo bound does) and overrides what differs, and
// one Register call (from any package; see train/register_test.go). A bound with settings of its
// own implements Configurable; one with trainable parameters creates them under Inputs.Scope.
type Method interface {
	// Name is the name on the command line and in configurations ("mf", "iwvi", "vais").
	Name() string
	// Draws is S, the number of q0 draws per point in Inputs.Eps0.
	Draws(s Sizes) int
	// ChainSteps is the leading dimension of Inputs.ChainEps (at least 1).
	ChainSteps(s Sizes) int
	// Evaluations is the number of latent points per data point at which one evaluation computes
	// the expected log-likelihood l_n (it decides the projected fit, see model.ProjectedFit).
	Evaluations(s Sizes) int
	// CeilingDraws is the number of noise draws that enter one log weight (model.BoundCeiling).
	CeilingDraws(s Sizes) int
	// Annealed reports whether the bound runs the annealed Langevin chain (and so has a schedule,
	// step sizes and their adaptation).
	Annealed() bool
	// Particles returns s with the number of importance-weighted particles per point set to n
	// (IWVI: K samples; VAIS: Samples chains), for the weight diagnostics (ESS), or false when the
	// bound has no importance weights (MF).
	Particles(s Sizes, n int) (Sizes, bool)
	// Recon returns the sizes of the evaluation whose Result.Recon is the reconstruction latent,
	// given the number of chains wanted for it (only annealed bounds use more than they train with).
	Recon(s Sizes, chains int) Sizes
	// SupportsSTL reports whether the sticking-the-landing gradient (Inputs.STL) is unbiased for
	// this bound at sizes s (VAIS with one chain).
	SupportsSTL(s Sizes) bool
	// Validate checks the sizes, naming the bad one.
	Validate(s Sizes) error
	// Evaluate evaluates the bound on a batch: the Result, and the chain for annealed bounds.
	Evaluate(b *Batch, in Inputs) (*Result, *anneal.Chain)
}

// ChainDefaults are the chain options a bound trains with unless the configuration sets them.
type ChainDefaults struct {
	AdaptEta bool // adapt eta_k toward a target acceptance rate (else: fixed, unless learned)
	StopGrad bool // the scores are constants in the training gradient
	Samples  int  // chains per point (0: the configuration's default, 1)
}

// Defaulted is a bound whose chain defaults differ from VAIS's (eta adapted, the gradient through
// the whole chain); model.DefaultConfig and the command read them.
type Defaulted interface {
	ChainDefaults() ChainDefaults
}

// Base answers Method's questions for a plain Monte Carlo bound with Samples draws of q0 per point
// and no chain: embed it and override what differs (Name and Evaluate at least).
type Base struct{}

func (Base) Draws(s Sizes) int                      { return s.Samples }
func (Base) ChainSteps(Sizes) int                   { return 1 }
func (Base) Evaluations(s Sizes) int                { return s.Samples }
func (Base) CeilingDraws(Sizes) int                 { return 1 }
func (Base) Annealed() bool                         { return false }
func (Base) Particles(s Sizes, _ int) (Sizes, bool) { return s, false }
func (Base) Recon(s Sizes, _ int) Sizes             { return s }
func (Base) SupportsSTL(Sizes) bool                 { return false }
func (Base) Validate(Sizes) error                   { return nil }

// builtin are the bounds of the paper, in the order the tables list them.
// Then ours: the underdamped annealed bound (uha.go), VAIS's chains with resampling (smc.go) and
// VAIS with a learned backward kernel (mcd.go).
var builtin = []Method{mfMethod{}, iwviMethod{}, vaisMethod{}, uhaMethod{}, smcMethod{}, mcdMethod{}}

var (
	registryMu sync.RWMutex
	registry   = map[string]Method{}
	order      []string // the registered names in registration order
)

func init() {
	for _, m := range builtin {
		if err := Register(m); err != nil {
			panic(err)
		}
	}
}

// Register adds a bound under m.Name(). Errors: no name, or a name already registered.
// Unregister removes one (for tests).
func Register(m Method) error {
	registryMu.Lock()
	defer registryMu.Unlock()
	if m == nil || m.Name() == "" {
		return fmt.Errorf("bounds: Register needs a Method with a name")
	}
	if _, ok := registry[m.Name()]; ok {
		return fmt.Errorf("bounds: a method named %q is already registered", m.Name())
	}
	registry[m.Name()] = m
	order = append(order, m.Name())
	return nil
}

// Unregister removes the bound registered as name (nothing when there is none).
func Unregister(name string) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, ok := registry[name]; ok {
		delete(registry, name)
		order = slices.DeleteFunc(order, func(n string) bool { return n == name })
	}
}

// Lookup returns the bound registered as name. Errors: an unknown name (the message lists the
// registered ones).
func Lookup(name string) (Method, error) {
	registryMu.RLock()
	m, ok := registry[name]
	registryMu.RUnlock()
	if ok {
		return m, nil
	}
	return nil, fmt.Errorf("method %q: want %s", name, strings.Join(Names(), ", "))
}

// Names returns the registered bounds' names in registration order ("mf", "iwvi", "vais" first),
// as they are when called.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return slices.Clone(order)
}

// mfMethod is the mean-field bound (MF): Samples Monte Carlo draws of q0, closed-form KL.
type mfMethod struct{ Base }

func (mfMethod) Name() string { return "mf" }
func (mfMethod) Evaluate(b *Batch, in Inputs) (*Result, *anneal.Chain) {
	return MF(b, in.Eps0, false), nil
}

// iwviMethod is the importance-weighted bound (IWVI): K importance samples of q0 per point.
type iwviMethod struct{ Base }

func (iwviMethod) Name() string                           { return "iwvi" }
func (iwviMethod) Draws(s Sizes) int                      { return s.K }
func (iwviMethod) Evaluations(s Sizes) int                { return s.K }
func (iwviMethod) Particles(s Sizes, n int) (Sizes, bool) { s.K = n; return s, true }
func (iwviMethod) Validate(s Sizes) error {
	if s.K < 1 {
		return fmt.Errorf("k = %d: IWVI needs K >= 1 samples", s.K)
	}
	return nil
}
func (iwviMethod) Evaluate(b *Batch, in Inputs) (*Result, *anneal.Chain) {
	return IWVI(b, in.Eps0), nil
}

// vaisMethod is the annealed bound (VAIS): Samples independent chains per point, each K annealed
// Langevin steps from a draw of q0 (K = 0: importance sampling from q0 with Samples draws).
type vaisMethod struct{ Base }

func (vaisMethod) Name() string                           { return "vais" }
func (vaisMethod) ChainSteps(s Sizes) int                 { return max(s.K, 1) }
func (vaisMethod) Evaluations(s Sizes) int                { return s.Samples * (s.K + 1) }
func (vaisMethod) CeilingDraws(s Sizes) int               { return s.K + 1 }
func (vaisMethod) Annealed() bool                         { return true }
func (vaisMethod) Particles(s Sizes, n int) (Sizes, bool) { s.Samples = n; return s, true }
func (vaisMethod) SupportsSTL(s Sizes) bool               { return s.Samples == 1 }
func (vaisMethod) Recon(s Sizes, chains int) Sizes {
	s.Samples = max(s.Samples, chains)
	return s
}
func (vaisMethod) Evaluate(b *Batch, in Inputs) (*Result, *anneal.Chain) {
	var eps []*Node // K slices [S, B, Q] of the chain noise (none for K = 0)
	for i := 0; i < in.Sizes.K; i++ {
		eps = append(eps, Squeeze(Slice(in.ChainEps, AxisElem(i)), 0))
	}
	betas, etas := in.Anneal()
	res, c := VAIS(b, in.Eps0, eps, betas, etas, in.Options)
	if in.STL {
		stickTheLanding(b, in.Eps0, res, in.Options.Precondition)
	}
	return res, c
}
