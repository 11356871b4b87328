package paper

import (
	"context"
	"errors"
	"sort"
	"sync"
)

// runJobs runs do on every job with at most n at a time, seed by seed (so that a run stopped part
// way has whole seeds done, which Options.Store keeps), within a seed the most expensive methods
// first (VAIS, the standard GPLVM, IWVI, then MF: a shorter makespan), and returns the errors
// joined. id gives a job's seed and method. Jobs not yet started when ctx is done, or after a job
// failed, are not run (ctx.Err is returned, or the failures).
func runJobs[T any](ctx context.Context, list []T, n int, id func(*T) (uint64, string), do func(*T) error) error {
	sem := make(chan struct{}, n)
	errs := make([]error, len(list))
	var wg sync.WaitGroup
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
	var mu sync.Mutex
	failed := false
	for _, i := range order {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return errors.Join(append(errs, ctx.Err())...)
		}
		mu.Lock()
		stop := failed
		mu.Unlock()
		if stop {
			<-sem
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			err := do(&list[i])
			mu.Lock()
			errs[i], failed = err, failed || err != nil
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}
