package eval

import (
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// PointBounds are the model's bound split into its points' terms, for each noise draw.
type PointBounds struct {
	// L holds each draw's local bound of every point, L[k][n] = L_n [draws][N] (nats): the term of
	// point n that the ELBO sums, ELBO = sum_n L_n - KL(q(u) || p(u)).
	L [][]float64
	// KLU is KL(q(u) || p(u)) (nats; the same in every draw).
	KLU float64
}

// NegELBO returns -ELBO / N of draw k (nats per point): Evaluate's value of that draw.
func (p *PointBounds) NegELBO(k int) float64 {
	s := 0.0
	for _, l := range p.L[k] {
		s += l
	}
	return (p.KLU - s) / float64(len(p.L[k]))
}

// PointBounds evaluates the training bound (the same K and S) on all N points at once, draws
// times with Evaluate's noise draws, and returns every point's term of each draw: the mean over
// the points of draw k's terms, with KL(q(u) || p(u)) / N subtracted, is minus Evaluate's -ELBO
// of that draw (to rounding). It is the bound without Evaluate's reconstruction, and what a gap
// to the evidence on some of the points needs (package evidence). Errors: draws outside
// 1..MaxDraws, an evaluation that would not fit in memory (*option.Error), a non-finite term.
func NewPointBounds(t *train.Trainer, draws int) (*PointBounds, error) {
	if err := t.Ready(); err != nil {
		return nil, err
	}
	m := t.Model
	if draws < 1 || draws > MaxDraws {
		return nil, fmt.Errorf("eval: NewPointBounds with %d noise draws: want 1..%d", draws, MaxDraws)
	}
	full := *m
	full.Cfg.Batch = 0
	if err := full.Cfg.CheckMemory(m.N, m.D); err != nil {
		return nil, fmt.Errorf("eval: evaluating on all %d points: %w", m.N, err)
	}
	exec, err := t.CachedExec("point bounds", m, &full, func(ctx *mlmodel.Scope, x, mask, idx, eps0, chain *Node) []*Node {
		res, _ := full.Bound(ctx, x, mask, idx, eps0, chain)
		kl := Sub(ReduceAllSum(res.PerPoint), res.ELBO) // full batch: ELBO = sum_n L_n - KL
		return []*Node{res.PerPoint, kl}
	})
	if err != nil {
		return nil, err
	}
	out := &PointBounds{L: make([][]float64, draws)}
	for k := range draws {
		args, err := train.Inputs(&full, m.Cfg.Seed+1_000_003, k).Args((&full).DType()) // Evaluate's draws
		if err != nil {
			return nil, err
		}
		res, err := exec.Exec(args...)
		if err != nil {
			return nil, err
		}
		out.L[k] = vars.Flat64(res[0])
		if k == 0 {
			out.KLU = vars.Scalar(res[1])
		}
		if !vars.Finite(out.L[k]...) {
			return nil, fmt.Errorf("eval: the bound of draw %d is not finite at some point: the parameters have diverged", k)
		}
	}
	return out, nil
}
