// Package kernels implements the ARD covariance functions of the GPLVM as GoMLX graphs:
// squared exponential (SE-ARD), Matern-3/2 and Matern-5/2 ARD, and linear ARD.
//
// Positive hyperparameters (kernel variance, lengthscales) are stored as unconstrained variables
// and mapped through softplus. All variables live under the context scope "kernel".
package kernels

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// Kernel is a covariance function k(h, h') over Q latent dimensions.
type Kernel interface {
	// Name is the short name used on the command line ("se", "matern32", "matern52", "linear").
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

// New returns the kernel with the given name: "se" (or "rbf"), "matern32", "matern52", "linear".
func New(name string, cfg Config) (Kernel, error) {
	if cfg.Q <= 0 || !(cfg.Variance > 0) || !(cfg.Lengthscale > 0) {
		return nil, fmt.Errorf("kernels: need Q > 0, variance > 0, lengthscale > 0; got %+v", cfg)
	}
	switch name {
	case "se", "rbf":
		return &Stationary{Config: cfg, Kind: "se"}, nil
	case "matern32", "matern52":
		return &Stationary{Config: cfg, Kind: name}, nil
	case "linear":
		return &Linear{Config: cfg}, nil
	}
	return nil, fmt.Errorf("kernels: unknown kernel %q (want se, matern32, matern52 or linear)", name)
}

// positive returns softplus of the unconstrained variable "raw_<name>" under ctx, initialised so
// that its value is init (a scalar or a [Q] vector).
func positive(ctx *mlmodel.Scope, g *Graph, name string, init float64, q int) *Node {
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
