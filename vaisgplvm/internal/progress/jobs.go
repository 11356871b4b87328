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

// Jobs returns, for trainings that run at the same time (a table's jobs), an observer factory:
// call it once per training with the training's name, and pass what it returns to that training's
// train.Trainer.Run. Every interval at most, it writes on w one plain line per running training
// (its name, iterations done of its total, -ELBO per point, and the time left at its mean seconds
// per iteration) after a line counting the trainings finished and running. Safe for concurrent
// use; a nil w draws nothing.
func Jobs(w io.Writer, interval time.Duration) func(name string) func(train.Event) {
	s := &jobStatus{w: w, interval: interval, runs: map[string]*train.Event{}}
	return func(name string) func(train.Event) {
		return func(e train.Event) { s.update(name, e) }
	}
}

type jobStatus struct {
	mu       sync.Mutex
	w        io.Writer
	interval time.Duration
	last     time.Time
	runs     map[string]*train.Event // running trainings' last events
	done     int
}

// update records e for the training name and writes the status when interval has passed.
func (s *jobStatus) update(name string, e train.Event) {
	if s.w == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Iter >= e.Total {
		delete(s.runs, name)
		s.done++
	} else {
		ev := e
		s.runs[name] = &ev
	}
	if time.Since(s.last) < s.interval {
		return
	}
	s.last = time.Now()
	fmt.Fprint(s.w, s.text())
}

// text is the status block: the counts, then one line per running training in name order.
func (s *jobStatus) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "progress: %d trainings finished, %d running\n", s.done, len(s.runs))
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
