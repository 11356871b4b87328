package apitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// sketchTable is the result of a table registered from outside package paper.
type sketchTable struct {
	Settings map[string]any `json:"settings"`
	Datasets []string       `json:"datasets"`
}

func (s *sketchTable) Markdown() string {
	return "| datasets |\n|---|\n| " + strings.Join(s.Datasets, " ") + " |\n"
}
func (s *sketchTable) Made() map[string]any { return s.Settings }

// sketchOptions are table 97's options: what every table reads, the Trainings, and its own field.
type sketchOptions struct {
	paper.Options
	paper.Trainings
	Depth int `flag:"depth" usage:"a setting of this table only"`
}

// TestRegisterTable: a table is one Register call from another package, with its own options
// type; RunTable checks its options through its Spec (datasets, the options type) and runs it with
// the defaults filled in, its own fields kept; Takes reads its flag tags; TableOutputs and
// WriteTable write it; an unknown number is an *option.Error about Table that lists the registered
// tables.
func TestRegisterTable(t *testing.T) {
	var got sketchOptions
	err := paper.Register(paper.Spec{Number: 97, Title: "a sketch", Datasets: []string{"oilflow"}, Methods: []string{"mf"},
		Iters: 10, Figures: []string{"sketch_*.png"}, Options: func() paper.TableOptions { return &sketchOptions{Depth: 2} },
		Run: func(_ context.Context, o paper.TableOptions) (paper.Output, error) {
			got = *o.(*sketchOptions)
			return &sketchTable{Settings: map[string]any{"table": 97}, Datasets: got.Datasets}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { paper.Unregister(97) })
	if err := paper.Register(paper.Spec{Number: 97, Run: func(context.Context, paper.TableOptions) (paper.Output, error) { return nil, nil }}); err == nil {
		t.Error("registering table 97 twice: want an error")
	}
	if !slices.ContainsFunc(paper.Specs(), func(s paper.Spec) bool { return s.Number == 97 }) || !strings.Contains(paper.Numbers(), "97") {
		t.Errorf("the registry lacks table 97: %s", paper.Numbers())
	}
	spec, _ := paper.Lookup(97)
	if !spec.Takes("depth") || !spec.Takes("datasets") || spec.Takes("subset") || paper.TablesTaking("depth") != "97" {
		t.Errorf("table 97 takes depth %v, datasets %v, subset %v; tables taking depth: %q", spec.Takes("depth"), spec.Takes("datasets"),
			spec.Takes("subset"), paper.TablesTaking("depth"))
	}
	res, err := paper.RunTable(context.Background(), 97, &sketchOptions{Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got.Iters != 10 || !slices.Equal(got.Datasets, []string{"oilflow"}) || got.Runs != 1 || got.Depth != 3 {
		t.Errorf("Run got options %+v, want the Spec's defaults (10 iterations, oilflow, 1 run) and Depth 3", got)
	}
	var oe *option.Error
	if _, err := paper.RunTable(context.Background(), 97, &sketchOptions{Trainings: paper.Trainings{Datasets: []string{"frey"}}}); !errors.As(err, &oe) || oe.Field() != "Datasets" {
		t.Errorf("table 97 on frey: %v, want an *option.Error about Datasets", err)
	}
	if _, err := paper.RunTable(context.Background(), 97, &paper.Table1Options{}); !errors.As(err, &oe) || oe.Field() != "Options" {
		t.Errorf("table 97 with Table 1's options: %v, want an *option.Error about Options", err)
	}
	if _, err := paper.RunTable(context.Background(), 98, nil); !errors.As(err, &oe) || oe.Field() != "Table" || !strings.Contains(err.Error(), "97") {
		t.Errorf("table 98: %v, want an *option.Error about Table listing 97", err)
	}
	outs := paper.TableOutputs(97)
	if !slices.Equal(outs, []string{"table97.md", "table97.json", "sketch_*.png"}) {
		t.Errorf("TableOutputs(97) = %v", outs)
	}
	out := filepath.Join(t.TempDir(), "t97")
	dir, err := rundir.Open(out, outs, rundir.Options{Run: "table97", Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	if _, err := paper.WriteTable(dir, 97, res, true); err != nil {
		t.Fatal(err)
	}
	buf, err := os.ReadFile(filepath.Join(out, "table97.json"))
	var back sketchTable
	if err != nil || json.Unmarshal(buf, &back) != nil || back.Settings["table"] != 97.0 || back.Datasets[0] != "oilflow" {
		t.Errorf("table97.json: %s (%v)", buf, err)
	}
}
