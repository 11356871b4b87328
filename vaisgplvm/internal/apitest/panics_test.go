package apitest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/ais"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/cmf"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/evidence"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestLibraryNeverPanics (issue 50, class 6): every call passes an argument a caller can pass (a
// nil receiver or pointer, a negative size, a path outside the run's directory, a table that does
// not exist). Each either returns an error containing the given words or, where the function has
// no error to return, the documented zero value; none panics. Every case panicked before the fix.
func TestLibraryNeverPanics(t *testing.T) {
	tr := toyTrainer(t, "mf")
	dir, err := rundir.Open(filepath.Join(t.TempDir(), "out"), []string{"a.csv", "curve.csv", "table1.md", "table1.json"}, rundir.Options{Run: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	var nilTrainer *train.Trainer
	var nilLab *experiment.ScheduleLab
	var nilCMF *cmf.Model
	var nilDir *rundir.Dir
	zero := func(ok bool, what string) error {
		if ok {
			return fmt.Errorf("zero value")
		}
		return fmt.Errorf("%s is not the zero value", what)
	}
	cases := []struct {
		name, words string
		call        func() error
	}{
		{"Trainer.Scratch(nil)", "nil Trainer", func() error { _, err := nilTrainer.Scratch(); return err }},
		{"Trainer.SecondsPerIter(nil)", "zero value", func() error { return zero(nilTrainer.SecondsPerIter() == 0, "SecondsPerIter") }},
		{"Trainer.GraphOps(nil)", "zero value", func() error { n, m := nilTrainer.GraphOps(); return zero(n == 0 && m == 0, "GraphOps") }},
		{"Trainer.ClippedSteps(nil)", "zero value", func() error { return zero(nilTrainer.ClippedSteps() == 0, "ClippedSteps") }},
		{"cmf.Model.Latents(nil)", "nil", func() error { _, err := nilCMF.Latents(); return err }},
		{"ScheduleLab.Trained(nil)", "zero value", func() error { b, e := nilLab.Trained(); return zero(b == nil && e == nil, "Trained") }},
		{"ScheduleLab.TrainedDamping(nil)", "zero value", func() error { return zero(nilLab.TrainedDamping() == nil, "TrainedDamping") }},
		{"ScheduleLab.Evaluate(nil)", "nil", func() error { _, err := nilLab.Evaluate(experiment.LabSetting{}); return err }},
		{"rundir.Dir.Close(nil)", "zero value", func() error { nilDir.Close(); return zero(true, "") }},
		{"experiment.Evidence(nil)", "nil Trainer", func() error {
			_, err := experiment.Evidence(context.Background(), nil, experiment.EvidenceOptions{})
			return err
		}},
		{"experiment.NewTrainer(nil data)", "nil", func() error {
			_, err := experiment.NewTrainer(model.DefaultConfig("mf", 2), nil, experiment.Source{}, nil)
			return err
		}},
		{"experiment.Train(nil dir)", "nil", func() error {
			_, err := experiment.Train(context.Background(), nil, tr, &experiment.Data{}, experiment.Source{}, experiment.TrainOptions{Iters: 1})
			return err
		}},
		{"experiment.Train(nil trainer)", "nil", func() error {
			_, err := experiment.Train(context.Background(), dir, nil, &experiment.Data{}, experiment.Source{}, experiment.TrainOptions{Iters: 1})
			return err
		}},
		{"experiment.Train(nil data)", "nil", func() error {
			_, err := experiment.Train(context.Background(), dir, tr, nil, experiment.Source{}, experiment.TrainOptions{Iters: 1})
			return err
		}},
		{"experiment.Infer(nil)", "nil", func() error {
			_, err := experiment.Infer(context.Background(), nil, nil, nil, experiment.InferOptions{})
			return err
		}},
		{"experiment.CheckChains(nil)", "nil Trainer", func() error { return experiment.CheckChains(nil, []int{4}) }},
		{"experiment.WriteCurve(nil dir)", "nil", func() error { return experiment.WriteCurve(nil, []float64{1}) }},
		{"experiment.WriteCMF(nil)", "nil", func() error { return experiment.WriteCMF(nil, nil, false) }},
		{"experiment.WriteCMF(nil result)", "nil", func() error { return experiment.WriteCMF(dir, nil, false) }},
		{"experiment.WriteESSGap(nil)", "nil", func() error { return experiment.WriteESSGap(dir, nil, false) }},
		{"experiment.WriteMatrix(../../x.csv)", "not one of", func() error { return experiment.WriteMatrix(dir, "../../x.csv", nil, [][]float64{{1}}) }},
		{"experiment.WriteMatrix(nil dir)", "nil", func() error { return experiment.WriteMatrix(nil, "a.csv", nil, [][]float64{{1}}) }},
		{"paper.WriteTable(99)", "table99", func() error { _, err := paper.WriteTable(dir, 99, fakeTable{}, false); return err }},
		{"paper.WriteTable(nil result)", "nil", func() error { _, err := paper.WriteTable(dir, 1, nil, false); return err }},
		{"experiment.LatentHeader(-1)", "zero value", func() error { return zero(experiment.LatentHeader(-1) == nil, "LatentHeader") }},
		{"evidence.PairESS(nil)", "nil Trainer", func() error { _, err := evidence.PairESS(nil, nil, 4, 1); return err }},
		{"evidence.PairESS(nil evidence)", "nil", func() error { _, err := evidence.PairESS(tr, nil, 4, 1); return err }},
		{"bounds.ResolveSettings(nil)", "nil", func() error { _, err := bounds.ResolveSettings(nil, map[string]float64{"x": 1}); return err }},
		{"train.Inputs(nil)", "zero value", func() error { b := train.Inputs(nil, 1, 0); return zero(b.X == nil && b.Idx == nil, "Inputs") }},
		{"ais.Schedule(-1)", "zero value", func() error { return zero(ais.Schedule(-1) == nil, "Schedule") }},
		{"ais.Schedule(0)", "zero value", func() error { return zero(ais.Schedule(0) == nil, "Schedule(0)") }},
		{"ais.LogMeanExpSE(nil)", "NaN", func() error { v, _ := ais.LogMeanExpSE(nil); return nanIsError(v) }},
		{"data.ReadCSV(-1 columns)", "columns", func() error {
			_, _, err := data.ReadCSV(filepath.Join(t.TempDir(), "none.csv"), ',', -1)
			return err
		}},
	}
	for _, c := range cases {
		checkCall(t, c.name, c.words, c.call)
	}
}

// fakeTable is a table result for WriteTable.
type fakeTable struct{}

func (fakeTable) Markdown() string { return "| a |\n" }

func (fakeTable) Made() map[string]any { return map[string]any{} }
