package train

import (
	"context"
	"fmt"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// NewFor returns a Trainer of a new model of cfg on the data x [N, D] with mask [N, D] (1 observed,
// 0 missing; nil: every entry observed), on backend b: model.New and New in one call. Errors:
// model.New's (a bad configuration or data), New's (no backend), each naming cfg's method.
func NewFor(cfg model.Config, x, mask [][]float64, b backends.Backend) (*Trainer, error) {
	m, err := model.New(cfg, x, mask)
	if err != nil {
		return nil, fmt.Errorf("train: %s: %w", cfg.Method, err)
	}
	return New(m, b)
}

// Fit is NewFor followed by Run(ctx, iters, o): a model of cfg trained on x [N, D] (mask [N, D],
// nil: all observed) for iters iterations on b. The trainer is returned with a Run error too (a
// diverged or interrupted training can be inspected, checkpointed or resumed); nil only when
// NewFor fails.
func Fit(ctx context.Context, cfg model.Config, x, mask [][]float64, b backends.Backend, iters int, o RunOptions) (*Trainer, error) {
	t, err := NewFor(cfg, x, mask, b)
	if err != nil {
		return nil, err
	}
	return t, t.Run(ctx, iters, o)
}
