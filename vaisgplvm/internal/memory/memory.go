// Package memory refuses work that cannot fit in this machine's memory before anything is
// allocated: one estimate per kind of work (a training step, an AIS run, a decoder), checked by the
// library function that would allocate and by the command before it reads any data.
package memory

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Error is the refusal of work needing more memory than the machine has. Fix says which
// settings lower the need in the library's words, Flags in the command's.
type Error struct {
	What       string  // the work, e.g. "a training step"
	Need, Have float64 // bytes
	Fix, Flags string
}

func (e *Error) Error() string { return e.message(e.Fix) }

// FlagError is the same refusal worded with the command's flags.
func (e *Error) FlagError() string { return e.message(e.Flags) }

// message is the refusal, naming the settings fix that lower the need.
func (e *Error) message(fix string) string {
	return fmt.Sprintf("%s needs about %s of memory, more than this machine's %.3g GiB; lower %s",
		e.What, gib(e.Need), e.Have/(1<<30), fix)
}

func gib(b float64) string {
	if b > 1e6*(1<<30) || math.IsInf(b, 0) || math.IsNaN(b) {
		return "more than a million GiB"
	}
	return fmt.Sprintf("%.3g GiB", b/(1<<30))
}

// Limit is the memory, in bytes, that a single piece of work may use: the machine's total memory
// (Linux: /proc/meminfo), or 1 TiB where that is unknown. Tests may lower it.
var Limit = func() float64 {
	if t := total(); t > 0 {
		return float64(t)
	}
	return 1 << 40
}

// Check returns an *Error when need bytes (computed in float64, so that no size overflows)
// exceed Limit, or when need is not a finite non-negative number.
func Check(what string, need float64, fix, flags string) error {
	if have := Limit(); !(need >= 0 && need <= have) {
		return &Error{What: what, Need: need, Have: have, Fix: fix, Flags: flags}
	}
	return nil
}

// Floats returns the bytes of n float64 values, the product of sizes.
func Floats(sizes ...int) float64 {
	b := 8.0
	for _, s := range sizes {
		b *= float64(s)
	}
	return b
}

// total returns the machine's memory in bytes from /proc/meminfo, 0 when unknown.
func total() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
