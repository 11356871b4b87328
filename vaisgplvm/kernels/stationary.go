package kernels

import (
	"fmt"
	"math"
	"strings"
	"sync"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Stationary is an ARD stationary kernel k(h, h') = s^2 rho(r^2), r^2 = sum_q (h_q - h'_q)^2 / l_q^2,
// with rho the Profile: exp(-r^2/2) (SE), (1 + sqrt3 r) exp(-sqrt3 r) (Matern-3/2) or
// (1 + sqrt5 r + 5 r^2/3) exp(-sqrt5 r) (Matern-5/2), or any registered by RegisterStationary.
// Variables (scope "kernel"): raw_variance (scalar), raw_lengthscale [Q], and the profile's own.
type Stationary struct {
	Config
	Kind    string  // the registered name, e.g. "se"
	Profile Profile // rho; nil: the profile registered under Kind
}

// Profile maps squared scaled distances r2 [N1, N2] (>= 0) to rho(r2), with rho(0) = 1 and
// rho a positive-definite profile. ctx is the kernel's scope ("kernel"), where a profile keeps its
// own hyperparameters (see Positive).
type Profile func(ctx *mlmodel.Scope, r2 *Node) *Node

var (
	profileMu sync.RWMutex
	profiles  = map[string]Profile{}
)

// RegisterStationary registers the stationary kernel name with profile rho: New(name, cfg) then
// returns a Stationary with cfg's variance and lengthscales. Errors as Register.
func RegisterStationary(name string, rho Profile) error {
	if rho == nil {
		return fmt.Errorf("kernels: RegisterStationary(%q) needs a profile", name)
	}
	if err := Register(name, func(cfg Config) Kernel { return &Stationary{Config: cfg, Kind: name, Profile: rho} }); err != nil {
		return err
	}
	profileMu.Lock()
	profiles[name] = rho
	profileMu.Unlock()
	return nil
}

func init() {
	se := func(_ *mlmodel.Scope, r2 *Node) *Node { return Exp(MulScalar(r2, -0.5)) }
	for name, rho := range map[string]Profile{"se": se, "matern32": matern(3), "matern52": matern(5)} {
		if err := RegisterStationary(name, rho); err != nil {
			panic(err)
		}
	}
	mustRegister("rbf", func(cfg Config) Kernel { return &Stationary{Config: cfg, Kind: "se", Profile: se} }) // an alias
}

// matern returns the Matern-nu/2 profile, nu = 3 or 5.
func matern(nu int) Profile {
	return func(_ *mlmodel.Scope, r2 *Node) *Node {
		// r = sqrt(max(r2, tiny)) keeps the gradient finite on the diagonal (r2 = 0).
		r := Sqrt(Max(r2, Scalar(r2.Graph(), r2.DType(), 1e-30)))
		sr := MulScalar(r, math.Sqrt(float64(nu)))
		if nu == 3 {
			return Mul(OnePlus(sr), Exp(Neg(sr)))
		}
		return Mul(Add(OnePlus(sr), MulScalar(r2, 5.0/3.0)), Exp(Neg(sr)))
	}
}

// rho returns the kernel's profile: Profile, or the one registered under Kind. An unknown Kind
// panics while the graph is built (GoMLX turns it into the Exec's error): it never silently
// computes another kernel.
func (k *Stationary) rho() Profile {
	if k.Profile != nil {
		return k.Profile
	}
	profileMu.RLock()
	p, ok := profiles[k.Kind]
	profileMu.RUnlock()
	if !ok {
		panic(fmt.Errorf("kernels: Stationary of unknown kind %q and no Profile (registered: %s)", k.Kind, strings.Join(Names(), ", ")))
	}
	return p
}

// Name implements Kernel.
func (k *Stationary) Name() string { return k.Kind }

func (k *Stationary) variance(ctx *mlmodel.Scope, g *Graph) *Node {
	return Positive(ctx.At("kernel"), g, "variance", k.Variance, 0)
}

// Lengthscales implements Kernel: [Q].
func (k *Stationary) Lengthscales(ctx *mlmodel.Scope, g *Graph) *Node {
	return Positive(ctx.At("kernel"), g, "lengthscale", k.Lengthscale, k.Q)
}

// Matrix implements Kernel: [N1, Q] x [N2, Q] -> [N1, N2] (Prepare(ctx, x2).Cross(x1)).
func (k *Stationary) Matrix(ctx *mlmodel.Scope, x1, x2 *Node) *Node {
	return k.Prepare(ctx, x2).Cross(x1)
}

// Diag implements Kernel: [N, Q] -> [N], equal to the kernel variance.
func (k *Stationary) Diag(ctx *mlmodel.Scope, x *Node) *Node {
	return constantDiag(x, k.variance(ctx, x.Graph()))
}

// constantDiag returns the kernel variance for every row of x [N, Q]: [N].
func constantDiag(x, variance *Node) *Node { return Mul(OnesLike(ReduceSum(x, -1)), variance) }

// Prepare implements Kernel. The squared distances come from one matrix product of augmented
// inputs, r2 = [|a|^2, 1, a] . [1, |b|^2, -2b]^T with a = x1/l, b = x2/l; this avoids [N1, N2]-sized
// broadcasts, which are slow on the pure-Go backend. The lengthscales, the kernel variance and the
// x2 side [1, |b|^2, -2b]^T are built here, once.
func (k *Stationary) Prepare(ctx *mlmodel.Scope, x2 *Node) Prepared {
	g := x2.Graph()
	ls := InsertAxes(k.Lengthscales(ctx, g), 0)
	b := Div(x2, ls)
	b2 := InsertAxes(ReduceSum(Square(b), -1), -1) // [N2, 1]
	rhsT := Transpose(hstack(OnesLike(b2), b2, MulScalar(b, -2)), 0, 1)
	return &stationaryAt{rho: k.rho(), ctx: ctx.At("kernel"), ls: ls, rhsT: rhsT, variance: k.variance(ctx, g)}
}

// stationaryAt is a Stationary kernel prepared at x2.
type stationaryAt struct {
	rho                Profile
	ctx                *mlmodel.Scope // the kernel's scope, for the profile's hyperparameters
	ls, rhsT, variance *Node          // [1, Q], [Q+2, N2], scalar
}

// Cross implements Prepared: [N1, Q] -> [N1, N2].
func (p *stationaryAt) Cross(x1 *Node) *Node {
	a := Div(x1, p.ls)
	a2 := InsertAxes(ReduceSum(Square(a), -1), -1) // [N1, 1]
	lhs := hstack(a2, OnesLike(a2), a)
	r2 := Max(MatMul(lhs, p.rhsT), ScalarZero(x1.Graph(), x1.DType()))
	return Mul(p.rho(p.ctx, r2), p.variance)
}

// Diag implements Prepared: [N1, Q] -> [N1], equal to the kernel variance.
func (p *stationaryAt) Diag(x1 *Node) *Node { return constantDiag(x1, p.variance) }

// hstack concatenates [N, c_i] blocks along columns. (With GoMLX v0.26.0 it multiplied by constant
// selection matrices, since Concatenate's second derivative needs Pad, which the pure-Go backend
// then lacked.)
func hstack(blocks ...*Node) *Node {
	return Concatenate(blocks, 1)
}
