package paper

import (
	"context"
	"errors"
	"sort"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// runJobs runs do on every job with at most n at a time, seed by seed (so that a run stopped part
// way has whole seeds done, which Trainings.Store keeps), within a seed the most expensive methods
// first (VAIS, the standard GPLVM, IWVI, then MF: a shorter makespan), and returns the errors
// joined. id gives a job's seed and method. Jobs not yet started when ctx is done, or after a job
// failed, are not run (ctx.Err is returned, or the failures).
func runJobs[T any](ctx context.Context, list []T, n int, id func(*T) (uint64, string), do func(*T) error) error {
	errs := make([]error, len(list))
	order := make([]int, len(list))
	for i := range order {
		order[i] = i
	}
	cost := map[string]int{"vais": 0, "standard": 1, "iwvi": 2, "mf": 3}
	sort.SliceStable(order, func(a, b int) bool {
		sa, ma := id(&list[order[a]])
		sb, mb := id(&list[order[b]])
		if sa != sb {
			return sa < sb
		}
		return cost[ma] < cost[mb]
	})
	var failed atomic.Bool
	var g errgroup.Group
	g.SetLimit(n)
	for _, i := range order {
		g.Go(func() error { // starts when one of the n slots is free
			if ctx.Err() != nil || failed.Load() {
				return nil // not run
			}
			errs[i] = do(&list[i])
			if errs[i] != nil {
				failed.Store(true)
			}
			return nil
		})
	}
	g.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
