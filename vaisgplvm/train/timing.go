package train

import (
	"sort"
	"time"
)

// TimeSteps runs one warm-up step of tr (graph compilation included), then afterWarmUp when not
// nil (bench starts its CPU profile there), then reps timed steps, and returns the warm-up
// seconds, the sorted step seconds and the mean host-side seconds of a timed step
// (Trainer.HostSeconds).
func TimeSteps(tr *Trainer, reps int, afterWarmUp func() error) (first float64, times []float64, host float64, err error) {
	start := time.Now()
	if _, err := tr.Step(); err != nil {
		return 0, nil, 0, err
	}
	first = time.Since(start).Seconds()
	if afterWarmUp != nil {
		if err := afterWarmUp(); err != nil {
			return 0, nil, 0, err
		}
	}
	host0 := tr.HostSeconds
	for i := 0; i < reps; i++ {
		s := time.Now()
		if _, err := tr.Step(); err != nil {
			return 0, nil, 0, err
		}
		times = append(times, time.Since(s).Seconds())
	}
	sort.Float64s(times)
	return first, times, (tr.HostSeconds - host0) / float64(reps), nil
}
