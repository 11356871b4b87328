package main

import (
	"flag"
	"io"
	"testing"
)

// TestImageDefaults: the image preset (K 25, shared q(u) root, VAIS's stop-gradient chain) fills
// only the flags not given, so --stop-grad=false restores the paper's gradient and --k wins over 25.
func TestImageDefaults(t *testing.T) {
	for _, c := range []struct {
		method   string
		args     []string
		k        int
		stopGrad bool
	}{{"vais", nil, 25, true}, {"vais", []string{"--stop-grad=false"}, 25, false}, {"vais", []string{"--k", "7"}, 7, true},
		{"iwvi", nil, 25, false}, {"mf", []string{"--stop-grad"}, 25, true}} {
		fs := flag.NewFlagSet("train", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var mf modelFlags
		mf.register(fs)
		set, err := parseSet(fs, c.args)
		if err != nil {
			t.Fatal(err)
		}
		mf.imageDefaults(set, c.method, "frey")
		cfg, err := mf.config(c.method, "frey", 1)
		if err != nil {
			t.Fatalf("%s %v: %v", c.method, c.args, err)
		}
		if cfg.K != c.k || cfg.StopGrad != c.stopGrad || !cfg.SharedQSqrt {
			t.Errorf("%s %v: K %d, stop-grad %v, shared root %v; want K %d, stop-grad %v, shared root", c.method, c.args,
				cfg.K, cfg.StopGrad, cfg.SharedQSqrt, c.k, c.stopGrad)
		}
	}
}
