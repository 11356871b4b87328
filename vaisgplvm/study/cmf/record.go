package cmf

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// ReadResult reads a run on record: the cmf.json that `vaisgplvm cmf` writes (ExperimentResult as
// JSON). Errors: the file cannot be read or is not such JSON, or it holds no family.
func ReadResult(path string) (*ExperimentResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cmf: %w", err)
	}
	var r ExperimentResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("cmf: %s is not a cmf run's JSON: %w", path, err)
	}
	if len(r.Families) == 0 {
		return nil, fmt.Errorf("cmf: %s holds no family", path)
	}
	return &r, nil
}

// PairedTable compares family a with family b over runs of different seeds: per seed a's value
// minus b's for the held-out bound, the importance-weighted bound at the largest K and the AIS
// estimate of the decoder's log p(y), in nats per point (higher favours a), as mean ± the 95%
// t-interval's half-width over the seeds and the number of seeds on which a is ahead. A seed on
// which either family's AIS did not converge (its warning: AIS below the family's own bound) has no
// log p(y) difference; the cell says on how many seeds that happened. Errors: a run without one of
// the two families.
func PairedTable(title string, runs []*ExperimentResult, a, b string) (report.Table, error) {
	t := report.Table{Title: title, Header: []string{"comparison", "seeds", "held-out bound", "IW, largest K", "log p(y), AIS"}}
	var diffs [3][]float64
	var seeds string
	k, noAIS := 0, 0
	for i, r := range runs {
		fa, fb := r.family(a), r.family(b)
		if fa == nil || fb == nil {
			return t, fmt.Errorf("cmf: the run of seed %d has no family %q or %q", r.Config.Seed, a, b)
		}
		if len(fa.IW) == 0 || len(fb.IW) == 0 {
			return t, fmt.Errorf("cmf: the run of seed %d has no importance-weighted bound", r.Config.Seed)
		}
		ia, ib := fa.IW[len(fa.IW)-1], fb.IW[len(fb.IW)-1]
		k = ia.K
		diffs[0] = append(diffs[0], fa.TestBound.PerPoint-fb.TestBound.PerPoint)
		diffs[1] = append(diffs[1], ia.PerPoint-ib.PerPoint)
		if aisConverged(fa) && aisConverged(fb) {
			diffs[2] = append(diffs[2], fa.LogLik.PerPoint-fb.LogLik.PerPoint)
		} else {
			noAIS++
		}
		if i > 0 {
			seeds += ","
		}
		seeds += fmt.Sprint(r.Config.Seed)
	}
	t.Header[3] = fmt.Sprintf("IW K=%d", k)
	row := []string{a + " - " + b, seeds}
	for j, d := range diffs {
		if len(d) == 0 {
			row = append(row, fmt.Sprintf("- (AIS did not converge on %d of %d seeds)", noAIS, len(runs)))
			continue
		}
		m, h := metrics.TInterval(d)
		ahead := 0
		for _, v := range d {
			if v > 0 {
				ahead++
			}
		}
		cell := fmt.Sprintf("%+.1f ± %.1f (%d/%d ahead)", m, h, ahead, len(d))
		if j == 2 && noAIS > 0 {
			cell += fmt.Sprintf("; %d more seeds left out: AIS did not converge", noAIS)
		}
		row = append(row, cell)
	}
	t.Rows = append(t.Rows, row)
	return t, nil
}

// aisConverged reports whether f's AIS estimate carries no warning that it did not converge.
func aisConverged(f *FamilyResult) bool {
	for _, w := range f.Warnings {
		if strings.Contains(w, "AIS did not converge") {
			return false
		}
	}
	return true
}

// family returns the named family's result, nil when the run has none.
func (r *ExperimentResult) family(name string) *FamilyResult {
	for i := range r.Families {
		if r.Families[i].Family == name {
			return &r.Families[i]
		}
	}
	return nil
}
