//go:build !unix

package nb

// dumpStacksOnSignal does nothing where there is no SIGUSR1.
func dumpStacksOnSignal(*labTrace) {}
