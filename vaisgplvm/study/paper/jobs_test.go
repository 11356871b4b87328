package paper

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type testJob struct {
	seed   uint64
	method string
}

func testJobs() []testJob {
	var list []testJob
	for _, seed := range []uint64{2, 1} {
		for _, m := range []string{"mf", "iwvi", "vais"} {
			list = append(list, testJob{seed, m})
		}
	}
	return list
}

func jobID(j *testJob) (uint64, string) { return j.seed, j.method }

// TestRunJobs: at most n jobs run at once and n are reached; jobs start seed by seed, the costliest
// method first; after a failure no further job starts and the failure is returned.
func TestRunJobs(t *testing.T) {
	var running, peak atomic.Int32
	var mu sync.Mutex
	var started []testJob
	err := runJobs(context.Background(), testJobs(), 2, jobID, func(j *testJob) error {
		mu.Lock()
		started = append(started, *j)
		mu.Unlock()
		r := running.Add(1)
		for {
			p := peak.Load()
			if r <= p || peak.CompareAndSwap(p, r) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if peak.Load() != 2 {
		t.Fatalf("peak concurrency %d, want 2", peak.Load())
	}
	if len(started) != 6 {
		t.Fatalf("%d jobs started, want 6", len(started))
	}
	// One at a time the order is fixed: seed by seed, the costliest method first.
	var order []testJob
	if err := runJobs(context.Background(), testJobs(), 1, jobID, func(j *testJob) error { order = append(order, *j); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []testJob{{1, "vais"}, {1, "iwvi"}, {1, "mf"}, {2, "vais"}, {2, "iwvi"}, {2, "mf"}}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("start order %v, want %v", order, want)
		}
	}

	boom := errors.New("boom")
	var ran atomic.Int32
	err = runJobs(context.Background(), testJobs(), 1, jobID, func(j *testJob) error {
		ran.Add(1)
		if j.method == "vais" {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || ran.Load() != 1 {
		t.Fatalf("after a failure: err %v, %d jobs ran, want boom and 1", err, ran.Load())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran.Store(0)
	err = runJobs(ctx, testJobs(), 2, jobID, func(*testJob) error { ran.Add(1); return nil })
	if !errors.Is(err, context.Canceled) || ran.Load() != 0 {
		t.Fatalf("cancelled before the start: err %v, %d jobs ran, want context.Canceled and 0", err, ran.Load())
	}
}
