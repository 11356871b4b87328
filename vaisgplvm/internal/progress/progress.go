// Package progress draws progress bars on a terminal (github.com/schollz/progressbar) for the
// command and, outside a notebook, for nb: the library itself only reports events (train.Event,
// the standard GPLVM's and GP-LVM-CMF's step callbacks) and draws nothing.
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Bar is one run's progress bar: total steps, a label, and a description updated with each step.
// On a terminal it redraws in place; on any other writer (a redirected stderr, a log file) it
// writes a plain line at the first step, every PlainInterval and at the end, never a carriage
// return.
type Bar struct {
	bar *progressbar.ProgressBar
	// plain mode
	w            io.Writer
	total        int
	label, desc  string
	done         int
	start, shown time.Time
	finished     bool
	dirty        bool // steps since the last line
}

// PlainInterval is how often a Bar on a writer that is not a terminal writes a line.
var PlainInterval = 10 * time.Second

// New starts a bar of total steps labelled label on w (redrawn at most every 200 ms, cleared
// when it finishes; plain lines when w is not a terminal). A nil w gives a Bar that draws nothing.
func New(w io.Writer, total int, label string) *Bar {
	if w == nil {
		return &Bar{}
	}
	if !IsTerminal(w) {
		return &Bar{w: w, total: total, label: label, desc: label, start: time.Now()}
	}
	return &Bar{bar: progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())}
}

// IsTerminal reports whether w is a terminal (a character device such as a tty).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Set moves the bar to step done with the description desc (empty: keep the current one).
func (b *Bar) Set(done int, desc string) {
	if b.w != nil {
		first := b.shown.IsZero()
		if desc != "" {
			b.desc = desc
		}
		b.done = done
		b.dirty = true
		if first || time.Since(b.shown) >= PlainInterval || done >= b.total {
			b.line()
		}
		return
	}
	if b.bar == nil {
		return
	}
	if desc != "" {
		b.bar.Describe(desc)
	}
	_ = b.bar.Set(done)
}

// line writes the plain mode's line: the description, the steps, the time so far and left.
func (b *Bar) line() {
	if b.finished || !b.dirty {
		return
	}
	b.dirty = false
	el := time.Since(b.start)
	left := ""
	if b.done > 0 && b.done < b.total {
		left = fmt.Sprintf(", about %v left", (el * time.Duration(b.total-b.done) / time.Duration(b.done)).Round(time.Second))
	}
	fmt.Fprintf(b.w, "%s (%d/%d, %v%s)\n", b.desc, b.done, b.total, el.Round(time.Second), left)
	b.shown = time.Now()
	b.finished = b.done >= b.total
}

// Finish completes and clears the bar (plain mode: writes the last line, if not written).
func (b *Bar) Finish() {
	if b.w != nil {
		b.line()
		return
	}
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
