package nb

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// LabTraceEnv names the environment variable that, set to a file path, makes Lab append one line
// per event to that file: its process id first, then the front end's answer, every slider value
// and button click as they arrive, each evaluation's start and end, and the end of the cell. On
// unix a SIGUSR1 to that process then appends the stacks of all its goroutines. It is how a lab
// that stops answering in a notebook is diagnosed (the notebooks' browser test sets it); a trace
// that cannot be opened is skipped, never an error of the lab.
const LabTraceEnv = "VAISGPLVM_LAB_TRACE"

// labTrace appends timed lines to LabTraceEnv's file; a nil *labTrace traces nothing.
type labTrace struct {
	mu    sync.Mutex
	f     *os.File
	start time.Time
}

// openLabTrace opens LabTraceEnv's file for appending, or returns nil when it is unset or cannot
// be opened.
func openLabTrace() *labTrace {
	path := os.Getenv(LabTraceEnv)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil
	}
	t := &labTrace{f: f, start: time.Now()}
	t.event("lab start pid=%d", os.Getpid())
	dumpStacksOnSignal(t)
	return t
}

// event appends one line: seconds since the lab started, then the formatted text.
func (t *labTrace) event(format string, args ...any) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.f, "%8.3f %s\n", time.Since(t.start).Seconds(), fmt.Sprintf(format, args...))
}

// write appends b as it is (a stack dump).
func (t *labTrace) write(b []byte) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.f.Write(b)
}
