package train_test

import (
	"context"
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Example trains VAIS-GPLVM on oil flow for a few mini-batch iterations and evaluates it: the bound
// per point, the reconstruction, and the latents' 1-NN error against the flow-regime labels.
func Example() {
	ds, err := data.Load("oilflow") // [1000, 12], embedded in the module
	if err != nil {
		panic(err)
	}
	cfg := model.DefaultConfig("vais", 10) // Table 4: M = 50, K = 5 annealing steps, lr 0.02
	cfg.Batch = 100
	b, err := backend.New("go") // the pure-Go backend; "auto" picks XLA on a GPU when built with -tags xla
	if err != nil {
		panic(err)
	}
	// model.New, New and Run in one call; nil mask: every entry observed. A cancelled context
	// stops it after the step in progress.
	tr, err := train.Fit(context.Background(), cfg, ds.X, nil, b, 30, train.RunOptions{})
	if err != nil {
		panic(err)
	}
	ev, err := eval.Evaluate(tr, 3, ds.Labels) // -ELBO averaged over 3 noise draws
	if err != nil {
		panic(err)
	}
	fmt.Printf("iterations: %d, latents: %d x %d\n", tr.Iter, len(ev.Latent), len(ev.Latent[0]))
	fmt.Println("-ELBO per point improved:", ev.NegELBO < tr.Curve[0])
	fmt.Println("1-NN error below 10%:", *ev.OneNNError < 0.1)
	// Output:
	// iterations: 30, latents: 1000 x 10
	// -ELBO per point improved: true
	// 1-NN error below 10%: true
}
