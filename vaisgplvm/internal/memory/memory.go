// Package memory refuses work that cannot fit in this machine's memory before anything is
// allocated: one estimate per kind of work (a training step, an AIS run, a decoder), checked by the
// library function that would allocate and by the command before it reads any data.
package memory

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// Limit is the memory, in bytes, that a single piece of work may use: the machine's total memory
// (Linux: /proc/meminfo), or 1 TiB where that is unknown. Tests may lower it.
var Limit = func() float64 {
	if t := total(); t > 0 {
		return float64(t)
	}
	return 1 << 40
}

// Check returns an *option.Error when need bytes (computed in float64, so that no size
// overflows) exceed Limit, or when need is not a finite non-negative number; lower names the
// settings (Config fields) that lower the need.
func Check(what string, need float64, lower ...string) error {
	if have := Limit(); !(need >= 0 && need <= have) {
		return option.Memory(what, need, have, lower...)
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
