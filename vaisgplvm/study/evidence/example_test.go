package evidence_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/evidence"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Example trains a small VAIS GPLVM (Q = 1, 40 points of 3 noisy functions of a 1-D latent) for 60
// full-batch iterations, estimates the local evidence at its global parameters (400 temperatures,
// 8 runs, with the convergence check at 100), and evaluates every bound at the same parameters:
// each -ELBO lies above the -log evidence, IWVI's closest on this small model.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([][]float64, 40)
	for i := range x {
		t := rng.Float64()*4 - 2
		x[i] = []float64{math.Sin(t) + 0.1*rng.NormFloat64(), math.Cos(t) + 0.1*rng.NormFloat64(), t + 0.1*rng.NormFloat64()}
	}
	cfg := model.DefaultConfig("vais", 1)
	cfg.M, cfg.K, cfg.Batch = 6, 3, 0
	m, err := model.New(cfg, x, nil)
	if err != nil {
		panic(err)
	}
	b, err := backend.New("go")
	if err != nil {
		panic(err)
	}
	tr, err := train.New(m, b)
	if err != nil {
		panic(err)
	}
	if err := tr.Run(context.Background(), 60, train.RunOptions{}); err != nil {
		panic(err)
	}
	ev, err := evidence.Estimate(context.Background(), tr, evidence.Options{Temps: 400, Runs: 8, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("-log evidence per point: %.2f\n", ev.NegLogEvidencePerPoint)
	fmt.Printf("check at %d temperatures; warning: %q\n", ev.Check.Temps, evidence.NotConverged(ev, 0.05))
	bs, err := evidence.Decompose(context.Background(), tr, ev, 5)
	if err != nil {
		panic(err)
	}
	for _, bv := range bs {
		fmt.Printf("%-4s -ELBO per point %.2f, above the evidence: %v\n", bv.Name, bv.NegELBO, *bv.Gap > -3**bv.GapSE)
	}
	// Output:
	// -log evidence per point: 3.37
	// check at 100 temperatures; warning: ""
	// mf   -ELBO per point 3.48, above the evidence: true
	// iwvi -ELBO per point 3.41, above the evidence: true
	// vais -ELBO per point 3.46, above the evidence: true
}
