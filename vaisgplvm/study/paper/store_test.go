package paper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// flipByte flips one bit in the middle of the file at path.
func flipByte(t *testing.T, path string) {
	t.Helper()
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	buf[len(buf)/2] ^= 1 << 3
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStoreResumes: a table run with a Store, stopped after some of its trainings (here: one
// training's file removed, one damaged), trains only the missing ones the next time and ends with
// exactly the rows, convergence columns and figures' inputs of the uninterrupted run; other options
// (more iterations) file their trainings under other keys and train everything again.
func TestStoreResumes(t *testing.T) {
	store := t.TempDir()
	o := small[Table1Options](8, 20)
	o.Iters = 60 // long enough for a final rise (>= 20 steps)
	o.Datasets, o.Runs, o.Methods, o.Store, o.Figures = []string{"oilflow"}, 2, []string{"mf", "iwvi"}, store, true
	first, err := Table1(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(store, "*.gob"))
	if len(files) != 4 {
		t.Fatalf("store holds %v, want 4 trainings", files)
	}
	kept, err := readStored(files[2])
	if err != nil || kept == nil {
		t.Fatalf("%s: %v", files[2], err)
	}
	if kept.Backend == "" || kept.Backend != first.Settings["backend"] {
		t.Errorf("%s records backend %q, want the table's %q", files[2], kept.Backend, first.Settings["backend"])
	}
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	flipByte(t, files[1])
	var log bytes.Buffer
	o.Log = &log
	var trained []string
	o.Jobs = 1 // trained is appended to without a lock
	o.Observer = ObserverFuncs{TrainingFunc: func(name string) func(train.Event) { trained = append(trained, name); return nil }}
	second, err := Table1(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := second.Settings["backend"], first.Settings["backend"]; got != want || strings.ContainsAny(want.(string), "()") || want == "not recorded" {
		t.Errorf("resumed table's backend %q, uninterrupted %q: want one name, the read-back trainings recording theirs", got, want)
	}
	if len(trained) != 2 || !strings.Contains(log.String(), "2 of 4 trainings read back") || !strings.Contains(log.String(), "damaged: its bytes do not match the checksum written with them; training it again") {
		t.Errorf("trained %v; log:\n%s\nwant the removed and the damaged training trained again, 2 read back", trained, log.String())
	}
	if len(first.Rows) != len(second.Rows) {
		t.Fatalf("rows: %d then %d", len(first.Rows), len(second.Rows))
	}
	for i, a := range first.Rows {
		b := second.Rows[i]
		if a.NegELBO != b.NegELBO || a.MSE != b.MSE || a.NELL != b.NELL || a.KLU != b.KLU || a.NegELBOSE != b.NegELBOSE {
			t.Errorf("row %d: resumed %+v, uninterrupted %+v", i, b, a)
		}
		if a.FinalRise == nil || b.FinalRise == nil || *a.FinalRise != *b.FinalRise || *a.StillMoving != *b.StillMoving {
			t.Errorf("row %d (%d iterations): final rise %v / %v, want equal and present", i, a.Iterations, a.FinalRise, b.FinalRise)
		}
	}
	for i := range first.jobs {
		a, b := first.jobs[i].art, second.jobs[i].art
		if (a == nil) != (b == nil) || (a != nil && (len(a.curve) != len(b.curve) || a.params.NoiseVariance != b.params.NoiseVariance)) {
			t.Errorf("job %d: figures' inputs differ after resuming", i)
		}
	}
	trained, log = nil, bytes.Buffer{}
	o.Iters = 63
	if _, err := Table1(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if len(trained) != 4 {
		t.Errorf("with other iterations %d trainings ran, want all 4 (other keys)", len(trained))
	}
}

// TestTable5StoreResumes: Table 5 with a Store, one fit's file removed and one damaged, fits only
// those two again the next time and ends with the uninterrupted run's per-run values; other
// options (more held-out iterations) file under other keys. Without Exact the Bayesian rows still
// carry their training-point scores, 1-NN error and seconds per iteration.
func TestTable5StoreResumes(t *testing.T) {
	store := t.TempDir()
	o := small[Table5Options](5, 20)
	o.Datasets, o.Subset, o.ReconIters, o.Runs, o.Store, o.Jobs = []string{"oilflow"}, 40, 3, 2, store, 1
	first, err := Table5(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range first.Rows {
		if !(r.TrainMSE[0] > 0) || r.OneNNError == nil || !(r.SecPerIter > 0) {
			t.Errorf("%s: train MSE %v, 1-NN %v, s/iter %v: want them measured without Exact", r.Method, r.TrainMSE, r.OneNNError, r.SecPerIter)
		}
	}
	if got := fmt.Sprint(first.Settings["subset"]); got != "map[oilflow:40]" {
		t.Errorf("subset setting %s, want map[oilflow:40]", got)
	}
	if got := fmt.Sprint(subsetSetting([]string{"frey", "wine"}, func(n string) int { return map[string]int{"frey": 300}[n] })); got != "map[frey:300 wine:all]" {
		t.Errorf("subset setting %s, want map[frey:300 wine:all] (Paper: all of wine)", got)
	}
	files, _ := filepath.Glob(filepath.Join(store, "*.json"))
	if len(files) != 4 {
		t.Fatalf("store holds %v, want 4 fits", files)
	}
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	if buf, err := os.ReadFile(files[1]); err != nil {
		t.Fatal(err)
	} else if want := fmt.Sprintf("%q: %q", "backend", first.Settings["backend"]); !bytes.Contains(buf, []byte(want)) || first.Settings["backend"] == "not recorded" {
		t.Errorf("%s does not record the table's backend (%s)", files[1], want)
	}
	flipByte(t, files[3])
	var log bytes.Buffer
	o.Log = &log
	second, err := Table5(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "2 of 4 fits read back") || strings.Count(log.String(), " done (") != 2 ||
		!strings.Contains(log.String(), "do not match the checksum written with them; fitting it again") {
		t.Errorf("log:\n%s\nwant 2 fits read back and the removed and the damaged one fitted again", log.String())
	}
	if len(first.Rows) != len(second.Rows) {
		t.Fatalf("rows: %d then %d", len(first.Rows), len(second.Rows))
	}
	for i, a := range first.Rows {
		b := second.Rows[i]
		for s := range a.PerRun {
			x, y := a.PerRun[s], b.PerRun[s]
			if x.MSE != y.MSE || x.NELL != y.NELL || x.TrainMSE != y.TrainMSE || x.TrainNELL != y.TrainNELL {
				t.Errorf("%s seed %d: resumed %+v, uninterrupted %+v", a.Method, x.Seed, y, x)
			}
		}
		if a.MSE != b.MSE || a.NELL != b.NELL || a.N != b.N || a.Test != b.Test {
			t.Errorf("row %d: resumed %+v, uninterrupted %+v", i, b, a)
		}
	}
	log.Reset()
	o.ReconIters = 4
	if _, err := Table5(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "read back") || strings.Count(log.String(), " done (") != 4 {
		t.Errorf("with other held-out iterations, log:\n%s\nwant all 4 fitted again (other keys)", log.String())
	}
}

// TestRunawayOnStoredCurves runs train.CheckRunaway over the stored 3000-iteration training curves
// of records/ (every table's jobs/): it stops exactly the three MNIST VAIS trainings with the
// paper's gradient, which diverged with finite values (-ELBO up to 29738 per image), and none of
// the others.
func TestRunawayOnStoredCurves(t *testing.T) {
	files, _ := filepath.Glob("../../../records/*/jobs/*.gob")
	deeper, _ := filepath.Glob("../../../records/*/*/jobs/*.gob")
	files = append(files, deeper...)
	checked, stopped := 0, []string{}
	for _, f := range files {
		s, err := readStored(f)
		if err != nil || s == nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(s.Curve) < 3000 {
			continue
		}
		checked++
		for n := 1; n <= len(s.Curve); n++ {
			if err := train.CheckRunaway(s.Curve[:n], 0.02, true); err != nil {
				stopped = append(stopped, filepath.Base(filepath.Dir(filepath.Dir(f)))+"/"+filepath.Base(f)[:16])
				break
			}
		}
	}
	want := []string{"table2-mnist/mnist-vais-seed1", "table2-mnist/mnist-vais-seed2", "table2-mnist/mnist-vais-seed3"}
	if checked < 60 || strings.Join(stopped, " ") != strings.Join(want, " ") {
		t.Errorf("%d curves checked, stopped %v; want at least 60 checked and only %v stopped", checked, stopped, want)
	}
}

// TestStoreOnly: StoreOnly makes the table of what a Store holds, training nothing and writing
// nothing there (the rows of the run that filled it), and refuses, naming a missing training, when
// the table needs one the Store lacks; it refuses Fresh and a table without a Store.
func TestStoreOnly(t *testing.T) {
	store := t.TempDir()
	o := small[Table1Options](8, 20)
	o.Datasets, o.Runs, o.Methods, o.Store = []string{"oilflow"}, 1, []string{"mf", "iwvi"}, store
	first, err := Table1(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := filepath.Glob(filepath.Join(store, "*"))
	o.StoreOnly, o.Jobs = true, 1
	var trained []string
	o.Observer = ObserverFuncs{TrainingFunc: func(name string) func(train.Event) { trained = append(trained, name); return nil }}
	again, err := Table1(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(trained) != 0 || len(again.Rows) != len(first.Rows) {
		t.Fatalf("StoreOnly trained %v, %d rows (want none, %d)", trained, len(again.Rows), len(first.Rows))
	}
	for i, a := range first.Rows {
		if b := again.Rows[i]; a.NegELBO != b.NegELBO || a.MSE != b.MSE || a.NELL != b.NELL {
			t.Errorf("row %d: StoreOnly %+v, the run that filled the store %+v", i, b, a)
		}
	}
	o.Runs = 2
	_, err = Table1(context.Background(), o)
	if !errors.Is(err, ErrNotStored) || !strings.Contains(err.Error(), "2 of 4 trainings") || !strings.Contains(err.Error(), "seed 2") {
		t.Errorf("StoreOnly with a seed the store lacks: %v, want ErrNotStored naming 2 of 4 and seed 2", err)
	}
	if after, _ := filepath.Glob(filepath.Join(store, "*")); len(after) != len(before) || len(trained) != 0 {
		t.Errorf("StoreOnly changed the store (%d files, then %d) or trained %v", len(before), len(after), trained)
	}
	o.Runs, o.Fresh = 1, true
	if _, err := Table1(context.Background(), o); err == nil {
		t.Error("StoreOnly with Fresh: no error")
	}
	o.Fresh, o.Store = false, ""
	if _, err := Table1(context.Background(), o); err == nil {
		t.Error("StoreOnly without a Store: no error")
	}
}

// TestTrainedOn: a table's backend setting is the one backend's name when every training records
// it, and each name with its count, the most used first, when the store mixes machines or holds
// trainings written before the backend was recorded.
func TestTrainedOn(t *testing.T) {
	name := func(s *string) string { return *s }
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"Go Backend", "Go Backend"}, "Go Backend"},
		{[]string{"Go Backend", "xla:cuda", "xla:cuda", ""}, "xla:cuda (2), Go Backend (1), not recorded (1)"},
		{[]string{"", ""}, "not recorded"},
	} {
		if got := trainedOn(c.in, name); got != c.want {
			t.Errorf("trainedOn(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
