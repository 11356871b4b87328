// Package progress draws progress bars on a terminal (github.com/schollz/progressbar) for the
// command and, outside a notebook, for nb: the library itself only reports events (train.Event,
// the standard GPLVM's and GP-LVM-CMF's step callbacks) and draws nothing.
package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Bar is one run's progress bar: total steps, a label, and a description updated with each step.
type Bar struct {
	bar *progressbar.ProgressBar
}

// New starts a bar of total steps labelled label on w (redrawn at most every 200 ms, cleared
// when it finishes). A nil w gives a Bar that draws nothing.
func New(w io.Writer, total int, label string) *Bar {
	if w == nil {
		return &Bar{}
	}
	return &Bar{bar: progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())}
}

// Set moves the bar to step done with the description desc (empty: keep the current one).
func (b *Bar) Set(done int, desc string) {
	if b.bar == nil {
		return
	}
	if desc != "" {
		b.bar.Describe(desc)
	}
	_ = b.bar.Set(done)
}

// Finish completes and clears the bar.
func (b *Bar) Finish() {
	if b.bar != nil {
		_ = b.bar.Finish()
	}
}

// Training is an observer for train.Trainer.Run: it moves the bar with each step and shows the
// bound and its -ELBO per point.
func (b *Bar) Training(e train.Event) {
	b.Set(e.Iter, fmt.Sprintf("%s -ELBO/N %.4f", e.Method, e.NegELBO))
}

// Trainings returns an observer for train.Trainer.Run that draws one bar per run on w: a new bar
// whenever the bound, the total or a step count going backwards says another run started, cleared
// when its run reaches its total. For runs one after another (not concurrent ones).
func Trainings(w io.Writer) func(train.Event) {
	var cur *Bar
	var method string
	total, last := -1, 0
	return func(e train.Event) {
		if cur == nil || e.Method != method || e.Total != total || e.Iter <= last {
			if cur != nil {
				cur.Finish()
			}
			cur, method, total = New(w, e.Total, e.Method), e.Method, e.Total
		}
		last = e.Iter
		cur.Training(e)
		if e.Iter >= e.Total {
			cur.Finish()
			cur = nil
		}
	}
}
