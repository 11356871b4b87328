package paper_test

import (
	"context"
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
)

// ExampleTable1 runs a seconds-long Table 1 on oil flow (3 iterations, 8 inducing points) and
// prints the paper's -ELBO ordering beside the check of ours. paper.Table1Options{} runs the
// default size (3000 iterations, one seed); Options{Paper: true} the paper's protocol. Each table
// has its own options type (Table1Options, ImageOptions, Table5Options, Table6Options), all of
// them embedding Options.
func ExampleTable1() {
	o := paper.Table1Options{Options: paper.Options{Iters: 3, Configure: func(c *model.Config) error { c.M = 8; return nil }}}
	o.Datasets = []string{"oilflow"} // from the embedded Trainings
	res, err := paper.Table1(context.Background(), o)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(res.Rows), "rows: 3 methods x 3 snapshots")
	fmt.Println("paper:", res.Claims[0].Paper)
	// Output:
	// 9 rows: 3 methods x 3 snapshots
	// paper: VAIS < IWVI < MF (-6.82 < -4.13 < -3.07) at 3000 iterations, 10 runs
}
