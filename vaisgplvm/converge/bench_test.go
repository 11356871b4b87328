package converge

import (
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// BenchmarkCollapsedOilFlow times one evaluation of the collapsed bound and its gradient on oil
// flow (N 1000, D 12, Q 10, M 50: Table 1's MF model, full batch), the unit of an L-BFGS
// iteration's cost (about 1.1-1.5 evaluations per iteration).
func BenchmarkCollapsedOilFlow(b *testing.B) {
	ds, err := protocol.LoadTabular("oilflow", false)
	if err != nil {
		b.Fatal(err)
	}
	c := protocol.Config("mf", "oilflow", 1)
	c.Batch = 0
	m, err := model.New(c, ds.X, nil)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		b.Fatal(err)
	}
	p, err := newProblem(tr)
	if err != nil {
		b.Fatal(err)
	}
	grad := make([]float64, len(p.x0))
	b.ResetTimer()
	for range b.N {
		if _, err := p.eval(p.x0, grad); err != nil {
			b.Fatal(err)
		}
	}
}
