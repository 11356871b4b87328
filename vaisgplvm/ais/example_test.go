package ais_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/ais"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
)

// Example estimates log Z = log ∫ N(y | h, s2) N(h | 0, 1) dh for one observation y = 1.5 with
// noise variance s2 = 0.25, whose closed form is log N(y | 0, 1 + s2) = -1.9305, by annealing from
// the prior to the posterior through 1000 temperatures, 16 runs.
func Example() {
	const y, s2 = 1.5, 0.25
	b, err := backend.New("go")
	if err != nil {
		panic(err)
	}
	s, err := ais.New(ais.Target{Backend: b, Ctx: mlmodel.NewStore().RootScope(), DType: dtypes.Float64, B: 1, Q: 1,
		LogLik: func(_ *mlmodel.Scope, h *Node) *Node { // h [R, B, Q] -> l(h) [R, B]
			d := AddScalar(Squeeze(h, -1), -y)
			return AddScalar(MulScalar(Square(d), -0.5/s2), -0.5*math.Log(2*math.Pi*s2))
		}})
	if err != nil {
		panic(err)
	}
	res, err := s.Estimate(context.Background(), ais.Options{Temps: 1000, Runs: 16, Seed: 1})
	if err != nil {
		panic(err)
	}
	exact := -0.5*math.Log(2*math.Pi*(1+s2)) - y*y/(2*(1+s2))
	fmt.Printf("exact log Z: %.4f\n", exact)
	fmt.Println("AIS within 3 standard errors of it:", math.Abs(res.LogZ[0]-exact) < 3*res.LogZSE[0])
	fmt.Println("standard error below 0.05 nats:", res.LogZSE[0] < 0.05)
	// Output:
	// exact log Z: -1.9305
	// AIS within 3 standard errors of it: true
	// standard error below 0.05 nats: true
}
