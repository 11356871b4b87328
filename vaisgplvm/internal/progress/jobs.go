package progress

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Jobs is the status of trainings that run at the same time (a table's jobs): Job gives each
// training its observer, and every interval at most Jobs writes on w one plain line per running
// training (its name, iterations done of its total, -ELBO per point, and the time left at its
// mean seconds per iteration) after a line counting the trainings finished, running and (after
// Plan) waiting, with an estimate of the time left for all of them. Safe for concurrent use; a
// nil w draws nothing.
type Jobs struct {
	mu       sync.Mutex
	w        io.Writer
	interval time.Duration
	last     time.Time
	runs     map[string]*train.Event // running trainings' last events
	done     int
	doneWork [2]float64 // finished trainings' iterations and seconds
	planned  int        // trainings the table will run (0: not told)
	parallel int        // the most trainings seen running at once
}

// NewJobs returns the status of concurrent trainings, written on w every interval at most; the
// first one after interval, when the trainings' paces no longer reflect their first iterations
// alone (which include compiling the graphs: an estimate then is several times too long).
func NewJobs(w io.Writer, interval time.Duration) *Jobs {
	return &Jobs{w: w, interval: interval, runs: map[string]*train.Event{}, last: time.Now()}
}

// Plan tells the status how many trainings will report, in all: the header then counts those
// waiting and estimates the time left for all of them (the waiting ones at the mean iterations
// and seconds per iteration of those seen so far, as many at a time as have run at once).
func (s *Jobs) Plan(trainings int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.planned = trainings
}

// Job returns the observer of the training name, for its train.Trainer.Run.
func (s *Jobs) Job(name string) func(train.Event) {
	return func(e train.Event) { s.update(name, e) }
}

// update records e for the training name and writes the status when interval has passed.
func (s *Jobs) update(name string, e train.Event) {
	if s.w == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Iter >= e.Total {
		delete(s.runs, name)
		s.done++
		s.doneWork[0] += float64(e.Total)
		s.doneWork[1] += float64(e.Total) * e.Seconds
	} else {
		ev := e
		s.runs[name] = &ev
		s.parallel = max(s.parallel, len(s.runs))
	}
	if time.Since(s.last) < s.interval {
		return
	}
	s.last = time.Now()
	fmt.Fprint(s.w, s.text())
}

// text is the status block: the counts and estimate, then one line per running training in name
// order.
func (s *Jobs) text() string {
	var b strings.Builder
	waiting := max(0, s.planned-s.done-len(s.runs))
	if s.planned > 0 {
		fmt.Fprintf(&b, "progress: %d of %d trainings finished, %d running, %d waiting", s.done, s.planned, len(s.runs), waiting)
		if left, ok := s.left(waiting); ok {
			fmt.Fprintf(&b, "; about %v left in all", left)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "progress: %d trainings finished, %d running\n", s.done, len(s.runs))
	}
	names := make([]string, 0, len(s.runs))
	for n := range s.runs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		e := s.runs[n]
		left := time.Duration(float64(e.Total-e.Iter) * e.Seconds * float64(time.Second)).Round(time.Second)
		fmt.Fprintf(&b, "  %-28s %6d/%d  -ELBO/N %10.4f  about %v left\n", n, e.Iter, e.Total, e.NegELBO, left)
	}
	return b.String()
}

// left estimates the wall time until every planned training has finished: the running ones'
// remaining iterations at their own pace, the waiting ones' at the mean iterations and seconds
// per iteration of the trainings seen so far, shared among as many at a time as have run at once.
// ok is false before any training has reported.
func (s *Jobs) left(waiting int) (time.Duration, bool) {
	iters, secs, seen := s.doneWork[0], s.doneWork[1], s.done
	work := 0.0
	for _, e := range s.runs {
		work += float64(e.Total-e.Iter) * e.Seconds
		iters += float64(e.Total)
		secs += float64(e.Total) * e.Seconds
		seen++
	}
	if seen == 0 || iters == 0 {
		return 0, false
	}
	work += float64(waiting) * (iters / float64(seen)) * (secs / iters)
	return time.Duration(work / float64(max(1, s.parallel)) * float64(time.Second)).Round(time.Second), true
}
