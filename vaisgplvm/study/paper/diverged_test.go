package paper

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestDivergedTrainingIsRecorded: a training that diverges (IWVI's seed 2 with a learning rate of
// 1e8) does not stop the table: the other trainings finish, the rows it did not reach leave it out
// and say so, the paired differences pair the seeds that remain, Result.Diverged and the Markdown
// say where and why, and a rerun reads it back from the store instead of training it again.
func TestDivergedTrainingIsRecorded(t *testing.T) {
	o := small[Table1Options](8, 20)
	o.Iters, o.Runs, o.Datasets, o.Methods, o.Store = 9, 3, []string{"oilflow"}, []string{"iwvi", "vais"}, t.TempDir()
	o.Configure = func(c *model.Config) error {
		c.M, c.Batch = 8, 20
		if c.Method == "iwvi" && c.Seed == 2 {
			c.LR = 1e8
		}
		return nil
	}
	var log bytes.Buffer
	o.Log = &log
	res, err := Table1(context.Background(), o)
	if err != nil {
		t.Fatalf("a diverged training stopped the table: %v", err)
	}
	if len(res.Diverged) != 1 || res.Diverged[0].Method != "iwvi" || res.Diverged[0].Seed != 2 || res.Diverged[0].Iteration < 1 ||
		!strings.Contains(res.Diverged[0].Reason, "diverged") {
		t.Fatalf("diverged %+v; want IWVI seed 2 with its iteration and reason", res.Diverged)
	}
	at := res.Diverged[0].Iteration
	for _, row := range res.Rows {
		want := 3
		if row.Method == "iwvi" && row.Iterations >= at {
			want = 2
		}
		if row.Runs != want || len(row.PerRun) != want || (want == 2) != (len(row.DivergedSeeds) == 1) {
			t.Errorf("%s at %d iterations (diverged at %d): %d runs, diverged seeds %v; want %d", row.Method, row.Iterations, at,
				row.Runs, row.DivergedSeeds, want)
		}
		for _, r := range row.PerRun {
			if want == 2 && r.Seed == 2 {
				t.Errorf("%s at %d iterations holds the diverged seed", row.Method, row.Iterations)
			}
		}
	}
	md := res.Markdown()
	for _, want := range []string{"Trainings that diverged", "| oilflow | iwvi | 2 |", "iwvi (2 of 3 seeds; 1 diverged)", "| oilflow | 9 | vais | iwvi |",
		"mean of each method's 2-3 seeds (some diverged)"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(log.String(), "iwvi seed 2 diverged at iteration") {
		t.Errorf("log:\n%s", log.String())
	}
	files, _ := filepath.Glob(filepath.Join(o.Store, "*.gob"))
	if len(files) != 6 {
		t.Errorf("store holds %d trainings, want 6 (the diverged one too)", len(files))
	}
	var trained int
	o.Observer = ObserverFuncs{TrainingFunc: func(string) func(train.Event) { trained++; return nil }}
	again, err := Table1(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if trained != 0 || len(again.Diverged) != 1 || again.Diverged[0] != res.Diverged[0] {
		t.Errorf("rerun trained %d, diverged %+v; want all read back, the same divergence", trained, again.Diverged)
	}
}

// TestTable5DivergedFitIsRecorded: in Table 5 a diverged fit (VAIS's seed 2 at a learning rate of
// 1e8) is recorded and left out of its row while the other fits finish, and a rerun reads it back.
func TestTable5DivergedFitIsRecorded(t *testing.T) {
	o := small[Table5Options](5, 20)
	o.Datasets, o.Subset, o.ReconIters, o.Runs, o.Store, o.Iters = []string{"oilflow"}, 40, 3, 3, t.TempDir(), 4
	o.Configure = func(c *model.Config) error {
		c.M, c.Batch = 5, 20
		if c.Method == "vais" && c.Seed == 2 {
			c.LR = 1e8
		}
		return nil
	}
	res, err := Table5(context.Background(), o)
	if err != nil {
		t.Fatalf("a diverged fit stopped Table 5: %v", err)
	}
	// The standard GPLVM takes VAIS's configuration (its LR too), so its seed 2 may diverge as well.
	for _, d := range res.Diverged {
		if d.Seed != 2 || d.Iteration < 1 || !strings.Contains(d.Reason, "diverged") {
			t.Errorf("diverged %+v; want seed 2 only, with its iteration and reason", d)
		}
	}
	if !slices.ContainsFunc(res.Diverged, func(d DivergedRun) bool { return d.Method == "vais" }) {
		t.Fatalf("diverged %+v; want VAIS's seed 2 among them", res.Diverged)
	}
	for _, row := range res.Rows {
		lost := slices.ContainsFunc(res.Diverged, func(d DivergedRun) bool { return d.Method == row.Method })
		if want := 3 - len(row.DivergedSeeds); row.Runs != want || lost != (len(row.DivergedSeeds) == 1) || len(row.PerRun) != want {
			t.Errorf("%s: %d runs, diverged seeds %v", row.Method, row.Runs, row.DivergedSeeds)
		}
	}
	if md := res.Markdown(); !strings.Contains(md, "Trainings that diverged") || !strings.Contains(md, "vais (2 of 3 seeds; 1 diverged)") {
		t.Errorf("Markdown:\n%s", md)
	}
	var fitted int
	o.Observer = ObserverFuncs{TrainingFunc: func(string) func(train.Event) { fitted++; return nil }}
	again, err := Table5(context.Background(), o)
	if err != nil || fitted != 0 || len(again.Diverged) != len(res.Diverged) {
		t.Errorf("rerun: %v, %d fitted, diverged %+v; want all read back", err, fitted, again.Diverged)
	}
}
