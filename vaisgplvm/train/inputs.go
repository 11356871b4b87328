package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// Inputs draws the inputs of iteration it: batch rows, mask, indices and noise (from PCG(seed, it)).
// The batch is in model.ArrangeBatch's order and mask covers its first rows as that says (all
// ones, ignored, when the model has no mask): idx[i] is the point of row i.
func Inputs(m *model.Model, seed uint64, it int) (x, mask [][]float64, idx []int32, eps0, chain *tensors.Tensor) {
	rng := rand.New(rand.NewPCG(seed, uint64(it)+1))
	b := m.BatchSize()
	idx = make([]int32, b)
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
	x = make([][]float64, b)
	if m.Mask == nil {
		r = b
	}
	mask = make([][]float64, r)
	for i, j := range idx {
		x[i] = m.X[j]
		switch {
		case m.Mask == nil:
			mask[i] = ones(m.D)
		case i < r:
			mask[i] = m.Mask[j] // the rows after r are fully observed
		}
	}
	s0, sc := m.NoiseShapes(b)
	return x, mask, idx, vars.Normal(rng, s0...), vars.Normal(rng, sc...)
}

// args returns the inputs of a bound graph (x, mask, idx, eps0, chain), the batch as Inputs draws
// it, in the model dtype: the rows x [B, D] with their non-finite (missing) entries set to 0 (the
// mask removes them from the bound), the mask rows [R, D], the point indices and the float64 noise.
func (t *Trainer) args(x, mask [][]float64, idx []int32, eps0, chain *tensors.Tensor) ([]any, error) {
	return graphArgs(t.Model.DType(), x, mask, idx, eps0, chain)
}

// graphArgs is Trainer.args for the model dtype dt.
func graphArgs(dt dtypes.DType, x, mask [][]float64, idx []int32, eps0, chain *tensors.Tensor) ([]any, error) {
	xt, err := vars.Matrix(cleanNaN(x), dt)
	if err != nil {
		return nil, fmt.Errorf("batch data: %w", err)
	}
	mt, err := vars.Matrix(mask, dt)
	if err != nil {
		return nil, fmt.Errorf("batch mask: %w", err)
	}
	return []any{xt, mt, idx, vars.Convert(eps0, dt), vars.Convert(chain, dt)}, nil
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
// only waits) the host draws the next batch and noise and builds their tensors: about 1 ms per
// step at Frey's Table 2 sizes (BenchmarkStepInputs). Both ways give the same tensors.
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
	x, mask, idx, eps0, chain := Inputs(key.model, key.seed, key.iter)
	return graphArgs(key.model.DType(), x, mask, idx, eps0, chain)
}

func ones(d int) []float64 {
	o := make([]float64, d)
	for i := range o {
		o[i] = 1
	}
	return o
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
