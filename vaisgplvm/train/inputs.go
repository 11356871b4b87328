package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// Batch is one batch of a model as decided on the host, once: which points in which order, their
// rows, which rows carry a mask, and the noise. A graph built by BoundGraph takes exactly what it
// holds: no mask input when the model has no missing entries, no chain noise when the bound runs no
// chain.
type Batch struct {
	X [][]float64 // rows [B, D], missing entries NaN (zeroed in Args: the mask removes them)
	// Mask is the observation mask [R, D] (1 observed) of the first R rows, the others fully
	// observed (model.ArrangeBatch puts the rows with missing entries first); nil when the model has
	// no mask.
	Mask  [][]float64
	Idx   []int32         // the point of each row [B]
	Eps0  *tensors.Tensor // q0 noise [S, B, Q] (model.NoiseShapes), float64
	Chain *tensors.Tensor // chain noise [steps, S, B, Q], float64; nil unless the bound is annealed
}

// Inputs draws the batch of iteration it from PCG(seed, it): mini-batch indices (all points in order
// for a full batch) arranged by model.ArrangeBatch, then the noise. A nil model has the empty Batch.
func Inputs(m *model.Model, seed uint64, it int) Batch {
	if m == nil {
		return Batch{}
	}
	rng := rand.New(rand.NewPCG(seed, uint64(it)+1))
	b := m.BatchSize()
	idx := make([]int32, b)
	if b == m.N {
		for i := range idx {
			idx[i] = int32(i)
		}
	} else {
		for i, j := range rng.Perm(m.N)[:b] {
			idx[i] = int32(j)
		}
	}
	idx, r := m.ArrangeBatch(idx)
	return RowsBatch(m, idx, r, rng)
}

// RowsBatch returns the batch of points idx whose first r rows carry their mask (when the model
// has one), with noise drawn from rng: eps0, then the chain's (package eval's batches of chosen
// points).
func RowsBatch(m *model.Model, idx []int32, r int, rng *rand.Rand) Batch {
	bt := Batch{X: make([][]float64, len(idx)), Idx: idx}
	if m.HasMask() {
		bt.Mask = make([][]float64, r)
	}
	for i, j := range idx {
		bt.X[i] = m.X[j]
		if i < len(bt.Mask) {
			bt.Mask[i] = m.Mask[j]
		}
	}
	s0, sc := m.NoiseShapes(len(idx))
	bt.Eps0 = vars.Normal(rng, s0...)
	if m.Method.Annealed() {
		bt.Chain = vars.Normal(rng, sc...)
	}
	return bt
}

// Args returns the graph arguments of the batch in the model dtype dt, in BoundGraph's order: x
// [B, D] (missing entries 0), the mask [R, D] when there is one, idx, eps0 and the chain noise
// when there is one.
func (bt Batch) Args(dt dtypes.DType) ([]any, error) {
	xt, err := vars.Matrix(cleanNaN(bt.X), dt)
	if err != nil {
		return nil, fmt.Errorf("batch data: %w", err)
	}
	args := []any{xt}
	if bt.Mask != nil {
		mt, err := vars.Matrix(bt.Mask, dt)
		if err != nil {
			return nil, fmt.Errorf("batch mask: %w", err)
		}
		args = append(args, mt)
	}
	args = append(args, bt.Idx, vars.Convert(bt.Eps0, dt))
	if bt.Chain != nil {
		args = append(args, vars.Convert(bt.Chain, dt))
	}
	return args, nil
}

// BoundGraph adapts fn to the graph arguments of a Batch of m (Batch.Args): fn sees mask nil when
// m has no mask and chain nil when m's bound is not annealed, as model.Model.Bound takes them.
func BoundGraph(m *model.Model, fn func(ctx *mlmodel.Scope, x, mask, idx, eps0, chain *Node) []*Node) func(*mlmodel.Scope, []*Node) []*Node {
	hasMask, hasChain := m.HasMask(), m.Method.Annealed()
	return func(ctx *mlmodel.Scope, in []*Node) []*Node {
		x, in := in[0], in[1:]
		var mask, chain *Node
		if hasMask {
			mask, in = in[0], in[1:]
		}
		idx, eps0 := in[0], in[1]
		if hasChain {
			chain = in[2]
		}
		return fn(ctx, x, mask, idx, eps0, chain)
	}
}

// inputKey names the inputs of one training iteration: they depend only on the model (its data
// and configuration), the seed and the iteration.
type inputKey struct {
	model *model.Model
	seed  uint64
	iter  int
}

// pending is the graph inputs of one iteration being prepared on another goroutine; args and err
// are set when done is closed.
type pending struct {
	key  inputKey
	done chan struct{}
	args []any
	err  error
}

// stepInputs returns the graph inputs of training iteration it. They are the ones the previous
// Step prepared in the background when that was for this model, seed and iteration (waiting for
// them if they are not ready), else built now. Unless NoPrefetch is set, it then starts preparing
// iteration it+1's on another goroutine, so that while the graph runs (on a GPU, while the host
// only waits) the host draws the next batch and noise and builds their tensors
// (BenchmarkStepInputs times that part). Both ways give the same tensors.
func (t *Trainer) stepInputs(it int) ([]any, error) {
	key := inputKey{model: t.Model, seed: t.Model.Cfg.Seed, iter: it}
	var args []any
	var err error
	if p := t.ahead; p != nil && p.key == key {
		<-p.done
		args, err = p.args, p.err
	} else {
		args, err = buildInputs(key)
	}
	t.ahead = nil
	if !t.NoPrefetch {
		t.ahead = prefetch(inputKey{model: key.model, seed: key.seed, iter: it + 1})
	}
	return args, err
}

// prefetch starts building the inputs named by key on another goroutine.
func prefetch(key inputKey) *pending {
	p := &pending{key: key, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.args, p.err = buildInputs(key)
	}()
	return p
}

// buildInputs draws the inputs named by key (Inputs) and converts them to graph arguments.
func buildInputs(key inputKey) ([]any, error) {
	return Inputs(key.model, key.seed, key.iter).Args(key.model.DType())
}

// cleanNaN replaces non-finite (missing) entries by 0; they are masked out of the bound.
func cleanNaN(x [][]float64) [][]float64 {
	out := x
	for i, r := range x {
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				if &out[0] == &x[0] {
					out = make([][]float64, len(x))
					for k := range x {
						out[k] = append([]float64(nil), x[k]...)
					}
				}
				out[i][j] = 0
			}
		}
	}
	return out
}
