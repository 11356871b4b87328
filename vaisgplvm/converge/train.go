package converge

import (
	"cmp"
	"context"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Stages says how Train fits tr's model to convergence: "L-BFGS" (Fit) for mf on data the
// collapsed bound holds (full batch, fully observed, a kernel with psi statistics), "L-BFGS, then
// Adam" (Fit, then Continue on the model's own bound) for any other bound on such data, and
// "Adam" (Continue from the start at the model's LR, the rule on epoch means) for everything else.
func Stages(tr *train.Trainer) string {
	switch {
	case Supported(tr.Model) != nil || tr.Model.Cfg.Batch > 0:
		return "Adam"
	case tr.Model.Cfg.Method == "mf":
		return "L-BFGS"
	}
	return "L-BFGS, then Adam"
}

// ContinueStep is the largest first step size of the Adam stage that Train runs after its L-BFGS
// stage (unless AdamOptions.LR sets one): a fit that starts at an optimum is thrown off it by the
// step sizes that suit a fit from scratch. It is the step of the continuations on record
// (records/converged: Adam from 1e-4 after the converged MF fits). At a tenth of Table 5's LR
// (2e-3), with eta_k adapted, VAIS K 5 on a 270-point oil-flow subset rose from MF's -7.91 nats
// per point to -6.66 within 600 steps and its plateau rule stopped it at -7.26.
const ContinueStep = 1e-4

// Train fits tr's model to its bound's optimum by the protocol of `train --converge` (Stages): on
// data the collapsed bound holds, L-BFGS on the collapsed mean-field bound (Fit, with opt), then,
// for a bound other than mf, Adam on that bound from there (Continue with adam, capped by what is
// left of opt.MaxSeconds; its first step a tenth of the model's LR, at most ContinueStep, unless
// adam.LR is set); on any other data, Adam alone from the model's start at its LR, with
// adam's rule on windows of whole epochs (EpochWindow) unless adam.Rule.Window is set, capped by
// opt.MaxSeconds. res is the last stage's result; start is the L-BFGS stage's when Adam followed
// it (else nil). A stage stopped by ctx's end or a cap ends the fit (res.StoppedBy says which).
// adam.Observe nil: opt.Observe sees the Adam stage too (Progress.Stage tells the stages apart;
// AdamOptions.Following).
// Errors: Fit's and Continue's.
func Train(ctx context.Context, tr *train.Trainer, opt Options, adam AdamOptions) (res, start *Result, err error) {
	if Stages(tr) == "Adam" {
		adam = adam.Following(opt, 0)
		adam.LR = cmp.Or(adam.LR, tr.Model.Cfg.LR) // from scratch: the model's own step size
		adam.Rule.Window = cmp.Or(adam.Rule.Window, EpochWindow(tr.Model.N, tr.Model.Cfg.Batch))
		res, err = Continue(ctx, tr, adam)
		return res, nil, err
	}
	res, err = Fit(ctx, tr, opt)
	if err != nil || tr.Model.Cfg.Method == "mf" || res.StoppedBy == Interrupted {
		return res, nil, err
	}
	start = res
	adam = adam.Following(opt, res.Seconds)
	if adam.LR == 0 {
		adam.LR = min(tr.Model.Cfg.LR/10, ContinueStep)
	}
	res, err = Continue(ctx, tr, adam)
	return res, start, err
}
