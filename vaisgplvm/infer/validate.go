package infer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/eval"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/latent"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// ExactValidation tunes ValidatedExact.
type ExactValidation struct {
	Hide    float64 // share of each validation row's entries hidden, in (0, 1) (Table 2: 0.75; Table 5: 0.5)
	Share   float64 // share of the conditioning rows held out for validation (0 = 0.1), at least 5 rows
	FitRows int     // the refit's rows (0 = eval.DefaultExactFitRows)
	Iters   int     // Adam iterations fitting the validation rows' latents (0 = 300)
	Seed    uint64  // draws the validation rows and their hidden entries (0 = 1)
}

// ValidatedExact returns the exact GP conditional of tr's model on the fully observed rows x
// [C, D] at their latents h [C, Q], for imputing rows that lack a share o.Hide of their entries:
// the kernel variance, lengthscale factor and noise refitted by the exact marginal likelihood
// (eval.ExactOptions.Refit), and the predictive noise variance chosen on a validation share of
// the rows, damaged that way, whose latents are fitted from their observed entries alone with
// Latents (started from the nearest remaining row's latent, not their own), predicted from the
// remaining rows (eval.ValidateExactNoise). The returned conditional uses every row.
// The validation rows were training rows, so the global parameters saw them whole: the chosen
// noise is, if anything, small. Errors: a share outside its range, fewer than 10 rows, and those
// of NewExact, Latents (ctx stops its fit) and ValidateExactNoise.
func ValidatedExact(ctx context.Context, tr *train.Trainer, x, h [][]float64, o ExactValidation) (*eval.Exact, error) {
	if o.Share == 0 {
		o.Share = 0.1
	}
	if o.Iters == 0 {
		o.Iters = 300
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if !(o.Hide > 0 && o.Hide < 1) || !(o.Share > 0 && o.Share < 0.5) || o.Iters < 0 {
		return nil, fmt.Errorf("infer: validated exact conditional: hide share %g, validation share %g, %d iterations: want the hide share in (0, 1), the validation share in (0, 0.5) and iterations >= 0",
			o.Hide, o.Share, o.Iters)
	}
	if len(x) < 10 || len(x) != len(h) {
		return nil, fmt.Errorf("infer: validated exact conditional: %d rows and %d latents, want the same number >= 10", len(x), len(h))
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0xe7ac7))
	perm := rng.Perm(len(x))
	nv := max(5, int(o.Share*float64(len(x))))
	xr, hr := data.Rows(x, perm[nv:]), data.Rows(h, perm[nv:])
	fit, err := eval.NewExact(tr, xr, hr, eval.ExactOptions{Refit: true, FitRows: o.FitRows, Seed: o.Seed})
	if err != nil {
		return nil, err
	}
	truth := data.Rows(x, perm[:nv])
	damaged, mask := hide(truth, o.Hide, rng)
	init, err := latent.Nearest(xr, nil, hr, damaged, mask)
	if err != nil {
		return nil, fmt.Errorf("infer: validated exact conditional: %w", err)
	}
	res, err := Latents(ctx, tr, damaged, mask, Options{Iters: o.Iters, Seed: o.Seed, Init: init})
	if err != nil {
		return nil, err
	}
	if _, err := eval.ValidateExactNoise(res.fit, truth, res.eval, fit); err != nil {
		return nil, err
	}
	return eval.NewExact(tr, x, h, eval.ExactOptions{From: fit})
}

// ValidatedComplete is ValidatedExact on the fully observed rows of tr's data at their
// reconstruction latents ev.Latent [N, Q]: the conditional that imputes tr's own damaged rows.
// Errors: those of ValidatedExact.
func ValidatedComplete(ctx context.Context, tr *train.Trainer, ev *eval.Evaluation, o ExactValidation) (*eval.Exact, error) {
	x, h, err := eval.CompleteRows(tr, ev)
	if err != nil {
		return nil, err
	}
	return ValidatedExact(ctx, tr, x, h, o)
}

// ScoreExact scores the entries tr's mask hides against truth [N, D] (eval.ScoreMissingExact,
// ev's particles) under the exact GP conditional on tr's complete rows: at the trained
// hyperparameters (trained) and refitted with a validated predictive noise (validated;
// ValidatedComplete with o). When only the validation fails, the trained scores come back with
// its error.
func ScoreExact(ctx context.Context, tr *train.Trainer, truth [][]float64, ev *eval.Evaluation, o ExactValidation) (trained, validated *eval.MissingScores, err error) {
	ex, err := eval.CompleteExact(tr, ev, eval.ExactOptions{})
	if err != nil {
		return nil, nil, err
	}
	if trained, err = eval.ScoreMissingExact(tr, truth, ev, ex); err != nil {
		return nil, nil, err
	}
	val, err := ValidatedComplete(ctx, tr, ev, o)
	if err != nil {
		return trained, nil, err
	}
	validated, err = eval.ScoreMissingExact(tr, truth, ev, val)
	return trained, validated, err
}

// hide returns copies of rows with round(share * D) entries of each hidden (NaN, mask 0), at
// least one hidden and one observed.
func hide(rows [][]float64, share float64, rng *rand.Rand) (x, mask [][]float64) {
	d := len(rows[0])
	k := min(max(1, int(share*float64(d)+0.5)), d-1)
	x, mask = make([][]float64, len(rows)), make([][]float64, len(rows))
	for i, r := range rows {
		x[i], mask[i] = append([]float64(nil), r...), make([]float64, d)
		for j := range mask[i] {
			mask[i][j] = 1
		}
		for _, j := range rng.Perm(d)[:k] {
			x[i][j], mask[i][j] = math.NaN(), 0
		}
	}
	return x, mask
}
