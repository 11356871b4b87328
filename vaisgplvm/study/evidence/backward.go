package evidence

import (
	"context"
	"fmt"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// LearnedBackward fits, at the trainer's parameters, the backward kernels of the mcd bound (a
// network correcting each step's backward drift, bounds "mcd") on the training bound alone: every
// variable of the checkpoint (kernel, inducing variables, likelihood, schedule and step sizes, the
// latents' q0) is copied frozen, the network is trained for iters Adam steps from 0 (VAIS's
// backward kernel), and the learned chain is evaluated beside the trained one, each on all N
// points averaged over draws noise draws with its gap to ev as in Decompose. The trainer is not
// changed. It says how much of the chain's gap a learned backward kernel removes before any
// training of the model with it. Errors: a model without an annealed chain, iters < 1, a chain
// with per-point step sizes or App. D's rule (their state would move while fitting), ctx's error
// (the fit stops when ctx is cancelled).
func LearnedBackward(ctx context.Context, tr *train.Trainer, ev *Result, draws, iters int) ([]BoundValue, error) {
	if err := checkArgs(tr, draws); err != nil {
		return nil, err
	}
	m := tr.Model
	switch {
	case !m.Method.Annealed():
		return nil, fmt.Errorf("evidence: the %s bound has no annealed chain whose backward kernel could be learned", m.Cfg.Method)
	case iters < 1:
		return nil, fmt.Errorf("evidence: %d iterations fitting the backward kernel: want >= 1", iters)
	case m.Step.PerPoint || m.Step.PaperD:
		return nil, fmt.Errorf("evidence: a learned backward kernel at fixed parameters needs step sizes without per-point factors or App. D's rule")
	}
	mm, err := m.WithBound("mcd", m.Cfg.K, nil)
	if err != nil {
		return nil, err
	}
	if mm.Step.Adaptive { // the trained eta_k as they are: read, not adapted
		mm.Step.Adaptive, mm.Step.Learned = false, true
	}
	ft, err := train.New(mm, tr.Backend)
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	if err := vars.CopyFrozen(tr.Ctx, ft.Ctx, func(scope string) bool { return !strings.HasPrefix(scope, "/bound/mcd") }); err != nil {
		return nil, err
	}
	before, err := evaluate(ctx, ft, ev, draws, "mcd", fmt.Sprintf("the trained chain (%d chain(s) of %d steps), backward kernel not fitted", m.Cfg.Samples, m.Cfg.K))
	if err != nil {
		return nil, err
	}
	if err := ft.Run(ctx, iters, train.RunOptions{}); err != nil {
		return nil, fmt.Errorf("evidence: fitting the backward kernel: %w", err)
	}
	after, err := evaluate(ctx, ft, ev, draws, "mcd", fmt.Sprintf("the trained chain with a backward kernel fitted for %d steps at fixed parameters", iters))
	if err != nil {
		return nil, err
	}
	return []BoundValue{before, after}, nil
}
