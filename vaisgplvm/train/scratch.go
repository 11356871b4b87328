package train

import (
	"fmt"

	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
)

// Scratch returns a copy of the trainer whose variables are copies in a new store: a bound
// evaluated on it (a different bound, a hand-set damping) may create or reset its own parameters
// without touching the trainer's. The copy shares the model, backend and data; its graphs are its
// own (the graph cache keys on the store). Errors: a variable that cannot be read.
func (t *Trainer) Scratch() (*Trainer, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	store := mlmodel.NewStore()
	for v := range t.Ctx.Store().IterVariables() {
		if _, err := v.CloneToStore(store); err != nil {
			return nil, fmt.Errorf("train: copying variable %s/%s: %w", v.Scope(), v.Name(), err)
		}
	}
	c := *t
	c.Ctx = store.RootScope()
	if err := vars.SetDType(c.Ctx, t.Model.DType()); err != nil {
		return nil, err
	}
	return &c, nil
}
