package cmf

import (
	"math"
	"slices"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/memory"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// Config of a GP-LVM-CMF model or one of its baselines. The zero value of a field takes the
// default given in its comment (see WithDefaults).
type Config struct {
	Family     string // "cmf" (default), "meanfield" or "amortised"
	Likelihood string // "gaussian" (default; continuous data) or "bernoulli" (data in {0, 1})
	LatentDim  int    // Dz, dimensions of z (default 5)
	InputDim   int    // R, dimensions of the GP inputs X (cmf; default LatentDim)
	M          int    // inducing inputs (cmf; default 50, at most N)
	Hidden     int    // decoder hidden width (default 200)
	AuxHidden  int    // hidden width of r(X | z) (cmf) and of the encoder (amortised) (default 100)
	TermB      string // "closed" (default; psi statistics) or "mc" (the KL at the sampled f)
	// Bound is the cmf family's bound: "collapsed" (default; u and f integrated out given X, so
	// q(z_i | X_i) = N(A_i kappa~, (k_ii + s^2) I) and the GP's spread is credited in the entropy)
	// or "auxiliary" (the derivation's L: u and f sampled, their spread paid for in term B only).
	Bound string
	// PointVar gives every point its own diagonal variance s_i^2 of q(z | .) (cmf), so that the
	// family contains per-point mean-field exactly (kernel variance -> 0); default one shared s^2.
	PointVar bool
	Samples  int     // noise draws per step (default 1)
	Batch    int     // points per step (default 100, at most N)
	LR       float64 // Adam learning rate (default 1e-3)
	ZVar0    float64 // initial s^2 of q(z | f) (cmf; default 0.1)
	Seed     uint64  // seeds initialisation, mini-batches and noise (default 1)
	DType    string  // "float64" (default) or "float32"
}

// Families lists the accepted Family names.
var Families = []string{"cmf", "meanfield", "amortised"}

// WithDefaults returns c with every zero field set to its default for n data points.
func (c Config) WithDefaults(n int) Config {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Family == "" {
		c.Family = "cmf"
	}
	if c.Likelihood == "" {
		c.Likelihood = "gaussian"
	}
	set(&c.LatentDim, 5)
	set(&c.InputDim, c.LatentDim)
	set(&c.M, min(50, n))
	set(&c.Hidden, 200)
	set(&c.AuxHidden, 100)
	set(&c.Samples, 1)
	set(&c.Batch, min(100, n))
	if c.TermB == "" {
		c.TermB = "closed"
	}
	if c.Bound == "" {
		c.Bound = "collapsed"
	}
	if c.LR == 0 {
		c.LR = 1e-3
	}
	if c.ZVar0 == 0 {
		c.ZVar0 = 0.1
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.DType == "" {
		c.DType = "float64"
	}
	return c
}

// Validate checks c (after WithDefaults) against n data points; the error is an *option.Error
// naming the field and what it accepts.
func (c Config) Validate(n int) error { return c.validate(n, n) }

// validate is Validate with M checked against maxM: n for a model that draws its inducing inputs
// from its data, unbounded for a held-out model (Fit) that takes them from the trained model.
func (c Config) validate(n, maxM int) error {
	switch {
	case !slices.Contains(Families, c.Family):
		return option.Of("Family", "cmf: Family %q: want cmf, meanfield or amortised", c.Family)
	case c.Likelihood != "gaussian" && c.Likelihood != "bernoulli":
		return option.Of("Likelihood", "cmf: Likelihood %q: want gaussian or bernoulli", c.Likelihood)
	case c.LatentDim < 1 || c.InputDim < 1 || c.Hidden < 1 || c.AuxHidden < 1 || c.Samples < 1:
		return option.Errorf([]string{"LatentDim", "InputDim", "Hidden", "AuxHidden", "Samples"}, "cmf: LatentDim %d, InputDim %d, Hidden %d, AuxHidden %d and Samples %d must be >= 1",
			c.LatentDim, c.InputDim, c.Hidden, c.AuxHidden, c.Samples)
	case c.M < 1 || c.M > maxM:
		return option.Of("M", "cmf: M = %d inducing inputs: want 1 <= M <= N = %d", c.M, maxM)
	case c.Batch < 1 || c.Batch > n:
		return option.Of("Batch", "cmf: Batch %d: want 1 <= Batch <= N = %d", c.Batch, n)
	case c.TermB != "closed" && c.TermB != "mc":
		return option.Of("TermB", "cmf: TermB %q: want closed or mc", c.TermB)
	case c.Bound != "collapsed" && c.Bound != "auxiliary":
		return option.Of("Bound", "cmf: Bound %q: want collapsed or auxiliary", c.Bound)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return option.Of("LR", "cmf: learning rate LR %g: want a finite value > 0", c.LR)
	case !(c.ZVar0 > 0) || math.IsInf(c.ZVar0, 0):
		return option.Of("ZVar0", "cmf: initial s^2 ZVar0 %g: want a finite value > 0", c.ZVar0)
	case c.DType != "float64" && c.DType != "float32":
		return option.Of("DType", "cmf: DType %q: want float64 or float32", c.DType)
	}
	return nil
}

// Bytes estimates, within a small factor, the memory in bytes that a model of c (after
// WithDefaults) on n points of d values holds while it trains: every parameter four times (value,
// gradient, Adam's two moments; the decoder, r(X | z) or the encoder, the GP's inducing inputs and
// q(u), the per-point parameters) and, for each of Batch x Samples draws, every activation about
// eight times (autodiff). Sizes are multiplied in float64, so that no product overflows.
func (c Config) Bytes(n, d int) float64 {
	f := func(v ...int) float64 { return memory.Floats(v...) }
	dz, r, h, a := c.LatentDim, c.InputDim, c.Hidden, c.AuxHidden
	params := f(dz+1, h) + f(h+1, d) + f(dz+r+1, a) + f(a+1, 2*(r+dz)) + f(c.M, r+dz) + f(c.M, c.M) + f(n, 2*(r+dz)) + f(n, dz)
	acts := f(c.Batch, c.Samples) * (float64(h) + float64(d) + float64(a) + float64(c.M) + float64(r) + float64(dz)) * 8
	return 4*params + acts
}
