package paper

import (
	"reflect"
	"slices"
	"testing"
)

// TestOptionsTypes: every field of the registered tables' options types has its place in opts (by
// name and type, so optsOf drops nothing), every field of opts belongs to some table's type (none
// is left over from the old 26-field struct), and the flags that the types' tags name are the
// ones each table takes.
func TestOptionsTypes(t *testing.T) {
	flat := reflect.TypeFor[opts]()
	used := map[string]bool{}
	for _, s := range Specs() {
		typ := reflect.TypeOf(s.NewOptions()).Elem()
		for _, f := range reflect.VisibleFields(typ) {
			if f.Anonymous {
				continue
			}
			of, ok := flat.FieldByName(f.Name)
			if !ok || of.Type != f.Type {
				t.Errorf("table %d: %s.%s (%s) has no field of its type in opts", s.Number, typ.Name(), f.Name, f.Type)
			}
			used[f.Name] = true
		}
	}
	for _, f := range reflect.VisibleFields(flat) {
		if !used[f.Name] {
			t.Errorf("opts.%s belongs to no table's options type", f.Name)
		}
	}
	for _, c := range []struct {
		table int
		takes []string
	}{
		{1, []string{"datasets", "jobs", "fresh", "from", "no-figures", "checkpoints", "data", "labels"}},
		{2, []string{"datasets", "jobs", "fresh", "from", "no-figures", "checkpoints", "pixels", "exact"}},
		{3, []string{"datasets", "jobs", "fresh", "from", "no-figures", "checkpoints", "pixels", "exact"}},
		{5, []string{"datasets", "jobs", "fresh", "from", "subset", "recon-iters", "exact", "validate-ppca"}},
		{6, []string{"ks", "reps"}},
	} {
		s, err := Lookup(c.table)
		if err != nil {
			t.Fatal(err)
		}
		got := flagsOf(s.NewOptions())
		slices.Sort(got)
		want := slices.Clone(c.takes)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("table %d takes %v, want %v", c.table, got, want)
		}
	}
	if TablesTaking("exact") != "2, 3 and 5" || TablesTaking("methods") != "" {
		t.Errorf("tables taking exact: %q; methods: %q (every table: none by tag)", TablesTaking("exact"), TablesTaking("methods"))
	}
}

// TestOptsRoundTrip: optsOf and setOpts carry every field of a table's options type there and
// back, the embedded structs' fields included.
func TestOptsRoundTrip(t *testing.T) {
	in := &Table5Options{Options: Options{Methods: []string{"vais"}, Runs: 2, Iters: 7, Paper: true, Standardize: true},
		Trainings: Trainings{Datasets: []string{"wine"}, Jobs: 3, Store: "s", Fresh: true}, Subset: 40, ReconIters: 9, Exact: true, ExactFitRows: 11}
	s := optsOf(in)
	if s.Runs != 2 || s.Iters != 7 || !s.Paper || !s.Standardize || s.Jobs != 3 || s.Store != "s" || !s.Fresh || s.Subset != 40 ||
		s.ReconIters != 9 || !s.Exact || s.ExactFitRows != 11 || !slices.Equal(s.Datasets, []string{"wine"}) {
		t.Errorf("optsOf: %+v", s)
	}
	var back Table5Options
	setOpts(&back, s)
	if !reflect.DeepEqual(&back, in) {
		t.Errorf("setOpts(optsOf(x)) = %+v, want %+v", back, *in)
	}
}
