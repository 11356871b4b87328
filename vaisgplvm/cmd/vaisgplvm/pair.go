package main

import (
	"flag"
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
)

// runPair prints the seed-paired differences between a method of one reproduced table and a
// method of another (paper.PairTables): e.g. VAIS K 25 against IWVI at the K of equal seconds,
// trained by two reproduce runs. It reads the tables and writes nothing.
func runPair(args []string) error {
	fs := flag.NewFlagSet("pair", flag.ContinueOnError)
	a := fs.String("a", "", "table A: a reproduce --out directory (or its tableN.json) of Table 1, 2 or 3, optionally :METHOD (required when the table has several methods), e.g. records/table2:vais")
	b := fs.String("b", "", "table B, as --a, e.g. records/table2-iwvi-k80:iwvi; the differences are A minus B")
	iters := fs.Int("iters", 0, "pair the rows at this iteration count only (0 = every snapshot both tables have)")
	asJSON := fs.Bool("json", false, "print the pairings as JSON instead of a Markdown table")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *a == "" || *b == "" {
		return usagef("--a and --b are required: two reproduce --out directories of Tables 1-3, each optionally :METHOD")
	}
	if *iters < 0 {
		return usagef("--iters %d: want an iteration count, or 0 for every snapshot", *iters)
	}
	ra, ma, la, err := paper.ReadSide(*a)
	if err != nil {
		return err
	}
	rb, mb, lb, err := paper.ReadSide(*b)
	if err != nil {
		return err
	}
	ps, err := paper.PairTables(ra, ma, la, rb, mb, lb, *iters)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(ps)
	}
	fmt.Print(paper.PairingTable(ps).Text())
	return nil
}
