// Package kernels implements the ARD covariance functions of the GPLVM as GoMLX graphs:
// squared exponential (SE-ARD), Matern-3/2 and Matern-5/2 ARD, and linear ARD, in a registry
// (Register, Names): a new kernel is one file and one registration; a new stationary kernel is its
// profile rho(r^2) and RegisterStationary.
//
// Positive hyperparameters (kernel variance, lengthscales) are stored as unconstrained variables
// and mapped through softplus. All variables live under the context scope "kernel".
package kernels

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// Kernel is a covariance function k(h, h') over Q latent dimensions.
type Kernel interface {
	// Name is the short name used on the command line (Names: "se", "matern32", "linear" ...).
	Name() string
	// Matrix returns k(x1, x2): x1 [N1, Q], x2 [N2, Q] -> [N1, N2].
	Matrix(ctx *mlmodel.Scope, x1, x2 *Node) *Node
	// Diag returns k(x_n, x_n): x [N, Q] -> [N].
	Diag(ctx *mlmodel.Scope, x *Node) *Node
	// Lengthscales returns the ARD lengthscales [Q] (for the linear kernel, 1/sqrt(variance_q)).
	Lengthscales(ctx *mlmodel.Scope, g *Graph) *Node
	// Prepare fixes the second argument x2 [N2, Q] (the inducing inputs Z) and builds everything
	// that depends only on x2 and the hyperparameters once: the annealed chain evaluates k(h, Z)
	// K+1 times per graph, and each repeat would also be differentiated.
	Prepare(ctx *mlmodel.Scope, x2 *Node) Prepared
}

// Prepared is a kernel with its hyperparameters and its second argument x2 [N2, Q] fixed.
type Prepared interface {
	// Cross returns k(x1, x2): [N1, Q] -> [N1, N2], equal to Kernel.Matrix(ctx, x1, x2).
	Cross(x1 *Node) *Node
	// Diag returns k(x_n, x_n): [N1, Q] -> [N1], equal to Kernel.Diag.
	Diag(x1 *Node) *Node
}

// Config holds the initial hyperparameters shared by every kernel.
type Config struct {
	Q           int     // latent dimensions
	Variance    float64 // initial kernel variance (data scale squared), > 0
	Lengthscale float64 // initial lengthscale for every dimension (latent units), > 0
}

// Maker builds a kernel from its initial hyperparameters (already checked: Q > 0, variance > 0,
// lengthscale > 0).
type Maker func(cfg Config) Kernel

var (
	registryMu sync.RWMutex
	registry   = map[string]Maker{}
)

// Register makes name a kernel that New (and the command's --kernel) accepts. Registering a name
// twice is an error; Unregister removes a name (for tests). The built-in kernels register
// themselves: se (alias rbf), matern32 and matern52 (stationary.go), linear (linear.go). A new
// stationary kernel needs only its profile: see RegisterStationary.
func Register(name string, make Maker) error {
	registryMu.Lock()
	defer registryMu.Unlock()
	if name == "" || make == nil {
		return fmt.Errorf("kernels: Register needs a name and a Maker")
	}
	if _, ok := registry[name]; ok {
		return fmt.Errorf("kernels: kernel %q is already registered", name)
	}
	registry[name] = make
	return nil
}

// Unregister removes name from the kernels New accepts.
func Unregister(name string) {
	registryMu.Lock()
	defer registryMu.Unlock()
	delete(registry, name)
}

// Names lists the registered kernel names, sorted, as they are when called.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return slices.Sorted(maps.Keys(registry))
}

// mustRegister registers a built-in kernel.
func mustRegister(name string, make Maker) {
	if err := Register(name, make); err != nil {
		panic(err)
	}
}

// New returns the registered kernel name (Names) with the initial hyperparameters cfg. Errors: an
// unknown name, Q < 1, a variance or lengthscale that is not positive.
func New(name string, cfg Config) (Kernel, error) {
	if cfg.Q <= 0 || !(cfg.Variance > 0) || !(cfg.Lengthscale > 0) {
		return nil, fmt.Errorf("kernels: need Q > 0, variance > 0, lengthscale > 0; got %+v", cfg)
	}
	registryMu.RLock()
	make, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("kernels: unknown kernel %q (want %s)", name, strings.Join(Names(), ", "))
	}
	return make(cfg), nil
}

// Positive returns softplus of the unconstrained variable "raw_<name>" under ctx, initialised so
// that its value is init: a scalar when q is 0, else a [Q] vector. Kernels keep their positive
// hyperparameters (variances, lengthscales, a rational-quadratic alpha ...) this way.
func Positive(ctx *mlmodel.Scope, g *Graph, name string, init float64, q int) *Node {
	raw := vars.InvSoftplus(init)
	var v *mlmodel.Variable
	if q == 0 {
		v = vars.New(ctx, "raw_"+name, raw)
	} else {
		vals := make([]float64, q)
		for i := range vals {
			vals[i] = raw
		}
		v = vars.New(ctx, "raw_"+name, vals)
	}
	return Softplus(v.ValueGraph(g))
}
