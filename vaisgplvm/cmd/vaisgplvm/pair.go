package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/paper"
)

// runPair prints the seed-paired differences between a method of one reproduced table and a
// method of another (paper.PairTables): e.g. VAIS K 25 against IWVI at the K of equal seconds,
// trained by two reproduce runs. It reads the tables and writes nothing.
func runPair(args []string) error {
	fs := flag.NewFlagSet("pair", flag.ContinueOnError)
	a := fs.String("a", "", "table A: a reproduce --out directory (or its tableN.json) of Table 1, 2 or 3, optionally :METHOD (required when the table has several methods), e.g. docs/protocol/table2:vais")
	b := fs.String("b", "", "table B, as --a, e.g. docs/protocol/table2-iwvi-k80:iwvi; the differences are A minus B")
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
	ra, ma, la, err := readSide(*a)
	if err != nil {
		return err
	}
	rb, mb, lb, err := readSide(*b)
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

// readSide reads PATH[:METHOD] and labels it "METHOD K k (folder)" from the table's settings ("K k x s
// chains" where it ran several chains or samples per point).
func readSide(spec string) (*paper.Result, string, string, error) {
	path, method := spec, ""
	if i := strings.LastIndex(spec, ":"); i > 0 {
		if _, err := os.Stat(spec); err != nil { // a path that holds ':' itself stays whole
			path, method = spec[:i], spec[i+1:]
		}
	}
	r, err := paper.ReadResult(path)
	if err != nil {
		return nil, "", "", err
	}
	label := method
	if label == "" && len(r.Rows) > 0 {
		label = r.Rows[0].Method
	}
	if k, ok := r.Settings["k"]; ok {
		label += fmt.Sprintf(" K %v", k)
	}
	if s, ok := r.Settings["samples"].(float64); ok && s > 1 {
		label += fmt.Sprintf(" x %v chains", s)
	}
	dir := filepath.Clean(path)
	if strings.HasSuffix(dir, ".json") {
		dir = filepath.Dir(dir)
	}
	return r, method, fmt.Sprintf("%s (%s)", label, filepath.Base(dir)), nil
}
