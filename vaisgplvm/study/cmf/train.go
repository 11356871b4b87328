package cmf

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// Train runs iters Adam steps on mini-batches of Cfg.Batch points, appending each step's
// -bound per point (a mini-batch estimate) to Curve; progress, when not nil, is called after every
// step. It stops early, without error, when ctx is cancelled. Errors: a non-finite or exploding
// bound (an *option.Diverged), with the iteration (the parameters are then unusable).
func (m *Model) Train(ctx context.Context, iters int, progress func(iter int, negBound float64)) error {
	if m.frozen && m.Cfg.Family == "amortised" {
		return nil // the encoder is global: held-out points have nothing of their own to fit
	}
	m.build()
	start := time.Now()
	defer func() { m.Seconds += time.Since(start).Seconds() }()
	for it := 0; it < iters; it++ {
		if ctx.Err() != nil {
			return nil
		}
		in, err := m.inputs(m.nextBatch(), m.Cfg.Samples, false)
		if err != nil {
			return err
		}
		out, err := m.step.Exec(in...)
		if err != nil {
			return fmt.Errorf("cmf: iteration %d: %w", m.Iter+1, err)
		}
		v := vars.Flat64(out[0])[0]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return option.Divergedf(m.Iter+1, "cmf: diverged at iteration %d: the bound is %g; lower the learning rate (now %g)", m.Iter+1, -v, m.Cfg.LR)
		}
		m.Iter++
		m.Curve = append(m.Curve, v)
		if progress != nil {
			progress(m.Iter, v)
		}
	}
	return nil
}

// Fit returns a model of the held-out points y [N', P] that shares this model's global
// parameters (decoder, GP, r(X | z), encoder), frozen, and fits its own local parameters for
// iters steps (nothing to fit for the amortised family, whose encoder gives them). The locals
// start at those of each point's nearest training point (Euclidean, in data space).
// Errors: data of another width, or a failed step.
func (m *Model) Fit(ctx context.Context, y [][]float64, iters int) (*Model, error) {
	if len(y) == 0 || len(y[0]) != m.P {
		return nil, fmt.Errorf("cmf: held-out data must have %d columns", m.P)
	}
	cfg := m.Cfg
	cfg.Batch = min(cfg.Batch, len(y))
	held, err := newShell(cfg, y, m)
	if err != nil {
		return nil, err
	}
	if err := vars.CopyFrozen(m.Ctx, held.Ctx, func(scope string) bool {
		return !strings.HasPrefix(scope, "/local") && !strings.HasPrefix(scope, "/AdamOptimizer")
	}); err != nil {
		return nil, err
	}
	return held, held.Train(ctx, iters, nil)
}

// newShell is a model of data y whose locals start at the nearest training point's and whose
// inducing inputs and q(u) start at the trained model's (every global is then overwritten by
// the frozen copies); M may exceed the held-out count.
func newShell(cfg Config, y [][]float64, trained *Model) (*Model, error) {
	held, err := checkedModel(cfg, y, trained.Backend, math.MaxInt)
	if err != nil {
		return nil, err
	}
	held.init.inducing, held.init.kappa = trained.init.inducing, trained.init.kappa
	mean, logVar, err := trained.locals()
	if err != nil {
		return nil, err
	}
	for _, row := range y {
		j := nearest(trained.Y, row)
		held.init.mean = append(held.init.mean, append([]float64(nil), mean[j]...))
		held.init.logVar = append(held.init.logVar, append([]float64(nil), logVar[j]...))
	}
	held.frozen = true
	return held, nil
}

// nearest returns the index of the row of x closest to v (squared Euclidean distance).
func nearest(x [][]float64, v []float64) int {
	best, arg := math.Inf(1), 0
	for i, row := range x {
		d := 0.0
		for j := range row {
			d += (row[j] - v[j]) * (row[j] - v[j])
			if d >= best {
				break
			}
		}
		if d < best {
			best, arg = d, i
		}
	}
	return arg
}

// locals returns the current per-point parameters [N, R or Dz]: phi and log Phi (cmf) or the
// means and log variances of q(z_i) (meanfield); the initial values before any step, and nil for
// the amortised family.
func (m *Model) locals() (mean, logVar [][]float64, err error) {
	names := [2]string{"phi", "log_phi_var"}
	if m.Cfg.Family != "cmf" {
		names = [2]string{"mean", "log_var"}
	}
	out := [2][][]float64{m.init.mean, m.init.logVar}
	for k, name := range names {
		v := m.Ctx.Store().Scope("/local").GetVariable(name)
		if v == nil {
			continue
		}
		t, err := v.Value()
		if err != nil {
			return nil, nil, err
		}
		flat, w := vars.Flat64(t), m.localDim()
		rows := make([][]float64, m.N)
		for i := range rows {
			rows[i] = flat[i*w : (i+1)*w]
		}
		out[k] = rows
	}
	return out[0], out[1], nil
}
