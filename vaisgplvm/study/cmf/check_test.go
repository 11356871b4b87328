package cmf

import (
	"errors"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// TestExperimentOptionsCheck: sizes no data set can use and settings the run would drop are
// refused naming the setting at fault; the defaults (zero values) pass.
func TestExperimentOptionsCheck(t *testing.T) {
	if err := (ExperimentOptions{Dataset: "frey"}).Check(); err != nil {
		t.Fatalf("zero options: %v", err)
	}
	given := func(fields ...string) func(string) bool {
		return func(f string) bool {
			for _, g := range fields {
				if g == f {
					return true
				}
			}
			return false
		}
	}
	for _, c := range []struct {
		name  string
		o     ExperimentOptions
		given []string
		field string
	}{
		{"one draw", ExperimentOptions{Draws: 1}, nil, "Draws"},
		{"negative M", ExperimentOptions{Config: Config{M: -1}}, nil, "M"},
		{"validation 0.9", ExperimentOptions{LRs: []float64{1e-3, 1e-2}, Validation: 0.9}, nil, "Validation"},
		{"one sweep rate", ExperimentOptions{LRs: []float64{1e-3}}, nil, "LRs"},
		{"float32", ExperimentOptions{Config: Config{DType: "float32"}}, nil, "DType"},
		{"term B", ExperimentOptions{Config: Config{TermB: "exact"}}, nil, "TermB"},
		{"point-var without cmf", ExperimentOptions{Families: []string{"meanfield"}}, []string{"PointVar"}, "PointVar"},
		{"LR with a sweep", ExperimentOptions{LRs: []float64{1e-3, 1e-2}}, []string{"LR"}, "LR"},
		{"validation without a sweep", ExperimentOptions{}, []string{"Validation"}, "Validation"},
		{"marginal Ks, auxiliary", ExperimentOptions{Config: Config{Bound: "auxiliary"}}, []string{"MarginalKs"}, "MarginalKs"},
	} {
		c.o.Dataset = "frey"
		err := c.o.Check()
		if err == nil {
			err = c.o.CheckGiven(given(c.given...))
		}
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field() != c.field {
			t.Errorf("%s: %v; want an *option.Error about %s", c.name, err, c.field)
		}
	}
	if err := (ExperimentOptions{Families: []string{"cmf"}}).CheckGiven(given("PointVar", "M")); err != nil {
		t.Errorf("cmf's own settings with the cmf family: %v", err)
	}
}
