package converge

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/testutil"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// rosenbrock is Rosenbrock's function, (1 - x0)^2 + 100 (x1 - x0^2)^2, minimum 0 at (1, 1), and
// its gradient: an Objective with a known optimum.
func rosenbrock(x, grad []float64) (float64, error) {
	a, b := 1-x[0], x[1]-x[0]*x[0]
	grad[0] = -2*a - 400*x[0]*b
	grad[1] = 200 * b
	return a*a + 100*b*b, nil
}

// TestMinimizeKnownOptimum: Minimize finds Rosenbrock's minimum (1, 1), reports where it started
// and where it ended, and refuses a start where the objective is not finite.
func TestMinimizeKnownOptimum(t *testing.T) {
	x, res, err := Minimize(context.Background(), rosenbrock, []float64{-1.2, 1}, Options{Rule: Rule{Window: 5, Tol: 1e-14}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged || math.Abs(x[0]-1) > 1e-5 || math.Abs(x[1]-1) > 1e-5 || math.Abs(res.Start-24.2) > 1e-12 || res.NegELBO > 1e-10 {
		t.Errorf("Rosenbrock: x %v, result %+v; want (1, 1), start 24.2, end 0", x, res)
	}
	if len(res.Curve) == 0 || res.Curve[len(res.Curve)-1] < res.NegELBO {
		t.Errorf("curve of %d values, best %g", len(res.Curve), res.NegELBO)
	}
	inf := func(x, grad []float64) (float64, error) { return math.Inf(1), nil }
	if _, _, err := Minimize(context.Background(), inf, []float64{0}, Options{}); err == nil || !strings.Contains(err.Error(), "at the start") {
		t.Errorf("objective +Inf at the start: error %v", err)
	}
}

// TestTrainStages: Train fits MF by L-BFGS alone, another bound on the same full-batch data by
// L-BFGS and then Adam on its own bound (start: the L-BFGS result), and a mini-batch model by
// Adam alone with the rule on whole epochs (14 points in batches of 10: 2 iterations an epoch, a
// window of 200); with no Observe of its own the Adam stage reports to Options.Observe.
func TestTrainStages(t *testing.T) {
	mf := smallTrainer(t, true)
	if got := Stages(mf); got != "L-BFGS" {
		t.Errorf("MF, full batch: stages %q", got)
	}
	res, start, err := Train(context.Background(), mf, Options{Rule: Rule{Window: 20, Tol: 1e-6}, MaxIters: 3000}, AdamOptions{})
	if err != nil || !res.Converged || start != nil || !strings.Contains(res.Rule, "L-BFGS") {
		t.Fatalf("MF: %+v, start %+v, %v", res, start, err)
	}
	newTrainer := func(method string, batch int) *train.Trainer {
		c := mf.Model.Cfg
		c.Method, c.K, c.Batch = method, 3, batch
		tr, err := train.NewFor(c, mf.Model.X, nil, testutil.Backend())
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	iw := newTrainer("iwvi", 0)
	if got := Stages(iw); got != "L-BFGS, then Adam" {
		t.Errorf("IWVI, full batch: stages %q", got)
	}
	stages := map[string]int{}
	observe := func(p Progress) { stages[p.Stage]++ }
	res, start, err = Train(context.Background(), iw, Options{Rule: Rule{Window: 20, Tol: 1e-6}, MaxIters: 3000, Observe: observe}, AdamOptions{Rule: AdamRule{Window: 50, Halvings: 1}, MaxIters: 400})
	if err != nil || start == nil || !start.Converged || !strings.HasPrefix(res.Rule, "Adam") || res.Iterations == 0 || iw.Iter != res.Iterations {
		t.Fatalf("IWVI: %+v, start %+v, %v", res, start, err)
	}
	if stages["L-BFGS"] != start.Iterations || stages["Adam"] != res.Iterations/50-1 { // windows from the second on
		t.Errorf("IWVI: Options.Observe saw %v, want every L-BFGS iteration (%d) and every Adam window's end but the first (%d iterations)", stages, start.Iterations, res.Iterations)
	}
	mb := newTrainer("iwvi", 10)
	if got := Stages(mb); got != "Adam" {
		t.Errorf("IWVI, mini-batches: stages %q", got)
	}
	res, start, err = Train(context.Background(), mb, Options{MaxSeconds: 60}, AdamOptions{Rule: AdamRule{Halvings: 1}, MaxIters: 450})
	if err != nil || start != nil || !strings.Contains(res.Rule, "over 200 iterations") || res.Iterations == 0 {
		t.Fatalf("mini-batches: %+v, start %+v, %v", res, start, err)
	}
}

// TestInterrupted: a minimisation stopped by its context's end reports StoppedBy Interrupted, and
// Result.Interrupted turns it into an error wrapping train.ErrInterrupted that names the stage, the
// iterations and the objective; a converged fit gives nil.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	obj := func(x, grad []float64) (float64, error) {
		if calls++; calls == 5 {
			cancel()
		}
		return rosenbrock(x, grad)
	}
	_, res, err := Minimize(ctx, obj, []float64{-1.2, 1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.StoppedBy != Interrupted || res.Stage != "L-BFGS" {
		t.Fatalf("stopped by %q in stage %q; want %q in L-BFGS", res.StoppedBy, res.Stage, Interrupted)
	}
	e := res.Interrupted("MAP objective")
	if !errors.Is(e, train.ErrInterrupted) || !strings.Contains(e.Error(), "L-BFGS iterations") || !strings.Contains(e.Error(), "MAP objective per point") {
		t.Errorf("Interrupted: %v", e)
	}
	_, done, err := Minimize(context.Background(), rosenbrock, []float64{-1.2, 1}, Options{Rule: Rule{Window: 5, Tol: 1e-14}})
	if err != nil || done.Interrupted("-ELBO") != nil {
		t.Errorf("a converged fit: %v, %v", err, done.Interrupted("-ELBO"))
	}
}

// TestTrainContinueStep: the Adam stage that Train runs after its L-BFGS stage takes its first
// step at a tenth of the model's LR, at most ContinueStep: against a twin trainer fitted by the
// L-BFGS stage alone (the same start, so the same L-BFGS path), one Adam iteration moves q0's
// means by about min(LR / 10, ContinueStep) and no more (Adam's first update of each parameter is
// at most its step size); at a tenth of the LR alone they would move twenty times as far.
func TestTrainContinueStep(t *testing.T) {
	mf := smallTrainer(t, true)
	c := mf.Model.Cfg
	c.Method, c.K, c.LR = "iwvi", 3, 0.02
	twin := func() *train.Trainer {
		tr, err := train.NewFor(c, mf.Model.X, nil, testutil.Backend())
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	opt := Options{Rule: Rule{Window: 20, Tol: 1e-6}, MaxIters: 3000}
	fitted, continued := twin(), twin()
	if _, err := Fit(context.Background(), fitted, opt); err != nil {
		t.Fatal(err)
	}
	res, start, err := Train(context.Background(), continued, opt, AdamOptions{MaxIters: 1})
	if err != nil || start == nil || res.Iterations != 1 {
		t.Fatalf("Train: %+v, start %+v, %v", res, start, err)
	}
	means := func(tr *train.Trainer) []float64 {
		x, err := vars.Flatten([]*mlmodel.Variable{tr.Ctx.At("latent").GetVariable("mean")})
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	moved := testutil.MaxAbsDiff(means(fitted), means(continued))
	if step := min(c.LR/10, ContinueStep); moved > step*(1+1e-9) || moved < step/2 {
		t.Errorf("the Adam stage's first step moved q0's means by up to %g; want about %g (LR %g, ContinueStep %g)", moved, step, c.LR, ContinueStep)
	}
}
