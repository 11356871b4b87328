package protocol_test

import (
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
)

// The configuration of a training: Table 4's for a built-in dataset (Frey: Q 20, K 25, one shared
// q(u) root, VAIS's stop-gradient chain, mini-batches of 100), and for your own small data the
// defaults fitted to it, with what was changed.
func ExampleTraining() {
	cfg, _, err := protocol.Training("vais", "frey", 1, 1965, 560, nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("frey:", cfg.Q, cfg.K, cfg.M, cfg.Batch, cfg.SharedQSqrt, cfg.StopGrad)

	cfg, notes, err := protocol.Training("iwvi", "", 1, 30, 4, nil, nil) // your own data: 30 points of 4 columns
	if err != nil {
		panic(err)
	}
	fmt.Println("own data:", cfg.Q, cfg.K, cfg.M, cfg.Batch)
	for _, a := range notes {
		fmt.Println(a)
	}
	// Output:
	// frey: 20 25 50 100 true true
	// own data: 4 5 30 0
	// M defaults to 30 here (50 would be more inducing points than the 30 data points)
}
