//go:build unix

package nb

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLabTrace: with LabTraceEnv set, the trace starts with the process id, appends events in
// order, and a SIGUSR1 appends the goroutines' stacks (this test's own function among them);
// unset, nothing is traced and a nil trace ignores events.
func TestLabTrace(t *testing.T) {
	t.Setenv(LabTraceEnv, "")
	if tr := openLabTrace(); tr != nil {
		t.Fatalf("a trace opened with %s unset", LabTraceEnv)
	}
	(*labTrace)(nil).event("ignored")
	path := filepath.Join(t.TempDir(), "lab.trace")
	t.Setenv(LabTraceEnv, path)
	tr := openLabTrace()
	if tr == nil {
		t.Fatalf("no trace opened with %s=%s", LabTraceEnv, path)
	}
	tr.event("slider %d at position %d", 0, 31)
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var got string
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got = string(b); strings.Contains(got, "TestLabTrace") {
			break
		}
	}
	lines := strings.Split(got, "\n")
	if len(lines) < 4 || !strings.HasSuffix(lines[0], "lab start pid="+strconv.Itoa(os.Getpid())) ||
		!strings.HasSuffix(lines[1], "slider 0 at position 31") || !strings.Contains(lines[2], "SIGUSR1") ||
		!strings.Contains(got, "TestLabTrace") {
		t.Errorf("trace:\n%.1500s", got)
	}
}
