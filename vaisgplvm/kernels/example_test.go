package kernels_test

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/kernels"
)

// A new stationary kernel is its profile rho(r^2) and one registration: here the exponential
// (Matern-1/2) kernel s^2 exp(-r), evaluated at the initial hyperparameters (kernel variance 2,
// lengthscale 1): k(0, 1) = 2 e^-1, k(0, 2) = 2 e^-2.
func ExampleRegisterStationary() {
	exponential := func(_ *mlmodel.Scope, r2 *Node) *Node { return Exp(Neg(Sqrt(AddScalar(r2, 1e-30)))) }
	if err := kernels.RegisterStationary("exponential-example", exponential); err != nil {
		panic(err)
	}
	defer kernels.Unregister("exponential-example")
	k, err := kernels.New("exponential-example", kernels.Config{Q: 1, Variance: 2, Lengthscale: 1})
	if err != nil {
		panic(err)
	}
	out := mlmodel.MustExecOnceN(testutil.Backend(), mlmodel.NewStore(), func(ctx *mlmodel.Scope, x *Node) []*Node {
		return []*Node{k.Matrix(ctx, x, x)}
	}, [][]float64{{0}, {1}, {2}})
	fmt.Printf("%.4f\n", out[0].Value())
	// Output:
	// [[2.0000 0.7358 0.2707] [0.7358 2.0000 0.7358] [0.2707 0.7358 2.0000]]
}
