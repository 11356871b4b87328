package cmf_test

import (
	"context"
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/ais"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/cmf"
)

// Example trains a small GP-LVM-CMF model (latent z in 2 dimensions, Gaussian-MLP decoder with
// 50 hidden units) on 300 Frey faces for 100 steps, fits the local parameters of 10 other faces
// with the trained globals frozen, and compares the held-out bound, its importance-weighted form
// and an AIS estimate of the decoder's log p(y) (nats per face, higher is better).
func Example() {
	frey, err := data.Frey(data.Unit) // [1965, 560], pixels in [0, 1]
	if err != nil {
		panic(err)
	}
	b, err := backend.New("go")
	if err != nil {
		panic(err)
	}
	cfg := cmf.Config{Family: "cmf", LatentDim: 2, M: 20, Hidden: 50, AuxHidden: 20, LR: 3e-3}
	m, err := cmf.New(cfg, frey.X[:300], b)
	if err != nil {
		panic(err)
	}
	if err := m.Train(context.Background(), 100, nil); err != nil {
		panic(err)
	}
	held, err := m.Fit(context.Background(), frey.X[300:310], 100) // 10 held-out faces
	if err != nil {
		panic(err)
	}
	bound, err := held.Bound(5) // averaged over 5 noise draws, with its MC s.e.
	if err != nil {
		panic(err)
	}
	iw, err := held.IWBound(100, 2) // K = 100 importance samples, 2 repetitions
	if err != nil {
		panic(err)
	}
	ll, _, err := held.LogLikelihood(context.Background(), nil, ais.Options{Temps: 300, Runs: 4})
	if err != nil {
		panic(err)
	}
	fmt.Println("training improved the bound:", -m.Curve[len(m.Curve)-1] > -m.Curve[0])
	fmt.Println("bound < IW bound (K = 100) < AIS log p(y):", bound.PerPoint < iw.PerPoint && iw.PerPoint < ll.PerPoint)
	// Output:
	// training improved the bound: true
	// bound < IW bound (K = 100) < AIS log p(y): true
}
