package experiment_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/evidence"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestSourceTagRoundTrip: ParseSource inverts Tag for every kind of source, including the plain
// tags of earlier versions.
func TestSourceTagRoundTrip(t *testing.T) {
	for _, s := range []experiment.Source{
		{Dataset: "oilflow"}, {Dataset: "wine", Standardize: true},
		{Dataset: "frey", Pixels: "raw", HiddenSeed: 3},
		{File: "/abs/mine.csv", SHA256: "ab12", Labels: "class", Standardize: true},
	} {
		got, err := experiment.ParseSource(s.Tag())
		if err != nil || got != s {
			t.Errorf("ParseSource(%q) = %+v, %v; want %+v", s.Tag(), got, err, s)
		}
	}
	if tag := (experiment.Source{Dataset: "wine", Standardize: true}).Tag(); tag != "wine+standardized" {
		t.Errorf("tag %q: the format of earlier checkpoints is wine+standardized", tag)
	}
}

// TestScalerInverse: a standardised file's data is data.Standardize's, and ToDataUnits inverts
// ToModelUnits to rounding (relative 1e-12), NaN (missing) staying NaN.
func TestScalerInverse(t *testing.T) {
	x := writeCSV(t, 30, 4, 7)
	src := experiment.Source{File: x.path, Standardize: true}
	td, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	want, _, _, err := data.Standardize(x.rows)
	if err != nil {
		t.Fatal(err)
	}
	if d := testutil.MaxAbsDiff(testutil.FlattenRows(td.X), testutil.FlattenRows(want)); d > 1e-12 {
		t.Errorf("standardised data differs from data.Standardize by %g", d)
	}
	if src.SHA256 == "" || !filepath.IsAbs(src.File) {
		t.Errorf("Load left SHA256 %q, File %q: want the file's sha256 and an absolute path", src.SHA256, src.File)
	}
	in := [][]float64{{1, math.NaN(), -3, 1e3}, {0, 0, 0, 0}}
	back := td.ToDataUnits(td.ToModelUnits(in))
	for i := range in {
		for j, v := range in[i] {
			if math.IsNaN(v) != math.IsNaN(back[i][j]) || (!math.IsNaN(v) && math.Abs(back[i][j]-v) > 1e-12*max(1, math.Abs(v))) {
				t.Errorf("[%d][%d]: %g back as %g", i, j, v, back[i][j])
			}
		}
	}
}

// TestTrainThenLoadCheckpoint trains a small model on a file in-process, checks its outputs, and
// loads the checkpoint back: the loaded trainer evaluates to metrics.json's bound exactly. A run
// stopped after its first steps and resumed ends with the uninterrupted run's curve.
func TestTrainThenLoadCheckpoint(t *testing.T) {
	f := writeCSV(t, 40, 5, 1)
	cfg := model.DefaultConfig("vais", 2)
	cfg.M, cfg.K = 8, 2
	open := func(model.Config) (backends.Backend, error) { return testutil.Backend(), nil }
	run := func(out string, iters int, stop bool, resume string) (*experiment.Metrics, *train.Trainer, error) {
		src, td, tr := fileTrainer(t, f.path, cfg)
		dir, err := experiment.OpenTrainDir(out, rundir.Options{Resume: resume != "", ResumeFile: resume, Overwrite: true})
		if err != nil {
			t.Fatal(err)
		}
		defer dir.Close()
		opt := experiment.TrainOptions{Iters: iters, CheckpointEvery: 100, Seed: 1, Resume: resume}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if stop {
			cancel()
		}
		met, err := experiment.Train(ctx, dir, tr, td, src, opt)
		return met, tr, err
	}
	out := t.TempDir()
	met, tr, err := run(out, 6, false, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"checkpoint.gob", "curve.csv", "metrics.json", "latents.csv", "reconstruction.csv"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("Train did not write %s: %v", name, err)
		}
	}
	if met.Iterations != 6 || met.Chain == nil || len(met.Chain.Betas) != cfg.K {
		t.Errorf("metrics: %d iterations, chain %+v; want 6 and a chain of K = %d", met.Iterations, met.Chain, cfg.K)
	}
	loaded, td, err := experiment.LoadCheckpoint(filepath.Join(out, "checkpoint.gob"), open, "")
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Iter != 6 || !slices.Equal(loaded.Curve, tr.Curve) {
		t.Errorf("loaded checkpoint at iteration %d with curve %v; want 6 and %v", loaded.Iter, loaded.Curve, tr.Curve)
	}
	ev, err := eval.Evaluate(loaded, 5, td.Labels)
	if err != nil {
		t.Fatal(err)
	}
	if ev.NegELBO != met.Eval.NegELBO {
		t.Errorf("loaded model's -ELBO %v, metrics.json's %v: want them equal", ev.NegELBO, met.Eval.NegELBO)
	}

	// Interrupted at once (after one step), then resumed to 6: the same curve.
	out2 := t.TempDir()
	if _, _, err := run(out2, 6, true, ""); !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("stopped run: %v; want train.ErrInterrupted", err)
	}
	ckpt := filepath.Join(out2, experiment.PartialCheckpoint)
	_, resumed, err := run(out2, 6, false, ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resumed.Curve, tr.Curve) {
		t.Errorf("resumed curve %v; uninterrupted %v", resumed.Curve, tr.Curve)
	}
	if _, err := os.Stat(ckpt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the finished resumed run left its partial checkpoint: %v", err)
	}

	// Issue 50, class 1: stopped over a finished run (overwriting it), a run leaves its partial
	// checkpoint and curve beside the finished run's files, which stay as they were.
	before := testutil.FileSums(t, out, nil)
	if _, _, err := run(out, 6, true, ""); !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("stopped run over a finished one: %v; want train.ErrInterrupted", err)
	}
	after := testutil.FileSums(t, out, nil)
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("the interrupted run changed or removed the finished run's %s", name)
		}
	}
	for _, name := range experiment.TrainPartial {
		if after[name] == "" {
			t.Errorf("the interrupted run left no %s", name)
		}
	}
	ckpt = filepath.Join(out2, "checkpoint.gob")
	var oe *option.Error
	if _, _, err := run(t.TempDir(), 3, false, ckpt); !errors.As(err, &oe) || !strings.Contains(err.Error(), "Iters 3 is below") || oe.Field() != "Iters" {
		t.Errorf("resume with fewer iterations than done: %v; want an *option.Error", err)
	}
}

// TestLoadCheckpointErrors: a --train-data for a built-in dataset is an option error, and a
// checkpoint's file that moved names the fix.
func TestLoadCheckpointErrors(t *testing.T) {
	f := writeCSV(t, 20, 3, 2)
	cfg := model.DefaultConfig("mf", 2)
	cfg.M = 5
	_, _, tr := fileTrainer(t, f.path, cfg)
	ckpt := filepath.Join(t.TempDir(), "c.gob")
	if err := tr.Save(ckpt); err != nil {
		t.Fatal(err)
	}
	open := func(model.Config) (backends.Backend, error) { return testutil.Backend(), nil }
	moved := f.path + ".moved"
	if err := os.Rename(f.path, moved); err != nil {
		t.Fatal(err)
	}
	if _, _, err := experiment.LoadCheckpoint(ckpt, open, ""); err == nil || !strings.Contains(err.Error(), "give its new place with TrainData") {
		t.Errorf("moved file: %v", err)
	}
	if _, _, err := experiment.LoadCheckpoint(ckpt, open, moved); err != nil {
		t.Errorf("moved file given: %v", err)
	}
	builtin := experiment.Source{Dataset: "oilflow"}
	tr.DataTag = builtin.Tag()
	if err := tr.Save(ckpt); err != nil {
		t.Fatal(err)
	}
	var oe *option.Error
	if _, _, err := experiment.LoadCheckpoint(ckpt, open, moved); !errors.As(err, &oe) {
		t.Errorf("--train-data for a built-in dataset: %v; want an *option.Error", err)
	}
}

// TestWarnings: a rising curve and a chain that never accepts are warned about, a healthy run is
// not; identical rows and an extreme scale are, standardised data of any scale is not.
func TestWarnings(t *testing.T) {
	flat := make([]float64, 100)
	rising := make([]float64, 100)
	for i := range rising {
		flat[i], rising[i] = 10-0.01*float64(i), 10+float64(i)
	}
	if w := experiment.TrainWarnings(flat, &experiment.ChainReport{Accept: []float64{0.5, 0.9}}); len(w) != 0 {
		t.Errorf("healthy run warned: %v", w)
	}
	if w := experiment.TrainWarnings(rising, &experiment.ChainReport{Accept: []float64{0.001, 0.005}}); len(w) != 2 {
		t.Errorf("diverged run with a stuck chain: %d warnings %v; want 2", len(w), w)
	}
	same := [][]float64{{1, 2}, {1, 2}, {1, 2}}
	huge := [][]float64{{1e7, 0}, {-1e7, 1}}
	if w := experiment.DataWarnings(same, false); len(w) != 1 || !strings.Contains(w[0], "every data row is the same") {
		t.Errorf("identical rows: %v", w)
	}
	if w := experiment.DataWarnings(huge, false); len(w) != 1 || !strings.Contains(w[0], "--standardize") {
		t.Errorf("extreme scale: %v", w)
	}
	if w := experiment.DataWarnings(huge, true); len(w) != 0 {
		t.Errorf("standardised: %v", w)
	}
}

type csvFile struct {
	path string
	rows [][]float64
}

// writeCSV writes n rows of d smooth functions of a 1-d latent plus noise (seeded) as a CSV file
// with a header line.
func writeCSV(t *testing.T, n, d int, seed uint64) csvFile {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	var b strings.Builder
	for j := range d {
		if j > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "c%d", j+1)
	}
	b.WriteString("\n")
	rows := make([][]float64, n)
	for i := range rows {
		h := rng.NormFloat64()
		rows[i] = make([]float64, d)
		for j := range rows[i] {
			rows[i][j] = 3*math.Sin(h+float64(j)) + 0.1*rng.NormFloat64() + float64(j)
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%.17g", rows[i][j])
		}
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "mine.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return csvFile{path, rows}
}

// fileTrainer loads the file at path as a Source and returns it, its data and a trainer of cfg on
// it (pure-Go test backend).
func fileTrainer(t *testing.T, path string, cfg model.Config) (experiment.Source, *experiment.Data, *train.Trainer) {
	t.Helper()
	src := experiment.Source{File: path}
	td, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := experiment.NewTrainer(cfg, td, src, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	return src, td, tr
}

// TestEvidenceOptionsCheck: each setting Evidence cannot use is an *option.Error about its field,
// and the command's defaults pass.
func TestEvidenceOptionsCheck(t *testing.T) {
	good := experiment.EvidenceOptions{Draws: 5, Tolerance: 0.05, Options: evidence.Options{Temps: 1000, Runs: 8, Seed: 1, Start: "prior"}}
	if err := good.Check(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	for field, bad := range map[string]func(o *experiment.EvidenceOptions){
		"Temps":      func(o *experiment.EvidenceOptions) { o.Temps = 0 },
		"Runs":       func(o *experiment.EvidenceOptions) { o.Runs = 1 },
		"Points":     func(o *experiment.EvidenceOptions) { o.Points = -1 },
		"Draws":      func(o *experiment.EvidenceOptions) { o.Draws = 1 },
		"Seed":       func(o *experiment.EvidenceOptions) { o.Seed = 0 },
		"ESSK":       func(o *experiment.EvidenceOptions) { o.ESSK = 1 },
		"Damaged":    func(o *experiment.EvidenceOptions) { o.Damaged, o.Points = true, 5 },
		"Start":      func(o *experiment.EvidenceOptions) { o.Start = "middle" },
		"CheckTemps": func(o *experiment.EvidenceOptions) { o.CheckTemps = 1000 },
		"Tolerance":  func(o *experiment.EvidenceOptions) { o.Tolerance = 0 },
		"EtaScales":  func(o *experiment.EvidenceOptions) { o.EtaScales = []float64{-1} },
		"Chains":     func(o *experiment.EvidenceOptions) { o.Chains = []int{0} },
		"Dampings":   func(o *experiment.EvidenceOptions) { o.Dampings = []float64{1} },
	} {
		o := good
		bad(&o)
		var oe *option.Error
		if err := o.Check(); !errors.As(err, &oe) || oe.Field() != field {
			t.Errorf("bad %s: %v, want an *option.Error about %s", field, err, field)
		}
	}
}

// TestConvergeByDefault: a fully observed file with the se kernel converges by default; missing
// entries, another kernel, or an N M^2 beyond ConvergeLimit say why not.
func TestConvergeByDefault(t *testing.T) {
	x := make([][]float64, 30)
	for i := range x {
		x[i] = []float64{float64(i), 1}
	}
	td := &experiment.Data{Dataset: &data.Dataset{X: x}}
	if ok, why := experiment.ConvergeByDefault(td, "se", 50); !ok {
		t.Fatalf("fully observed, se: %s", why)
	}
	if ok, why := experiment.ConvergeByDefault(td, "matern32", 50); ok || !strings.Contains(why, "psi statistics") {
		t.Fatalf("matern32: %v %q", ok, why)
	}
	big := &experiment.Data{Dataset: &data.Dataset{X: make([][]float64, 30000)}}
	if ok, why := experiment.ConvergeByDefault(big, "se", 50); ok || !strings.Contains(why, "too many") {
		t.Fatalf("30000 points at M 50: %v %q", ok, why)
	}
	td.Mask = [][]float64{{1, 0}}
	if ok, why := experiment.ConvergeByDefault(td, "se", 50); ok || !strings.Contains(why, "missing") {
		t.Fatalf("missing entries: %v %q", ok, why)
	}
}
