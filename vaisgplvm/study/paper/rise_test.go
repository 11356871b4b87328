package paper

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRiseColumns: riseOf counts the seeds whose curve still moves and, among them, those whose
// bound got worse over the last fifth; riseCell names the second only when there are some.
func TestRiseColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 0))
	curve := func(slope float64) []float64 { // -bound per point per step, noise 1
		c := make([]float64, 1000)
		for i := range c {
			c[i] = slope*float64(i) + rng.NormFloat64()
		}
		return c
	}
	row := Row{Iterations: 1000, Runs: 3, PerRun: make([]RunResult, 3)}
	riseOf(&row, [][]float64{curve(-0.01), curve(0.01), curve(0)}) // improving, falling back, flat
	if row.StillMoving == nil || *row.StillMoving != 2 || row.FallingBack == nil || *row.FallingBack != 1 {
		t.Fatalf("moving %v, falling back %v: want 2 and 1", row.StillMoving, row.FallingBack)
	}
	if c := riseCell(row); !strings.HasSuffix(c, " (2/3, 1 falling back)") {
		t.Errorf("cell %q: want it to end in (2/3, 1 falling back)", c)
	}
	riseOf(&row, [][]float64{curve(-0.01), curve(-0.01), curve(0)})
	if c := riseCell(row); !strings.HasSuffix(c, " (2/3)") {
		t.Errorf("cell %q without a curve falling back: want it to end in (2/3)", c)
	}
}
