package train

import (
	"fmt"
	"sync"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// execCache keeps the evaluation graphs of a trainer (and of its copies, which share it), so that
// package eval's evaluations and ChainPath compile once per graph and input shape, not once per call.
type execCache struct {
	mu    sync.Mutex
	execs map[execKey]*mlmodel.Exec
}

// execKey names a graph: its purpose, the trainer's model and variable store (pointers: kept alive
// by the map, so never reused for another), and the state of the graph's model copy that the graph
// bakes in (configuration, schedule, step-size rule, printed): a model changed in place, such as a
// schedule set by hand, gets graphs of its own instead of stale ones.
type execKey struct {
	name  string
	model *model.Model
	store *mlmodel.Store
	state string
}

// graphState prints what of m a graph bakes in as constants.
func graphState(m *model.Model) string {
	return fmt.Sprintf("%+v|%+v|%+v", m.Cfg, m.Schedule, m.Step)
}

// CachedExec returns the graph named name for the trainer's model owner, evaluating batches of m
// (a copy of owner with other sizes, BoundGraph's inputs) with fn: built on first use, then reused
// (package eval's evaluations build theirs through it).
func (t *Trainer) CachedExec(name string, owner, m *model.Model, fn func(ctx *mlmodel.Scope, x, mask, idx, eps0, chain *Node) []*Node) (*mlmodel.Exec, error) {
	key := execKey{name: name, model: owner, store: t.Ctx.Store(), state: graphState(m)}
	return t.cached(key, func() (*mlmodel.Exec, error) {
		return mlmodel.NewExec(t.Backend, t.Ctx.Store(), BoundGraph(m, fn))
	})
}

// CachedGraphs returns the number of evaluation graphs the trainer (and its copies sharing its
// cache) has built so far: a second call of the same evaluation adds none.
func (t *Trainer) CachedGraphs() int {
	if t.cache == nil {
		return 0
	}
	t.cache.mu.Lock()
	defer t.cache.mu.Unlock()
	return len(t.cache.execs)
}

// cached returns the graph named key, built by build on first use.
func (t *Trainer) cached(key execKey, build func() (*mlmodel.Exec, error)) (*mlmodel.Exec, error) {
	if t.cache == nil {
		t.cache = &execCache{}
	}
	c := t.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.execs[key]; ok {
		return e, nil
	}
	e, err := build()
	if err != nil {
		return nil, err
	}
	if c.execs == nil {
		c.execs = map[execKey]*mlmodel.Exec{}
	}
	c.execs[key] = e
	return e, nil
}
