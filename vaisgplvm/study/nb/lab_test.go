package nb

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestControlPositions: slider positions map to values and back at both ends and in between,
// clamped to the slider's range.
func TestControlPositions(t *testing.T) {
	c := Control{Name: "beta_1", Min: 0.01, Max: 0.99, Value: 0.5, Steps: 98}
	for _, p := range []int{0, 1, 49, 98} {
		if got := c.position(c.value(p)); got != p {
			t.Errorf("position(value(%d)) = %d", p, got)
		}
	}
	if c.value(0) != 0.01 || c.value(98) != 0.99 || c.position(2) != 98 || c.position(-1) != 0 {
		t.Errorf("ends: value(0) %g, value(98) %g, position(2) %d, position(-1) %d", c.value(0), c.value(98), c.position(2), c.position(-1))
	}
	if (Control{Max: 1}).steps() != 100 {
		t.Error("a control without Steps does not get 100")
	}
}

// TestLabLoop: every batch of moves gets one update with the latest values, in order, and the
// loop ends when the moves end.
func TestLabLoop(t *testing.T) {
	changes := make(chan []float64, 8)
	changes <- []float64{1}
	changes <- []float64{2} // arrives before the first update runs: merged
	var shown []string
	calls := 0
	update := func(v []float64) string {
		calls++
		if calls == 1 {
			changes <- []float64{3}
			close(changes)
		}
		return fmt.Sprint(v)
	}
	labLoop(changes, update, func(h string) { shown = append(shown, h) })
	if strings.Join(shown, " ") != "[2] [3]" {
		t.Errorf("shown %q, want the latest values of each batch: [2] [3]", shown)
	}
}

// TestLabOutsideANotebook: without a live front end Lab shows update's output for the starting
// values once and returns nil; bad controls are refused.
func TestLabOutsideANotebook(t *testing.T) {
	var got [][]float64
	update := func(v []float64) string { got = append(got, v); return "" }
	if err := Lab([]Control{{Name: "a", Max: 1, Value: 0.25}, {Name: "b", Min: -1, Max: 1, Value: 0}}, update); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0][0] != 0.25 || got[0][1] != 0 {
		t.Errorf("update calls %v, want one with the starting values [0.25 0]", got)
	}
	for _, bad := range [][]Control{nil, {{Name: "a", Max: 1, Value: 2}}, {{Name: "a", Min: 1, Max: 0, Value: 0.5}}} {
		if err := Lab(bad, update); err == nil {
			t.Errorf("controls %+v accepted", bad)
		}
	}
}

// TestFrontEndWait: FrontEndWaitEnv's seconds replace FrontEndWait; an empty, zero or malformed
// value leaves it.
func TestFrontEndWait(t *testing.T) {
	for v, want := range map[string]time.Duration{"": FrontEndWait, "0": FrontEndWait, "x": FrontEndWait, "120": 120 * time.Second, "2.5": 2500 * time.Millisecond} {
		t.Setenv(FrontEndWaitEnv, v)
		if got := frontEndWait(); got != want {
			t.Errorf("%s=%q: wait %v, want %v", FrontEndWaitEnv, v, got, want)
		}
	}
}
