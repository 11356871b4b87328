package main

import (
	"fmt"
	"os"
)

// fitToData checks the size flags against the data's N points and D columns (set: the flags given).
// A flag given explicitly that cannot fit is a usage error naming the flag and the largest value
// that fits; a default that does not fit small data is lowered to fit, and the change is printed.
// The memory a training step needs is checked by model.New (model.Config.CheckMemory).
func (f *modelFlags) fitToData(set map[string]bool, n, d int) error {
	type limit struct {
		flag  string
		value *int
		max   int
		fix   string
	}
	for _, l := range []limit{
		{"m", &f.v.M, n, fmt.Sprintf("more inducing points than the %d data points", n)},
		{"q", &f.q, min(n, d), fmt.Sprintf("more latent dimensions than min(N, D) = %d (the latents start at the data's principal components)", min(n, d))},
		{"batch", &f.v.Batch, n, fmt.Sprintf("a mini-batch larger than the %d data points (0 = full batch)", n)},
	} {
		if *l.value <= l.max {
			continue
		}
		if set[l.flag] {
			return usagef("--%s %d: %s; use --%s %d or less", l.flag, *l.value, l.fix, l.flag, l.max)
		}
		fmt.Fprintf(os.Stderr, "vaisgplvm: --%s defaults to %d here (%d would be %s)\n", l.flag, l.max, *l.value, l.fix)
		*l.value = l.max
		set[l.flag] = true // lowered: it now overrides the presets of every run (reproduce)
	}
	return nil
}
