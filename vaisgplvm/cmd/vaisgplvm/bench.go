package main

import (
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"os"
	"slices"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
)

func runBench(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	iters := fs.Int("iters", 5, "timed iterations per method (after one warm-up)")
	backendName := fs.String("backend", "", backendHelp)
	methods := fs.String("methods", strings.Join(model.Methods(), ","), "comma-separated methods to time")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the timed iterations to this file")
	dataset := fs.String("dataset", "oilflow", "dataset: "+data.Describe()+"; the image sets as Table 2's missing-data task (unit pixels, 5% of images lose 75% of their pixels; Table 4's K 25 and shared q(u) root)")
	observed := fs.Bool("observed", false, "frey or mnist without hidden pixels (fully observed, as Table 5 trains)")
	prefetch := fs.Bool("prefetch", true, "prepare each step's inputs (batch, noise, tensors) on another goroutine while the previous step runs; false builds them in the step, so that host_seconds_per_iteration is their whole cost")
	set, err := parseSet(fs, args)
	if err != nil {
		return err
	}
	var list []string
	for _, m := range strings.Split(*methods, ",") {
		if !slices.Contains(model.Methods(), m) {
			return usagef("--methods: unknown method %q (want %s)", m, strings.Join(model.Methods(), ", "))
		}
		list = append(list, m)
	}
	if *iters < 1 {
		return usagef("--iters must be >= 1")
	}
	b, err := backend.Start(*backendName, mf.dtype, 1, 1, os.Stderr)
	if err != nil {
		return err
	}
	x, mask, err := experiment.BenchData(*dataset, *observed, mf.standardize)
	if err != nil {
		return err
	}
	if err := mf.checkGiven(set, list...); err != nil {
		return err
	}
	bo := experiment.BenchOptions{Iters: *iters, Prefetch: *prefetch}
	if *cpuProfile != "" {
		// A new file only: a run never replaces a file it did not write.
		prof, err := os.OpenFile(*cpuProfile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, iofs.ErrExist) {
			return usagef("--cpuprofile %s exists: give the name of a new file", *cpuProfile)
		} else if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer prof.Close()
		bo.Profile = prof
	}
	configure := func(c *model.Config) error { // bench times full batches unless --batch
		c.Batch = mf.v.Batch
		return mf.apply(c, set)
	}
	said := false
	results, err := experiment.BenchMethods(list, func(method string) (model.Config, error) {
		cfg, notes, err := protocol.Training(method, *dataset, 1, len(x), len(x[0]), configure, mf.explicit(set))
		for _, a := range notes {
			if !said { // the same for every method: said once
				fmt.Fprintln(os.Stderr, "vaisgplvm: "+a.Say(flagFor))
			}
		}
		said = true
		return cfg, err
	}, *dataset, x, mask, b, bo)
	if err != nil {
		return err
	}
	return printJSON(results)
}
