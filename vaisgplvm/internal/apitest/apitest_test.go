package apitest_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/infer"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/baselines"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/evidence"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// toy returns 12 points of 3 columns.
func toy() [][]float64 {
	x := make([][]float64, 12)
	for i := range x {
		f := float64(i)
		x[i] = []float64{math.Sin(f), math.Cos(f), 0.1 * f}
	}
	return x
}

// toyTrainer returns a trainer of a small MF or VAIS model on toy() after two steps.
func toyTrainer(t *testing.T, method string) *train.Trainer {
	t.Helper()
	cfg := model.DefaultConfig(method, 2)
	cfg.M, cfg.K = 4, 2
	m, err := model.New(cfg, toy(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(m, testutil.Backend())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), 2, train.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestLibraryRejectsBadArguments: each call passes an argument a caller can pass but the function
// cannot use; each must return an error containing the given words, never panic, and never return
// a value (an -ELBO of 0, a NaN standard error) as if it had worked.
func TestLibraryRejectsBadArguments(t *testing.T) {
	good := toy()
	cfg := model.DefaultConfig("mf", 2)
	cfg.M = 4
	nan := math.NaN()
	withMask := func(mask [][]float64) func() error {
		return func() error { _, err := model.New(cfg, good, mask); return err }
	}
	ones := func(v float64) [][]float64 {
		m := make([][]float64, len(good))
		for i := range m {
			m[i] = []float64{1, 1, 1}
		}
		m[3][1] = v
		return m
	}
	withData := func(x, mask [][]float64) func() error {
		return func() error { _, err := model.New(cfg, x, mask); return err }
	}
	nanData := toy()
	nanData[2][0] = nan
	jitter := func(j float64) func() error {
		return func() error { c := cfg; c.Jitter = j; _, err := model.New(c, good, nil); return err }
	}
	tr := toyTrainer(t, "mf")
	ds := &data.Dataset{X: good}
	cases := []struct {
		name  string
		call  func() error
		words string
	}{
		{"data.Standardize(nil)", func() error { _, _, _, err := data.Standardize(nil); return err }, "no rows"},
		{"data.Standardize(ragged)", func() error { _, _, _, err := data.Standardize([][]float64{{1, 2}, {3}}); return err }, "row 2"},
		{"data.Standardize(Inf)", func() error { _, _, _, err := data.Standardize([][]float64{{1}, {math.Inf(1)}}); return err }, "Inf"},
		{"latent.PCA(nil)", func() error { _, err := latent.PCA(nil, 1); return err }, "no rows"},
		{"metrics.MSE(mismatched)", func() error { _, err := metrics.MSE(good, good[:3], nil); return err }, "rows"},
		{"metrics.ESS(nil) is NaN", func() error { return nanIsError(metrics.ESS(nil)) }, "NaN"},
		{"model.New(short mask row)", withMask(append(ones(1)[:len(good)-1], []float64{1})), "mask row 12"},
		{"model.New(short mask)", withMask(ones(1)[:5]), "mask has 5 rows"},
		{"model.New(NaN data, empty mask)", withData(nanData, [][]float64{}), "mask has 0 rows"},
		{"model.New(NaN data, no mask)", withData(nanData, nil), "not finite"},
		{"model.New(mask 0.5)", withMask(ones(0.5)), "want 0 (missing) or 1"},
		{"model.New(mask NaN)", withMask(ones(nan)), "want 0 (missing) or 1"},
		{"model.New(nil data)", withData(nil, nil), "no rows"},
		{"model.New(Jitter NaN)", jitter(nan), "Jitter"},
		{"model.New(Jitter +Inf)", jitter(math.Inf(1)), "Jitter"},
		{"protocol.SubsetRows(-1)", func() error { _, _, err := protocol.SubsetRows(ds, -1, 1); return err }, "n >= 0"},
		{"protocol.SubsetRows(nil)", func() error { _, _, err := protocol.SubsetRows(nil, 3, 1); return err }, "want a dataset"},
		{"Evaluate(-3)", func() error { _, err := eval.Evaluate(tr, -3, nil); return err }, "-3 noise draws"},
		{"Evaluate(0)", func() error { _, err := eval.Evaluate(tr, 0, nil); return err }, "0 noise draws"},
		{"Evaluate(short labels)", func() error { _, err := eval.Evaluate(tr, 1, []int{1, 2}); return err }, "2 labels for 12 points"},
		{"nil Trainer", func() error { var n *train.Trainer; _, err := n.Step(); return err }, "nil Trainer"},
		{"train.New(nil, nil)", func() error { _, err := train.New(nil, nil); return err }, "no model"},
		{"train.New(model, nil)", func() error {
			m, _ := model.New(cfg, good, nil)
			_, err := train.New(m, nil)
			return err
		}, "no backend"},
		{"train.NewFor(ragged data)", func() error {
			_, err := train.NewFor(cfg, [][]float64{{1, 2}, {3}}, nil, testutil.Backend())
			return err
		}, "train: mf: "},
		{"train.Fit(cancelled)", func() error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			tr, err := train.Fit(ctx, cfg, good, nil, testutil.Backend(), 5, train.RunOptions{})
			if tr == nil || !errors.Is(err, train.ErrInterrupted) {
				return fmt.Errorf("trainer %v, err %v: want the trainer and ErrInterrupted", tr, err)
			}
			return err
		}, "interrupted"},
		{"zero Trainer", func() error { return (&train.Trainer{}).Run(context.Background(), 1, train.RunOptions{}) }, "no model"},
		{"infer.Latents(nil trainer)", func() error {
			_, err := infer.Latents(context.Background(), nil, good, nil, infer.Options{})
			return err
		}, "nil Trainer"},
		{"infer.Latents(mask 0.5)", func() error {
			_, err := infer.Latents(context.Background(), tr, good[:2], [][]float64{{1, 0.5, 1}, {1, 1, 1}}, infer.Options{})
			return err
		}, "0.5"},
		{"evidence.Estimate(nil)", func() error { _, err := evidence.Estimate(context.Background(), nil, evidence.Options{}); return err }, "nil Trainer"},
		{"evidence.Estimate(one run)", func() error {
			_, err := evidence.Estimate(context.Background(), tr, evidence.Options{Temps: 3, Runs: 1})
			return err
		}, "runs >= 2"},
		{"evidence.Estimate(cancelled)", func() error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := evidence.Estimate(ctx, tr, evidence.Options{Temps: 3, Runs: 2})
			return err
		}, "context canceled"},
		{"infer.Latents(cancelled)", func() error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := infer.Latents(ctx, tr, good[:2], nil, infer.Options{Iters: 5})
			return err
		}, "interrupted"},
		{"evidence.Decompose(0 draws)", func() error { _, err := evidence.Decompose(context.Background(), tr, nil, 0); return err }, "0 noise draws"},
		{"evidence.Decompose(nil)", func() error { _, err := evidence.Decompose(context.Background(), nil, nil, 5); return err }, "nil Trainer"},
		{"evidence.ImportanceWeighted(cancelled)", func() error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := evidence.ImportanceWeighted(ctx, tr, nil, 2, []int{3})
			return err
		}, "stopped before evaluating q0 with 3 importance samples (IWVI, --iwvi-k): context canceled"},
		{"baselines.PCA(ragged)", func() error { _, _, err := baselines.PCA([][]float64{{1, 2}, {3}}, 1); return err }, "row 2"},
		{"protocol.HidePixels(nil)", func() error { _, _, _, err := protocol.HidePixels(nil, 1); return err }, "no rows"},
		{"protocol.HoldOut(nil)", func() error { _, err := protocol.HoldOut(nil, nil, 1); return err }, "no rows"},
		{"protocol.HoldOut(2 rows)", func() error { _, err := protocol.HoldOut(good[:2], nil, 1); return err }, "at least 3 rows"},
		{"protocol.HoldOut(short labels)", func() error { _, err := protocol.HoldOut(good, []int{1}, 1); return err }, "one label per row"},
		{"latent.Nearest(no training rows)", func() error { _, err := latent.Nearest(nil, nil, nil, good, nil); return err }, "want training rows"},
		{"latent.Nearest(ragged)", func() error { _, err := latent.Nearest(good, nil, good, [][]float64{{1}}, nil); return err }, "row 0 has 1 values"},
		{"protocol.WithNaN(short mask) does not panic", func() error {
			if out := protocol.WithNaN(good, [][]float64{{0}}); !math.IsNaN(out[0][0]) || math.IsNaN(out[0][1]) || len(out) != len(good) {
				return nil
			}
			return fmt.Errorf("ok: a short mask counts as observed")
		}, "ok"},
	}
	for _, c := range cases {
		checkCall(t, c.name, c.words, c.call)
	}
}

// checkCall runs call as subtest name: it must return an error containing words, never panic.
func checkCall(t *testing.T, name, words string, call func() error) {
	t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			err = call()
		}()
		if err == nil || strings.HasPrefix(err.Error(), "panic") || !strings.Contains(err.Error(), words) {
			t.Errorf("%v, want an error containing %q", err, words)
		}
	})
}

// nanIsError turns the documented NaN of a float-valued helper into an error, and any number into
// nil (which fails the case).
func nanIsError(v float64) error {
	if math.IsNaN(v) {
		return fmt.Errorf("NaN")
	}
	return nil
}
