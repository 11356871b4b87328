package reproduce

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
)

// TestConverged runs Table 1 at convergence on oil flow, seed 1, MF and IWVI with M 8, each fit
// capped (6 L-BFGS iterations, 3 s of Adam) so that it is fast: both runs are written under
// Out/runs with metrics.json, IWVI's from MF's checkpoint, the summary has both rows with MF not
// converged (its cap), and a second call keeps the finished runs (their metrics.json untouched); a
// request whose configuration differs is refused (an *option.Error naming Out and Fresh) until
// Fresh; the image sets are refused before any work.
func TestConverged(t *testing.T) {
	if testing.Short() {
		t.Skip("fits oil flow twice (about a minute): not with -short")
	}
	out := t.TempDir()
	m := 8
	req := ConvergedRequest{Datasets: []string{"oilflow"}, Methods: []string{"iwvi"}, Runs: 1, Out: out, Log: io.Discard,
		Converge:  converge.Options{Rule: converge.Rule{Window: 50, Tol: 1e-4}, MaxIters: 6, MaxSeconds: 3},
		Configure: func(c *model.Config) error { c.M = m; return nil }, Explicit: func(f string) bool { return f == "M" },
		Command: []string{"reproduce", "--table", "1", "--converge"}}
	md, dir, err := Converged(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| oilflow | mf | 1 |", "| oilflow | iwvi | 1 |"} {
		if !strings.Contains(md, row) {
			t.Errorf("the summary lacks the row %q:\n%s", row, md)
		}
	}
	if !strings.Contains(md, "reproduce --table 1 --converge") || !strings.Contains(strings.Join(dir.Written(), " "), "table1-converged.json") {
		t.Errorf("the summary does not say how it was made, or table1-converged.json was not written (%v):\n%s", dir.Written(), md)
	}
	runs, err := paper.ReadConverged(filepath.Join(out, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[1].Run != "mf" || runs[1].Converged || runs[1].Iterations > 6 {
		t.Errorf("runs %+v: want iwvi and mf, mf stopped by its cap of 6 iterations", runs)
	}
	iwvi := filepath.Join(out, "runs", "oilflow-iwvi-seed1", "metrics.json")
	before, err := os.Stat(iwvi)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Converged(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(iwvi); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the second call fitted the finished IWVI run again (%v)", err)
	}
	m = 9
	_, _, err = Converged(context.Background(), req)
	var oe *option.Error
	if !errors.As(err, &oe) || strings.Join(oe.Fields, ",") != "Out,Fresh" {
		t.Errorf("another configuration in the same Out: %v, want an *option.Error about Out and Fresh", err)
	}
	req.Fresh = true
	if _, _, err := Converged(context.Background(), req); err != nil {
		t.Fatalf("Fresh: %v", err)
	}
	req.Datasets = []string{"frey"}
	if _, d, err := Converged(context.Background(), req); !errors.As(err, &oe) || oe.Field() != "Datasets" || d != nil {
		t.Errorf("frey: %v (directory %v), want an *option.Error about Datasets before any work", err, d)
	}
}
