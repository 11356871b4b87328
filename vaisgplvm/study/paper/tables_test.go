package paper

import (
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// small returns table options of type T for seconds-long runs: 3 iterations, M inducing points,
// mini-batches of batch and (a table with Trainings) one training at a time.
func small[T any, P interface {
	*T
	TableOptions
}](m, batch int) T {
	var o T
	c := P(&o).Common()
	c.Iters, c.Configure = 3, func(c *model.Config) error {
		c.M, c.Batch = m, batch
		return nil
	}
	if tr, ok := any(&o).(interface{ TrainingOptions() *Trainings }); ok {
		tr.TrainingOptions().Jobs = 1
	}
	return o
}

// TestTable1IsIndependentOfJobs: Table 1 on oilflow, two seeds, is the same whether the trainings
// run one at a time or three at once (each has its own seeds; the backend is shared), and every
// row's mean and 2 s.e. are those of its runs.
func TestTable1IsIndependentOfJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("long (tens of seconds to minutes on 2 cores): skipped under -short; the README's test command runs it")
	}
	var res [2]*Result
	var planned int
	var mu sync.Mutex
	finished := map[string]int{} // each training's last event's iteration
	for i, jobs := range []int{1, 3} {
		o := small[Table1Options](8, 20)
		o.Datasets, o.Runs, o.Jobs = []string{"oilflow"}, 2, jobs
		if jobs == 3 {
			o.Observer = ObserverFuncs{PlanFunc: func(n, _ int) { planned = n }, TrainingFunc: func(name string) func(train.Event) {
				return func(e train.Event) {
					mu.Lock()
					defer mu.Unlock()
					if e.Total != 3 {
						t.Errorf("%s: event total %d, want the final 3", name, e.Total)
					}
					finished[name] = e.Iter
				}
			}}
		}
		r, err := Table1(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		res[i] = r
	}
	if planned != 6 || len(finished) != 6 || finished["oilflow vais seed 2"] != 3 {
		t.Errorf("planned %d trainings, observed %v: want 6 (3 methods x 2 seeds), each to iteration 3", planned, finished)
	}
	if len(res[0].Rows) != 9 || len(res[1].Rows) != 9 {
		t.Fatalf("want 9 rows (3 methods x 3 snapshots), got %d and %d", len(res[0].Rows), len(res[1].Rows))
	}
	for i := range res[0].Rows {
		a, b := res[0].Rows[i], res[1].Rows[i]
		if a.NegELBO != b.NegELBO || a.MSE != b.MSE || a.NELL != b.NELL || a.Method != b.Method {
			t.Errorf("row %d differs between 1 and 3 jobs: %+v vs %+v", i, a, b)
		}
		checkPerRun(t, a)
		if a.Paper != nil {
			t.Errorf("%s %s at %d iterations: the paper prints no such row, got %+v", a.Dataset, a.Method, a.Iterations, a.Paper)
		}
	}
	if md := res[0].Markdown(); !strings.Contains(md, "| paper -ELBO |") || strings.Count(md, "| oilflow | 3 | ") != 2 {
		t.Errorf("Markdown: want a paper column and the seed-paired lines of VAIS against iwvi and mf:\n%s", md)
	}
	if b := res[0].Baselines; len(b) != 3 || b[0].Method != "data space" || b[1].Method != "PCA (2 components)" || b[2].Method != "PCA (10 components)" ||
		b[0].OneNNError == nil || b[2].OneNNError == nil || b[2].MSE == nil || !(b[2].MSE[0] > 0 && b[2].MSE[0] < b[1].MSE[0]) || !((*b[0].OneNNError)[0] < 0.05) {
		t.Errorf("baselines %+v: want data-space and 2- and 10-component PCA 1-NN errors (data space below 5%% on oilflow) and PCA's MSE, lower with 10", b)
	}
	// The paper prints no oilflow row at 3 iterations, but the claims compare last snapshots.
	if len(res[0].Claims) != 3 {
		t.Errorf("want 3 claims (-ELBO, MSE, NELL on oilflow), got %+v", res[0].Claims)
	}
}

// checkPerRun checks a row of two runs against its per-run values: seeds 1 and 2, the row's mean
// their mean, and its two standard errors |a - b| (for two values, sd = |a - b| / sqrt 2); to 1e-12
// relative.
func checkPerRun(t *testing.T, r Row) {
	t.Helper()
	if len(r.PerRun) != 2 || r.PerRun[0].Seed != 1 || r.PerRun[1].Seed != 2 {
		t.Fatalf("%s %s %d: per_run %+v, want seeds 1 and 2", r.Dataset, r.Method, r.Iterations, r.PerRun)
	}
	a, b := r.PerRun[0], r.PerRun[1]
	for _, c := range []struct {
		name   string
		row    [2]float64
		va, vb float64
	}{
		{"neg_elbo", r.NegELBO, a.NegELBO, b.NegELBO},
		{"mse", r.MSE, a.MSE, b.MSE},
		{"nell", r.NELL, a.NELL, b.NELL},
	} {
		mean, twoSE := (c.va+c.vb)/2, math.Abs(c.va-c.vb)
		if math.Abs(c.row[0]-mean) > 1e-12*math.Abs(mean) || math.Abs(c.row[1]-twoSE) > 1e-12*math.Abs(mean)+1e-300 {
			t.Errorf("%s %s %d %s: row %v, runs %g and %g", r.Dataset, r.Method, r.Iterations, c.name, c.row, c.va, c.vb)
		}
	}
	if se := math.Hypot(a.NegELBOSE, b.NegELBOSE) / 2; !(a.NegELBOSE > 0 && b.NegELBOSE > 0) || math.Abs(r.NegELBOSE-se) > 1e-12*se {
		t.Errorf("%s %s %d: MC s.e. %g, runs %g and %g: want positive run values and sqrt(a^2 + b^2) / 2", r.Dataset, r.Method, r.Iterations,
			r.NegELBOSE, a.NegELBOSE, b.NegELBOSE)
	}
	if a.NegELBO == b.NegELBO {
		t.Errorf("%s %s %d: both seeds gave -ELBO %g", r.Dataset, r.Method, r.Iterations, a.NegELBO)
	}
	if r.OneNNError != nil && (a.OneNNError == nil || b.OneNNError == nil) {
		t.Errorf("%s %s %d: per-run 1-NN errors missing", r.Dataset, r.Method, r.Iterations)
	}
}

// TestTable2Smoke runs the missing-pixel table for 3 iterations on MNIST and writes its figures.
func TestTable2Smoke(t *testing.T) {
	o := small[ImageOptions](5, 100)
	o.Datasets, o.Methods, o.Figures = []string{"mnist"}, []string{"mf", "vais"}, true
	o.Exact, o.ExactFitRows = true, 60
	o.Configure = func(c *model.Config) error { c.M, c.K = 5, 2; return nil }
	res, err := Table2(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 6 {
		t.Fatalf("want 6 rows, got %d", len(res.Rows))
	}
	for _, r := range res.Rows {
		if !(r.MSE[0] > 0 && r.MSE[0] < 1) || r.OneNNError == nil || !(r.NELL[0] > 0) {
			t.Errorf("row %+v: want a missing-pixel MSE in (0, 1) on the unit scale, a NELL and a 1-NN error", r)
		}
		if r.Iterations != 3 {
			if r.ExactMSE != nil || r.RefitMSE != nil {
				t.Errorf("row %s %d: exact scores %v %v before the last row", r.Method, r.Iterations, r.ExactMSE, r.RefitMSE)
			}
			continue
		}
		if r.ExactMSE == nil || !(r.ExactMSE[0] > 0 && r.ExactMSE[0] < 1) || r.ExactNELL == nil || r.PerRun[0].ExactMSE == nil {
			t.Errorf("row %s %d: exact-conditional scores %v %v: want an MSE in (0, 1) and a NELL, per run too", r.Method, r.Iterations, r.ExactMSE, r.ExactNELL)
		}
		if r.RefitMSE == nil || !(r.RefitMSE[0] > 0 && r.RefitMSE[0] < 1) || r.RefitNELL == nil || r.PerRun[0].RefitNELL == nil || *r.RefitMSE == *r.ExactMSE {
			t.Errorf("row %s %d: refitted exact scores %v %v: want an MSE in (0, 1) other than the exact one's, and a NELL", r.Method, r.Iterations, r.RefitMSE, r.RefitNELL)
		}
	}
	if md := res.Tables()[0].Text(); !strings.Contains(md, "exact MSE") || !strings.Contains(md, "refit NELL") {
		t.Error("Table 2's main table has no exact MSE or refit NELL column")
	}
	if b := res.Baselines; len(b) != 4 || b[0].MSE == nil || b[1].MSE == nil || !(b[0].MSE[0] > 0 && b[0].MSE[0] < 1) ||
		!(b[1].MSE[0] > 0 && b[1].MSE[0] < b[0].MSE[0]) || !(b[2].MSE[0] <= b[1].MSE[0]*1.05) || b[3].NELL == nil ||
		!(b[3].MSE[0] > 0 && b[3].MSE[0] < b[0].MSE[0]) {
		t.Errorf("baselines %+v: want column-mean, 5-NN, validated k-NN and PPCA imputation MSEs in (0, 1), each below the "+
			"column mean on MNIST, validated k-NN within 5%% of 5-NN or below, and PPCA's NELL", b)
	}
	dir := t.TempDir()
	files, err := res.WriteFigures(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"images_mnist.png", "curves_mnist.png", "latent_mnist_vais.png", "ard_mnist_mf.png"} {
		checkPNG(t, filepath.Join(dir, f))
	}
	if len(files) != 6 {
		t.Errorf("figures %v: want curves, images, and latent and ARD plots of both methods", files)
	}
}

// checkPNG fails unless path is a decodable PNG of a plausible figure size.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width < 200 || cfg.Height < 150 {
		t.Errorf("%s: %dx%d PNG (%v)", path, cfg.Width, cfg.Height, err)
	}
}

// TestTable3PerRun: Table 3's ESS and weight entropy per run, two seeds, 3 iterations on Frey:
// each between its bounds (1..K, 0..log K), and the row's mean and 2 s.e. those of the runs.
func TestTable3PerRun(t *testing.T) {
	if testing.Short() {
		t.Skip("long (tens of seconds to minutes on 2 cores): skipped under -short; the README's test command runs it")
	}
	o := small[ImageOptions](5, 100)
	o.Runs, o.Jobs = 2, 2
	o.Configure = func(c *model.Config) error { c.M, c.K = 5, 3; return nil }
	res, err := Table3(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 6 {
		t.Fatalf("want 6 rows (iwvi, vais x 3 snapshots), got %d", len(res.Rows))
	}
	for _, r := range res.Rows {
		checkPerRun(t, r)
		a, b := r.PerRun[0], r.PerRun[1]
		if r.ESS == nil || a.ESS == nil || b.ESS == nil || a.Entropy == nil || b.Entropy == nil {
			t.Fatalf("%s %d: ESS or entropy missing: %+v", r.Method, r.Iterations, r)
		}
		for _, e := range []float64{*a.ESS, *b.ESS} {
			if !(e >= 1-1e-12 && e <= 3+1e-12) {
				t.Errorf("%s %d: ESS %g outside [1, K = 3]", r.Method, r.Iterations, e)
			}
		}
		for _, h := range []float64{*a.Entropy, *b.Entropy} {
			if !(h >= -1e-12 && h <= math.Log(3)+1e-12) {
				t.Errorf("%s %d: weight entropy %g outside [0, log 3]", r.Method, r.Iterations, h)
			}
		}
		if m := (*a.ESS + *b.ESS) / 2; math.Abs(r.ESS[0]-m) > 1e-12*m || math.Abs(r.ESS[1]-math.Abs(*a.ESS-*b.ESS)) > 1e-12*m {
			t.Errorf("%s %d: row ESS %v, runs %g and %g", r.Method, r.Iterations, *r.ESS, *a.ESS, *b.ESS)
		}
		if m := (*a.Entropy + *b.Entropy) / 2; math.Abs(r.Entropy[0]-m) > 1e-12*math.Max(m, 1e-3) {
			t.Errorf("%s %d: row entropy %v, runs %g and %g", r.Method, r.Iterations, *r.Entropy, *a.Entropy, *b.Entropy)
		}
	}
	if md := res.Markdown(); strings.Count(md, "| 20.3 | ") != 1 || strings.Count(md, "| 4.1 | ") != 1 {
		t.Errorf("Markdown: want the paper's ESS 20.3 (VAIS) and 4.1 (IWVI) beside the last snapshot:\n%s", md)
	}
	if len(res.Claims) != 2 || !strings.Contains(res.Claims[0].Paper, "VAIS > IWVI (20.3 > 4.1)") {
		t.Errorf("claims %+v: want the ESS and entropy orderings, the paper's VAIS > IWVI (20.3 > 4.1)", res.Claims)
	}
	if sg := res.Settings["stop_grad"]; sg != "vais on frey" || !strings.Contains(res.Markdown(), "stop_grad=vais on frey") {
		t.Errorf("settings stop_grad %v: want \"vais on frey\" (Config's Frey preset), also in the caption", sg)
	}
}

// TestStopGradCells: the caption names each dataset whose VAIS cells stop the score gradient once,
// and ignores the flag on methods without a chain.
func TestStopGradCells(t *testing.T) {
	cells := []struct {
		ds, method string
		sg         bool
	}{{"frey", "vais", true}, {"frey", "vais", true}, {"mnist", "vais", false}, {"mnist", "mf", true}, {"wine", "vais", true}}
	at := func(i int) (string, string, bool) { return cells[i].ds, cells[i].method, cells[i].sg }
	if got := stopGradCells(len(cells), at); got != "vais on frey, wine" {
		t.Errorf("stopGradCells = %q, want \"vais on frey, wine\"", got)
	}
	if got := stopGradCells(3, func(i int) (string, string, bool) { return "frey", "vais", false }); got != "" {
		t.Errorf("stopGradCells with none = %q, want \"\"", got)
	}
}

// TestTable5Smoke fits the standard GPLVM and VAIS on 40 oilflow points for 3 iterations.
func TestTable5Smoke(t *testing.T) {
	o := small[Table5Options](5, 20)
	o.Datasets, o.Subset, o.ReconIters, o.Exact, o.ValidatePPCA = []string{"oilflow"}, 40, 3, true, true
	planned := -1
	o.Observer = ObserverFuncs{PlanFunc: func(n, _ int) { planned = n }}
	res, err := Table5(context.Background(), o)
	if planned != 1 {
		t.Errorf("table 5 planned %d reporting trainings, want 1 (VAIS; the standard GPLVM's fit does not report)", planned)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0].Method != "standard" || res.Rows[1].Method != "vais" {
		t.Fatalf("rows %+v, want standard and vais", res.Rows)
	}
	for _, r := range res.Rows {
		if r.N != 40 || r.Test != 4 || !(r.MSE[0] > 0) || !(r.TrainMSE[0] > 0) || math.IsNaN(r.NELL[0]) || r.OneNNError == nil || r.SecPerIter <= 0 {
			t.Errorf("row %+v", r)
		}
		if len(r.PerRun) != 1 || r.PerRun[0].Seed != 1 || r.PerRun[0].MSE != r.MSE[0] || r.PerRun[0].NELL != r.NELL[0] ||
			r.PerRun[0].TrainNELL != r.TrainNELL[0] || r.PerRun[0].OneNNError == nil || *r.PerRun[0].OneNNError != r.OneNNError[0] {
			t.Errorf("%s: per_run %+v does not hold the one run's values", r.Method, r.PerRun)
		}
		if r.Paper == nil {
			t.Errorf("%s: want the paper's oilflow row", r.Method)
		}
	}
	if b := res.Baselines; len(b) != 5 || b[0].MSE == nil || !(b[0].MSE[0] > 0) || b[1].MSE == nil || !(b[1].MSE[0] > 0) ||
		!(b[2].MSE[0] > 0) || b[3].NELL == nil || !(b[3].MSE[0] > 0 && b[3].MSE[0] < b[0].MSE[0]) ||
		!strings.Contains(b[4].Method, "q validated per seed (chosen: ") || b[4].NELL == nil || !(b[4].MSE[0] > 0 && b[4].MSE[0] < b[0].MSE[0]) {
		t.Errorf("baselines %+v: want column-mean, 5-NN, validated k-NN, PPCA and validated PPCA imputation MSEs of the held-out entries, "+
			"both PPCAs below column means, with their NELLs and the validated q", b)
	}
	for _, r := range res.Rows {
		if (r.Method == "vais") != (r.PredMSE != nil && r.PredNELL != nil) {
			t.Errorf("%s: mixture scores %v %v: want them for the Bayesian GPLVM only", r.Method, r.PredMSE, r.PredNELL)
		}
		if (r.Method == "vais") != (r.RefitMSE != nil && r.RefitNELL != nil && *r.RefitMSE != *r.PredMSE) {
			t.Errorf("%s: refitted exact scores %v %v: want them for the Bayesian GPLVM only", r.Method, r.RefitMSE, r.RefitNELL)
		}
		if (r.Method == "vais") != (r.ExactMSE != nil && r.ExactNELL != nil && *r.ExactMSE != *r.PredMSE) {
			t.Errorf("%s: exact-conditional scores %v %v: want them, other than the mixture's, for the Bayesian GPLVM only", r.Method, r.ExactMSE, r.ExactNELL)
		}
	}
	// any registered bound is a row of its own, held out the same way
	o.Methods = []string{"standard", "vais", "iwvi"}
	more, err := Table5(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(more.Rows) != 3 || more.Rows[2].Method != "iwvi" || more.Rows[2].PredMSE == nil || more.Rows[2].Test != 4 || !(more.Rows[2].MSE[0] > 0) ||
		more.Rows[0].PerRun[0].MSE != res.Rows[0].PerRun[0].MSE {
		t.Errorf("table 5 with iwvi: rows %+v; want a third row for iwvi on the same split", more.Rows)
	}
	if len(res.Claims) != 2 || !strings.Contains(res.Claims[0].Paper, "VAIS < STANDARD (1.71 < 2.45)") {
		t.Errorf("claims %+v: want held-out MSE and NLL, the paper's VAIS < STANDARD (1.71 < 2.45)", res.Claims)
	}
}

// TestTable6Smoke times MF once and VAIS with K = 1 and 5 on Frey, one timed iteration each.
func TestTable6Smoke(t *testing.T) {
	o := small[Table6Options](5, 100)
	o.Methods, o.Ks, o.Reps = []string{"mf", "vais"}, []int{1, 5}, 1
	o.Configure = func(c *model.Config) error { c.M = 5; return nil }
	res, err := Table6(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 || res.Machine == "" || res.Rows[0].Method != "mf" || res.Rows[0].K != 0 || res.Rows[2].K != 5 {
		t.Fatalf("want rows mf (K 0, once), vais K=1, vais K=5; table %+v", res)
	}
	for _, r := range res.Rows {
		if r.ItersPerEpoch != 20 || !(r.MedianSecs > 0) || math.Abs(r.EpochSecs-20*r.MedianSecs) > 1e-12 ||
			!(r.HostSecs > 0 && r.HostSecs < r.MedianSecs) {
			t.Errorf("row %+v: want 20 iterations per epoch (1965 / 100), epoch = 20 x iteration and a host share", r)
		}
	}
	if p := res.Rows[2].PaperA100; p == nil || *p != 1.53 {
		t.Errorf("VAIS K = 5: paper A100 %v, want 1.53 s per epoch", p)
	}
	if md := res.Markdown(); !strings.Contains(md, "| vais | 5 |") || !strings.Contains(md, "| 1.53 |") {
		t.Errorf("Markdown lacks the VAIS K = 5 row with the paper's 1.53:\n%s", md)
	}
}

// TestBadOptions: bad options are *option.Error naming the Options (or model.Config) field at
// fault, before anything is trained.
func TestBadOptions(t *testing.T) {
	ctx := context.Background()
	tiny := &data.Dataset{Name: "tiny", X: [][]float64{{1, 2}, {3, 4}, {5, 7}}}
	for _, c := range []struct {
		name, field string
		run         func() error
	}{
		{"table 1 dataset", "Datasets", func() error {
			_, err := Table1(ctx, Table1Options{Trainings: Trainings{Datasets: []string{"frey"}}})
			return err
		}},
		{"table 2 dataset", "Datasets", func() error {
			_, err := Table2(ctx, ImageOptions{Trainings: Trainings{Datasets: []string{"wine"}}})
			return err
		}},
		{"table 3 mf", "Methods", func() error {
			_, err := Table3(ctx, ImageOptions{Options: Options{Methods: []string{"mf", "vais"}}})
			return err
		}},
		{"method", "Methods", func() error {
			_, err := Table1(ctx, Table1Options{Options: Options{Methods: []string{"xx"}}})
			return err
		}},
		{"runs", "Runs", func() error { _, err := Table1(ctx, Table1Options{Options: Options{Runs: -1}}); return err }},
		{"iters", "Iters", func() error { _, err := Table1(ctx, Table1Options{Options: Options{Iters: 2}}); return err }},
		{"pixels", "Pixels", func() error { _, err := Table2(ctx, ImageOptions{Pixels: "gray"}); return err }},
		{"subset", "Subset", func() error { _, err := Table5(ctx, Table5Options{Subset: 10}); return err }},
		{"table 5 methods", "Methods", func() error {
			_, err := Table5(ctx, Table5Options{Options: Options{Methods: []string{"no-such-bound"}}})
			return err
		}},
		{"ks", "Ks", func() error { _, err := Table6(ctx, Table6Options{Ks: []int{0}}); return err }},
		{"config", "M", func() error {
			_, err := Table1(ctx, Table1Options{Options: Options{Configure: func(c *model.Config) error { c.M = 0; return nil }}})
			return err
		}},
		{"own data as table 2", "Options", func() error { _, err := RunTable(ctx, 2, &Table1Options{Data: tiny}); return err }},
	} {
		var oe *option.Error
		if err := c.run(); !errors.As(err, &oe) || oe.Field() != c.field {
			t.Errorf("%s: got %v, want an *option.Error about %s", c.name, err, c.field)
		}
	}
}

// TestResultJSON: a Result's JSON holds the table number, the paper's row and the claims.
func TestResultJSON(t *testing.T) {
	r := &Result{Table: 1, Settings: map[string]any{"iters": 3000}}
	p, _ := Paper("oilflow", "vais", 3000)
	r.Rows = []Row{{Dataset: "oilflow", Method: "vais", Iterations: 3000, Runs: 1, Paper: &p}}
	buf, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"table":1`, `"paper":{"neg_elbo":{"mean":-6.82,"two_se":0.12}`} {
		if !strings.Contains(string(buf), want) {
			t.Errorf("JSON lacks %s: %s", want, buf)
		}
	}
	if md := r.Markdown(); !strings.Contains(md, "| -6.82 (0.12) |") {
		t.Errorf("Markdown lacks the paper's -6.82 (0.12):\n%s", md)
	}
}

// TestTable5And6Figures draws the Table 5 and 6 figures from made-up rows and refuses results with
// nothing to draw.
func TestTable5And6Figures(t *testing.T) {
	p, _ := Paper5("oilflow", "standard")
	q, _ := Paper5("oilflow", "vais")
	r5 := &Result5{Rows: []Row5{
		{Dataset: "oilflow", Method: "standard", Runs: 1, MSE: [2]float64{2, 0}, NELL: [2]float64{5, 0}, Paper: &p},
		{Dataset: "oilflow", Method: "vais", Runs: 1, MSE: [2]float64{1, 0}, NELL: [2]float64{3, 0}, Paper: &q},
	}}
	mse, nell, err := r5.Figures()
	if err != nil || mse == nil || nell == nil {
		t.Fatalf("Table 5 figures: %v", err)
	}
	if _, _, err := (&Result5{}).Figures(); err == nil {
		t.Error("no rows: want an error")
	}
	r6 := &Result6{Rows: []Row6{{Method: "mf"}, {Method: "vais", K: 5, EpochSecs: 1.2}, {Method: "vais", K: 25, EpochSecs: 3}}}
	if _, err := r6.Figure(); err != nil {
		t.Errorf("Table 6 figure: %v", err)
	}
	if _, err := (&Result6{Rows: []Row6{{Method: "mf"}}}).Figure(); err == nil {
		t.Error("only MF: want an error")
	}
}

// TestCheck: Check reports the options TableN would refuse, Configure's errors included, accepts
// the defaults of every table (nil or its Spec.Options) and refuses another table's options type.
func TestCheck(t *testing.T) {
	for _, table := range []int{1, 2, 3, 5, 6} {
		spec, _ := Lookup(table)
		if err := Check(table, nil); err != nil {
			t.Errorf("table %d, nil options: %v", table, err)
		}
		if err := Check(table, spec.Options()); err != nil {
			t.Errorf("table %d defaults: %v", table, err)
		}
	}
	if err := Check(4, nil); err == nil {
		t.Error("table 4: want an error (it lists settings)")
	}
	bad := errors.New("bad flag")
	if err := Check(5, &Table5Options{Options: Options{Configure: func(*model.Config) error { return bad }}}); !errors.Is(err, bad) {
		t.Errorf("Configure's error: got %v", err)
	}
	if err := Check(1, &Table1Options{Trainings: Trainings{Datasets: []string{"mnist"}}}); err == nil {
		t.Error("table 1 on mnist: want an error")
	}
	var oe *option.Error
	if err := Check(6, &Table5Options{}); !errors.As(err, &oe) || oe.Field() != "Options" || !strings.Contains(err.Error(), "*paper.Table6Options") {
		t.Errorf("table 6 with Table 5's options: got %v, want an *option.Error about Options naming *paper.Table6Options", err)
	}
}
