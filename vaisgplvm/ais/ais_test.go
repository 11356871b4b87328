package ais

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
)

// linearGaussian is B targets l_b(h) = log N(y_b | A h, s2 I) over h [Q], whose normalising
// constants are closed forms: Z_b = N(y_b | 0, A A^T + s2 I).
type linearGaussian struct {
	a  [][]float64 // [D, Q]
	y  [][]float64 // [B, D]
	s2 float64
}

func newLinearGaussian(b, d, q int, s2 float64, seed uint64) *linearGaussian {
	rng := rand.New(rand.NewPCG(seed, 1))
	return &linearGaussian{a: testutil.NormalRows(rng, d, q, 1), y: testutil.NormalRows(rng, b, d, 2), s2: s2}
}

// exact returns log Z_b by gonum's multivariate normal density (float64, on the host).
func (lg *linearGaussian) exact() []float64 {
	d, q := len(lg.a), len(lg.a[0])
	am := mat.NewDense(d, q, testutil.FlattenRows(lg.a))
	var cov mat.SymDense
	cov.SymOuterK(1, am)
	for i := 0; i < d; i++ {
		cov.SetSym(i, i, cov.At(i, i)+lg.s2)
	}
	n, ok := distmv.NewNormal(make([]float64, d), &cov, nil)
	if !ok {
		panic("covariance not positive definite")
	}
	out := make([]float64, len(lg.y))
	for b, y := range lg.y {
		out[b] = n.LogProb(y)
	}
	return out
}

func (lg *linearGaussian) target() Target {
	d, q, b := len(lg.a), len(lg.a[0]), len(lg.y)
	a := tensors.FromFlatDataAndDimensions(testutil.FlattenRows(lg.a), d, q)
	y := tensors.FromFlatDataAndDimensions(testutil.FlattenRows(lg.y), b, d)
	return Target{Backend: testutil.Backend(), Ctx: mlmodel.NewStore().RootScope(), DType: dtypes.Float64, B: b, Q: q,
		LogLik: func(ctx *mlmodel.Scope, h *Node) *Node {
			g := h.Graph()
			mean := Einsum("rbq,dq->rbd", h, ConstTensor(g, a))
			r := Sub(mean, InsertAxes(ConstTensor(g, y), 0))
			return AddScalar(MulScalar(ReduceSum(Square(r), -1), -0.5/lg.s2), -0.5*float64(d)*math.Log(2*math.Pi*lg.s2))
		}}
}

// TestAgainstClosedForm: on linear-Gaussian targets (Q = 3, D = 5, a peaked likelihood with noise
// variance 0.05), every target's AIS estimate (300 temperatures, 8 runs) is within 4 standard
// errors plus 0.02 nats of the exact log Z_b, and the estimates are not all equal to it to the last
// digit (the test can fail: with 3 temperatures the same targets miss by more).
func TestAgainstClosedForm(t *testing.T) {
	lg := newLinearGaussian(6, 5, 3, 0.05, 7)
	exact := lg.exact()
	s, err := New(lg.target())
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Estimate(context.Background(), Options{Temps: 300, Runs: 8, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for b := range exact {
		if d := math.Abs(res.LogZ[b] - exact[b]); !(d <= 4*res.LogZSE[b]+0.02) {
			t.Errorf("target %d: AIS %.4f ± %.4f, exact %.4f", b, res.LogZ[b], res.LogZSE[b], exact[b])
		}
	}
	if res.Accept < 0.3 || res.Accept > 0.95 {
		t.Errorf("acceptance %.3f, want near the pilot's 0.65", res.Accept)
	}
	few, err := s.Estimate(context.Background(), Options{Temps: 3, Runs: 8, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for b := range exact {
		worst = max(worst, exact[b]-few.LogZ[b])
	}
	if worst < 1 {
		t.Errorf("with 3 temperatures the estimates are within %.3f nats of exact: the check above could not fail", worst)
	}
}

// TestBetas: a schedule given as Betas is the path. With Linear(300) the estimates are within 4
// standard errors plus 0.02 nats of the exact log Z_b, as with the sigmoid schedule; with the
// one-step path [0, 1] every run's log weight is l_b at an exact draw of the prior, whose mean is the
// closed form E[l_b(h)] = -D/2 log(2 pi s2) - (|y_b|^2 + tr(A^T A)) / (2 s2), matched within 4
// standard errors of the mean over 4000 runs (the test fails if the weight were taken after the
// transition, or at beta_1 = 1 twice).
func TestBetas(t *testing.T) {
	lg := newLinearGaussian(4, 5, 3, 0.5, 11)
	s, err := New(lg.target())
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Estimate(context.Background(), Options{Betas: Linear(300), Runs: 8, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Temps != 300 {
		t.Errorf("Linear(300) ran %d temperatures", res.Temps)
	}
	for b, exact := range lg.exact() {
		if d := math.Abs(res.LogZ[b] - exact); !(d <= 4*res.LogZSE[b]+0.02) {
			t.Errorf("target %d, linear schedule: AIS %.4f ± %.4f, exact %.4f", b, res.LogZ[b], res.LogZSE[b], exact)
		}
	}
	one, err := s.Estimate(context.Background(), Options{Betas: []float64{0, 1}, Runs: 4000, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	d, q := len(lg.a), len(lg.a[0])
	trATA := 0.0
	for i := 0; i < d; i++ {
		for j := 0; j < q; j++ {
			trATA += lg.a[i][j] * lg.a[i][j]
		}
	}
	for b, y := range lg.y {
		yy := 0.0
		for _, v := range y {
			yy += v * v
		}
		want := -0.5*float64(d)*math.Log(2*math.Pi*lg.s2) - (yy+trATA)/(2*lg.s2)
		mean, sd := stat.MeanStdDev(one.LogW[b], nil)
		if se := sd / math.Sqrt(float64(len(one.LogW[b]))); math.Abs(mean-want) > 4*se {
			t.Errorf("target %d, one step: mean log weight %.4f ± %.4f, E_prior[l] %.4f", b, mean, se, want)
		}
	}
	for _, bad := range []Options{{Betas: []float64{0.1, 1}}, {Betas: []float64{0, 0.9}}, {Betas: []float64{0, 0.5, 0.5, 1}},
		{Betas: []float64{0, 1}, Temps: 5}, {Betas: []float64{0}}} {
		if _, err := s.Estimate(context.Background(), bad); err == nil {
			t.Errorf("schedule %v with %d temperatures accepted", bad.Betas, bad.Temps)
		}
	}
}

// TestPilotPasses: on a peaked linear-Gaussian target (noise variance 0.01) a 5-temperature path's
// one pilot pass leaves the main runs' acceptance far from the 0.65 it aims at; 12 passes bring it
// within 0.2 of it, and closer than one pass does. The estimates stay below the exact log Z_b
// plus 4 standard errors (AIS is unbiased for Z whatever the step sizes).
func TestPilotPasses(t *testing.T) {
	lg := newLinearGaussian(6, 8, 3, 0.01, 13)
	s, err := New(lg.target())
	if err != nil {
		t.Fatal(err)
	}
	one, err := s.Estimate(context.Background(), Options{Betas: Linear(5), Runs: 8, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	eight, err := s.Estimate(context.Background(), Options{Betas: Linear(5), Runs: 8, Seed: 2, PilotPasses: 12})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("acceptance after 1 pilot pass %.3f, after 12 %.3f", one.Accept, eight.Accept)
	if !(math.Abs(eight.Accept-0.65) < 0.2 && math.Abs(eight.Accept-0.65) < math.Abs(one.Accept-0.65)) {
		t.Errorf("acceptance %.3f after 12 passes, %.3f after 1: want within 0.2 of 0.65 and closer than one pass", eight.Accept, one.Accept)
	}
	for b, exact := range lg.exact() {
		if eight.LogZ[b] > exact+4*eight.LogZSE[b]+0.02 {
			t.Errorf("target %d: %.4f ± %.4f above exact %.4f", b, eight.LogZ[b], eight.LogZSE[b], exact)
		}
	}
}

// TestLogMeanExpSE: two values a, a+1 give log((e^a + e^(a+1))/2) and the delta-method s.e.
// sd(w) / (sqrt(2) mean(w)) = (e - 1) / (e + 1) to 1e-12.
func TestLogMeanExpSE(t *testing.T) {
	lz, se := LogMeanExpSE([]float64{1000, 1001})
	want := 1000 + math.Log((1+math.E)/2)
	if math.Abs(lz-want) > 1e-12 {
		t.Errorf("log mean exp %.15g, want %.15g", lz, want)
	}
	if wantSE := (math.E - 1) / (math.E + 1); math.Abs(se-wantSE) > 1e-12 {
		t.Errorf("s.e. %.15g, want %.15g", se, wantSE)
	}
	if _, se := LogMeanExpSE([]float64{3}); !math.IsNaN(se) {
		t.Errorf("one value: s.e. %g, want NaN", se)
	}
}

// TestSchedule: 0 and 1 at the ends, increasing.
func TestSchedule(t *testing.T) {
	b := Schedule(50)
	if b[0] != 0 || b[50] != 1 {
		t.Fatalf("ends %g, %g", b[0], b[50])
	}
	for i := 1; i < len(b); i++ {
		if !(b[i] > b[i-1]) {
			t.Fatalf("not increasing at %d: %v", i, b)
		}
	}
}

// TestNewErrors: a target without points, dimensions or a likelihood is refused.
func TestNewErrors(t *testing.T) {
	lg := newLinearGaussian(2, 3, 2, 0.1, 1)
	for _, mutate := range []func(*Target){
		func(t *Target) { t.B = 0 },
		func(t *Target) { t.Q = 0 },
		func(t *Target) { t.LogLik = nil },
		func(t *Target) { t.DType = dtypes.Int32 },
	} {
		tg := lg.target()
		mutate(&tg)
		if _, err := New(tg); err == nil {
			t.Errorf("New(%+v) accepted", tg)
		}
	}
}

// TestResultMean checks Result.Mean against a hand computation: mean (1 + 2 + 6) / 3 = 3 and
// s.e. sqrt(0.3^2 + 0.4^2 + 1.2^2) / 3 = 1.3 / 3.
func TestResultMean(t *testing.T) {
	r := &Result{LogZ: []float64{1, 2, 6}, LogZSE: []float64{0.3, 0.4, 1.2}}
	mean, se := r.Mean()
	if math.Abs(mean-3) > 1e-15 || math.Abs(se-1.3/3) > 1e-15 {
		t.Fatalf("Mean() = %v, %v; want 3, %v", mean, se, 1.3/3)
	}
}

// TestWarning: an estimate whose chains accept fewer than MinAccept of their moves warns, naming
// the temperatures; one that moves does not.
func TestWarning(t *testing.T) {
	if w := (&Result{Accept: 0, Temps: 5}).Warning(); !strings.Contains(w, "did not move") || !strings.Contains(w, "5") {
		t.Errorf("acceptance 0: %q", w)
	}
	if w := (&Result{Accept: 0.3, Temps: 5}).Warning(); w != "" {
		t.Errorf("acceptance 0.3: %q, want none", w)
	}
}

// TestProgress: Options.Progress sees every temperature of the pilot and of the main runs, in
// order, and the estimate is the same with it as without.
func TestProgress(t *testing.T) {
	s, err := New(newLinearGaussian(2, 3, 2, 0.1, 5).target())
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	o := Options{Temps: 7, Runs: 2, Seed: 3, Progress: func(stage string, done, total int) {
		calls = append(calls, fmt.Sprintf("%s %d/%d", stage, done, total))
	}}
	with, err := s.Estimate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Progress = nil
	without, err := s.Estimate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 14 || calls[0] != "pilot 1/7" || calls[6] != "pilot 7/7" || calls[7] != "main 1/7" || calls[13] != "main 7/7" {
		t.Errorf("progress calls %v, want pilot 1/7 .. 7/7 then main 1/7 .. 7/7", calls)
	}
	if with.LogZ[0] != without.LogZ[0] {
		t.Errorf("log Z %g with progress, %g without", with.LogZ[0], without.LogZ[0])
	}
}

// TestEstimateStopsOnCancel: a cancelled context stops Estimate before its next temperature, with
// an error that wraps context.Canceled and says where it stopped; a live one runs to the end.
func TestEstimateStopsOnCancel(t *testing.T) {
	lg := newLinearGaussian(2, 5, 3, 0.05, 7)
	s, err := New(lg.target())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	o := Options{Temps: 50, Runs: 2, Seed: 1, Progress: func(stage string, done, total int) {
		if steps++; stage == "main" && done == 10 {
			cancel()
		}
	}}
	_, err = s.Estimate(ctx, o)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "temperature 11 of 50") {
		t.Errorf("cancelled at the main run's 10th temperature: %v, want context.Canceled at temperature 11", err)
	}
	if _, err := s.Estimate(context.Background(), Options{Temps: 50, Runs: 2, Seed: 1}); err != nil {
		t.Errorf("a live context: %v", err)
	}
}
