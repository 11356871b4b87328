package progress

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Families returns a progress callback for cmf.ExperimentOptions.Progress on w: one bar per
// family's training (iters steps) and per learning-rate sweep run (sweepIters steps, stages
// "sweep ..."), and a plain line for every other stage (fitting the held-out points, AIS).
func Families(w io.Writer, iters, sweepIters int) func(family, stage string, iter int, negBound float64) {
	var bar *Bar
	return func(family, stage string, iter int, v float64) {
		sweep := strings.HasPrefix(stage, "sweep")
		name, total := family, iters
		if sweep {
			name, total = family+" ("+stage+")", sweepIters
		}
		switch {
		case stage != "train" && !sweep:
			fmt.Fprintf(w, "%s: %s\n", family, stage)
			return
		case iter == 1 || bar == nil:
			bar = New(w, total, name)
		}
		bar.Set(iter, fmt.Sprintf("%s -bound %.2f", name, v))
	}
}

// AIS returns a progress callback for evidence.Options.Progress on w: a plain line at most every
// period (and at the end of each stage) with the AIS stage, the temperatures done and the time
// since the start.
func AIS(w io.Writer, period time.Duration) func(stage string, done, total int) {
	start, last := time.Now(), time.Now()
	return func(stage string, done, total int) {
		if done < total && time.Since(last) < period {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "evidence: %s AIS, temperature %d of %d (%s)\n", stage, done, total, time.Since(start).Round(time.Second))
	}
}
