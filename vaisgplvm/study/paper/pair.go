package paper

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// Pairing is a seed-paired comparison of two rows of Tables 1-3 for the same dataset and
// iteration count: on every seed both rows have, row A's value minus row B's, summarised as mean ±
// 2 s.e. over those seeds. Run r of every method uses seed r (the same hidden pixels in Tables 2
// and 3), so a pairing resolves differences that the two rows' own error bars do not. Negative
// differences favour A: lower is better for -ELBO, MSE and NELL.
type Pairing struct {
	Dataset    string `json:"dataset"`
	Iterations int    `json:"iterations"`
	// A and B label the two rows (their method, or what PairTables was given).
	A string `json:"a"`
	B string `json:"b"`
	// Seeds is the number of seeds both rows have (a diverged training has no pair).
	Seeds int `json:"seeds"`
	// NegELBO, MSE and NELL are the mean and 2 s.e. of A - B in the rows' units (nats per point or
	// image; data units squared per entry; nats per point or damaged image).
	NegELBO [2]float64 `json:"neg_elbo"`
	MSE     [2]float64 `json:"mse"`
	NELL    [2]float64 `json:"nell"`
	// Lower counts the seeds on which A's value is below B's (a tie is not), for -ELBO, MSE, NELL.
	Lower [3]int `json:"a_lower"`
	// SecPerIter are A's and B's seconds per training iteration as their rows record them: the
	// cost side of the comparison (equal only where both ran on the same machine and kernels).
	SecPerIter [2]float64 `json:"seconds_per_iteration"`
}

// Pair returns the seed-paired differences of row a minus row b, labelled with their methods, and
// false when the two rows have fewer than two seeds in common (nothing to pair).
func Pair(a, b Row) (Pairing, bool) {
	pa, pb := commonSeeds(a.PerRun, b.PerRun)
	if len(pa) < 2 {
		return Pairing{}, false
	}
	p := Pairing{Dataset: a.Dataset, Iterations: a.Iterations, A: a.Method, B: b.Method, Seeds: len(pa),
		SecPerIter: [2]float64{a.SecPerIter, b.SecPerIter}}
	targets := []*[2]float64{&p.NegELBO, &p.MSE, &p.NELL}
	for m, value := range []func(RunResult) float64{
		func(r RunResult) float64 { return r.NegELBO },
		func(r RunResult) float64 { return r.MSE },
		func(r RunResult) float64 { return r.NELL },
	} {
		d := make([]float64, len(pa))
		for i := range d {
			d[i] = value(pa[i]) - value(pb[i])
			if d[i] < 0 {
				p.Lower[m]++
			}
		}
		*targets[m] = meanTwoSE(d)
	}
	return p, true
}

// PairTables pairs method methodA of table a with method methodB of table b at every dataset and
// iteration count both have (only iters when it is not 0), in a's row order: e.g. VAIS K 25 of one
// reproduce run against IWVI at the K of equal seconds from another. An empty method stands for
// the table's only method. The pairings are labelled labelA and labelB. Errors: an *option.Error
// naming the method when a table lacks it or has several and none was given, or when the two
// tables have no row with two seeds in common.
func PairTables(a *Result, methodA, labelA string, b *Result, methodB, labelB string, iters int) ([]Pairing, error) {
	ma, err := onlyMethod(a, methodA, "A")
	if err != nil {
		return nil, err
	}
	mb, err := onlyMethod(b, methodB, "B")
	if err != nil {
		return nil, err
	}
	var out []Pairing
	for _, ra := range a.Rows {
		if ra.Method != ma || (iters != 0 && ra.Iterations != iters) {
			continue
		}
		for _, rb := range b.Rows {
			if rb.Method != mb || rb.Dataset != ra.Dataset || rb.Iterations != ra.Iterations {
				continue
			}
			if p, ok := Pair(ra, rb); ok {
				p.A, p.B = labelA, labelB
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, &option.Error{Fields: []string{"Iters"}, Msg: fmt.Sprintf(
			"%s and %s share no dataset and iteration count with two seeds in common: pair tables of the same datasets, iterations and seeds", labelA, labelB)}
	}
	return out, nil
}

// onlyMethod returns method when table r has rows of it, or r's only method when method is "".
func onlyMethod(r *Result, method, side string) (string, error) {
	var methods []string
	for _, row := range r.Rows {
		if !slices.Contains(methods, row.Method) {
			methods = append(methods, row.Method)
		}
	}
	switch {
	case method == "" && len(methods) == 1:
		return methods[0], nil
	case method == "":
		return "", &option.Error{Msg: fmt.Sprintf("table %s has methods %v: name one as PATH:METHOD", side, methods)}
	case !slices.Contains(methods, method):
		return "", &option.Error{Msg: fmt.Sprintf("table %s has no method %q (it has %v)", side, method, methods)}
	}
	return method, nil
}

// ReadResult reads a Table 1, 2 or 3 written by reproduce: path is its tableN.json or the --out
// directory that holds one. Errors: the file cannot be read or parsed, the directory holds no
// table1.json, table2.json or table3.json (or more than one), or the file is another table's.
func ReadResult(path string) (*Result, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		var found []string
		for _, n := range []string{"table1.json", "table2.json", "table3.json"} {
			if _, err := os.Stat(filepath.Join(path, n)); err == nil {
				found = append(found, filepath.Join(path, n))
			}
		}
		if len(found) != 1 {
			return nil, fmt.Errorf("%s: want exactly one of table1.json, table2.json, table3.json, found %d: give the file", path, len(found))
		}
		path = found[0]
	}
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading a reproduced table: %w", err)
	}
	var r Result
	if err := json.Unmarshal(buf, &r); err != nil {
		return nil, fmt.Errorf("%s: not a reproduced table's JSON: %w", path, err)
	}
	if r.Table < 1 || r.Table > 3 {
		return nil, fmt.Errorf("%s: table %d: pairing works with Tables 1-3 (rows per seed)", path, r.Table)
	}
	return &r, nil
}

// PairingTable renders pairings as a Markdown-ready table, one line per pairing, with both rows'
// seconds per iteration.
func PairingTable(ps []Pairing) *report.Table {
	t := &report.Table{
		Title: "Seed-paired differences: A minus B on the same seed, mean ± 2 s.e. over the seeds both have " +
			"(negative favours A); lower: seeds on which A is lower, of those; s/iter: each row's seconds per iteration as recorded.",
		Header: []string{"dataset", "iters", "A", "B", "Δ -ELBO", "lower", "Δ MSE", "lower", "Δ NELL", "lower", "s/iter A", "s/iter B"},
	}
	for _, p := range ps {
		t.Rows = append(t.Rows, append([]string{p.Dataset, fmt.Sprint(p.Iterations), p.A, p.B}, append(p.cells(),
			fmt.Sprintf("%.3f", p.SecPerIter[0]), fmt.Sprintf("%.3f", p.SecPerIter[1]))...))
	}
	return t
}

// cells are the three differences with their seed counts.
func (p Pairing) cells() []string {
	var c []string
	for m, f := range []string{"%.3f ± %.3f", "%.4f ± %.4f", "%.3f ± %.3f"} {
		v := [][2]float64{p.NegELBO, p.MSE, p.NELL}[m]
		c = append(c, fmt.Sprintf(f, v[0], v[1]), fmt.Sprintf("%d/%d", p.Lower[m], p.Seeds))
	}
	return c
}

// annealed reports whether method names a registered annealed bound (VAIS, uha, smc, mcd).
func annealed(method string) bool {
	m, err := bounds.Lookup(method)
	return err == nil && m.Annealed()
}

// ReadSide reads one side of a pairing for PairTables: spec is PATH[:METHOD], a reproduce output
// directory of Table 1, 2 or 3 (or its tableN.json) and the method to pair when the table has
// several. The label is "METHOD K k (folder)" from the table's settings ("K k x s chains" where it
// ran several chains or samples per point).
func ReadSide(spec string) (res *Result, method, label string, err error) {
	path := spec
	if i := strings.LastIndex(spec, ":"); i > 0 {
		if _, err := os.Stat(spec); err != nil { // a path that holds ':' itself stays whole
			path, method = spec[:i], spec[i+1:]
		}
	}
	if res, err = ReadResult(path); err != nil {
		return nil, "", "", err
	}
	label = method
	if label == "" && len(res.Rows) > 0 {
		label = res.Rows[0].Method
	}
	if k, ok := res.Settings["k"]; ok {
		label += fmt.Sprintf(" K %v", k)
	}
	if s, ok := res.Settings["samples"].(float64); ok && s > 1 {
		label += fmt.Sprintf(" x %v chains", s)
	}
	dir := filepath.Clean(path)
	if strings.HasSuffix(dir, ".json") {
		dir = filepath.Dir(dir)
	}
	return res, method, fmt.Sprintf("%s (%s)", label, filepath.Base(dir)), nil
}
