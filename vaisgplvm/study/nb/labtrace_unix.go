//go:build unix

package nb

import (
	"bytes"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// dumpStacksOnSignal appends the stacks of all goroutines to t each time the process receives
// SIGUSR1.
func dumpStacksOnSignal(t *labTrace) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	go func() {
		for range ch {
			t.event("SIGUSR1: the stacks of all goroutines follow")
			var b bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
			t.write(b.Bytes())
		}
	}()
}
