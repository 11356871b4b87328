package bounds_test

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// mcKLExample is a complete bound: MF whose KL(q0 || p) is estimated on the Monte Carlo draws
// instead of in closed form. bounds.Base answers every other question (draws, chain, weights).
type mcKLExample struct{ bounds.Base }

func (mcKLExample) Name() string { return "mf-mc-kl-example" }
func (mcKLExample) Evaluate(b *bounds.Batch, in bounds.Inputs) (*bounds.Result, *anneal.Chain) {
	return bounds.MF(b, in.Eps0, true), nil
}

// A new bound is one type and one Register call; configurations, the trainer, the command's
// --method and the tables then take its name.
func ExampleRegister() {
	if err := bounds.Register(mcKLExample{}); err != nil {
		panic(err)
	}
	defer bounds.Unregister("mf-mc-kl-example")
	fmt.Println("registered:", slices.Contains(model.Methods(), "mf-mc-kl-example"))

	x := make([][]float64, 30)
	for i := range x {
		t := float64(i)/10 - 1.5
		x[i] = []float64{math.Sin(t), math.Cos(t), t}
	}
	cfg := model.DefaultConfig("mf-mc-kl-example", 2)
	cfg.M, cfg.Samples = 5, 4
	m, err := model.New(cfg, x, nil)
	if err != nil {
		panic(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		panic(err)
	}
	if err := tr.Run(context.Background(), 50, train.RunOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("-ELBO per point fell:", tr.Curve[len(tr.Curve)-1] < tr.Curve[0]-1)
	// Output:
	// registered: true
	// -ELBO per point fell: true
}
