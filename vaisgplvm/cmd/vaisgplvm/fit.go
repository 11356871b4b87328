package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
)

// fitToData checks the size flags against the data's N points and D columns (set: the flags given).
// A flag given explicitly that cannot fit is a usage error naming the flag and the largest value
// that fits; a default that does not fit small data is lowered to fit, and the change is printed.
// Then the memory a training step would need is estimated and refused when it exceeds this
// machine's memory.
func (f *modelFlags) fitToData(set map[string]bool, method string, n, d int) error {
	type limit struct {
		flag  string
		value *int
		max   int
		fix   string
	}
	for _, l := range []limit{
		{"m", &f.m, n, fmt.Sprintf("more inducing points than the %d data points", n)},
		{"q", &f.q, min(n, d), fmt.Sprintf("more latent dimensions than min(N, D) = %d (the latents start at the data's principal components)", min(n, d))},
		{"batch", &f.batch, n, fmt.Sprintf("a mini-batch larger than the %d data points (0 = full batch)", n)},
	} {
		if *l.value <= l.max {
			continue
		}
		if set[l.flag] {
			return usagef("--%s %d: %s; use --%s %d or less", l.flag, *l.value, l.fix, l.flag, l.max)
		}
		fmt.Fprintf(os.Stderr, "vaisgplvm: --%s defaults to %d here (%d would be %s)\n", l.flag, l.max, *l.value, l.fix)
		*l.value = l.max
	}
	need := stepBytes(method, f.k, f.samples, f.m, f.q, n, d, f.batch)
	if total := memTotal(); total > 0 && need > float64(total) {
		return usagef("--k %d with --samples %d on %d points per step needs about %.3g GiB per training step, more than this machine's %.3g GiB; "+
			"lower --k, --samples or --batch", f.k, f.samples, batchOf(f.batch, n), need/(1<<30), float64(total)/(1<<30))
	}
	return nil
}

func batchOf(b, n int) int {
	if b == 0 {
		return n
	}
	return b
}

// stepBytes is a rough estimate (within a small factor) of the memory one training step holds:
// per latent point at which the bound evaluates the likelihood (bounds.Method.Evaluations) the rows of K_uf
// [M], the predictive moments [D] and the latents [Q] in float64, for every intermediate
// that autodiff keeps (about 8 of each).
func stepBytes(method string, k, samples, m, q, n, d, batch int) float64 {
	draws := float64(samples * max(k, 1))
	if b, err := bounds.Lookup(method); err == nil {
		draws = float64(b.Evaluations(bounds.Sizes{K: k, Samples: samples}))
	}
	return 8 * 8 * draws * float64(batchOf(batch, n)) * float64(m+d+q)
}

// memTotal returns the machine's memory in bytes from /proc/meminfo, 0 when unknown.
func memTotal() int64 {
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
