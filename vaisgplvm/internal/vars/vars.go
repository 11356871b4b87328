// Package vars creates the model's GoMLX variables in the model's floating-point dtype and
// converts tensors between float64 (the Go side: data, checkpoints, metrics) and that dtype.
//
// The dtype is a context parameter (DTypeParam, inherited by sub-scopes): float64 by default,
// float32 when SetDType(ctx, dtypes.Float32) was called before the first graph is built.
package vars

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// DTypeParam is the context parameter naming the model dtype ("float64" or "float32").
const DTypeParam = "vaisgplvm_dtype"

// SetDType sets the model dtype of ctx (and its sub-scopes): Float64 or Float32.
func SetDType(ctx *mlmodel.Scope, dt dtypes.DType) error {
	switch dt {
	case dtypes.Float64:
		ctx.SetParam(DTypeParam, "float64")
	case dtypes.Float32:
		ctx.SetParam(DTypeParam, "float32")
	default:
		return fmt.Errorf("vars: dtype %s not supported (want float64 or float32)", dt)
	}
	return nil
}

// DType returns the model dtype of ctx (Float64 unless set).
func DType(ctx *mlmodel.Scope) dtypes.DType {
	return DTypeNamed(mlmodel.GetParamOr(ctx, DTypeParam, "float64"))
}

// DTypeNamed returns Float32 for "float32" and Float64 for anything else (configurations
// validate the name).
func DTypeNamed(name string) dtypes.DType {
	if name == "float32" {
		return dtypes.Float32
	}
	return dtypes.Float64
}

// New returns the variable name under ctx, created (if new) from init (a float64, []float64,
// [][]float64 or [][][]float64) in the model dtype.
func New(ctx *mlmodel.Scope, name string, init any) *mlmodel.Variable {
	return ctx.VariableWithValue(name, Convert(tensors.MustFromAnyValue(init), DType(ctx)))
}

// Convert returns t in dtype dt (t itself when it already is). Only float64 and float32.
func Convert(t *tensors.Tensor, dt dtypes.DType) *tensors.Tensor {
	if t.DType() == dt {
		return t
	}
	dims := t.Shape().Dimensions
	switch {
	case t.DType() == dtypes.Float64 && dt == dtypes.Float32:
		src := tensors.MustCopyFlatData[float64](t)
		out := make([]float32, len(src))
		for i, v := range src {
			out[i] = float32(v)
		}
		return tensors.FromFlatDataAndDimensions(out, dims...)
	case t.DType() == dtypes.Float32 && dt == dtypes.Float64:
		src := tensors.MustCopyFlatData[float32](t)
		out := make([]float64, len(src))
		for i, v := range src {
			out[i] = float64(v)
		}
		return tensors.FromFlatDataAndDimensions(out, dims...)
	}
	panic(fmt.Errorf("vars: cannot convert %s to %s", t.DType(), dt))
}

// Matrix returns rows as a tensor [len(rows), len(rows[0])] in dtype dt (float64 or float32),
// written straight into the flat buffer: tensors.FromAnyValue walks a [][]float64 element by
// element through reflection, which for one Frey batch costs more than a whole training step on a
// GPU (docs/benchmarks.md, "Figures behind the code's choices"). An error names the first row whose length differs.
func Matrix(rows [][]float64, dt dtypes.DType) (*tensors.Tensor, error) {
	cols := 0
	if len(rows) > 0 {
		cols = len(rows[0])
	}
	for i, r := range rows {
		if len(r) != cols {
			return nil, fmt.Errorf("vars: row %d has %d values, row 0 has %d", i, len(r), cols)
		}
	}
	switch dt {
	case dtypes.Float64:
		out := make([]float64, 0, len(rows)*cols)
		for _, r := range rows {
			out = append(out, r...)
		}
		return tensors.FromFlatDataAndDimensions(out, len(rows), cols), nil
	case dtypes.Float32:
		out := make([]float32, 0, len(rows)*cols)
		for _, r := range rows {
			for _, v := range r {
				out = append(out, float32(v))
			}
		}
		return tensors.FromFlatDataAndDimensions(out, len(rows), cols), nil
	}
	return nil, fmt.Errorf("vars: dtype %s not supported (want float64 or float32)", dt)
}

// Normal returns a float64 tensor of the given dimensions filled with standard normal draws from
// rng, in row-major order (the training noise eps0 and the chain's eps_k, and the tests' noise).
func Normal(rng *rand.Rand, dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return tensors.FromFlatDataAndDimensions(v, dims...)
}

// InvSoftplus returns y with softplus(y) = x, for x > 0: the unconstrained starting value of a
// positive parameter (kernel variance, lengthscale, noise variance, q0's scale) kept as softplus(y).
func InvSoftplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log(math.Expm1(x))
}

// Flat64 returns the values of a float64 or float32 tensor as float64.
func Flat64(t *tensors.Tensor) []float64 {
	return tensors.MustCopyFlatData[float64](Convert(t, dtypes.Float64))
}

// Rows returns the values of a matrix tensor [R, C] (float64 or float32) as R rows of C float64.
func Rows(t *tensors.Tensor) [][]float64 {
	flat := Flat64(t)
	r, c := t.Shape().Dim(0), t.Shape().Dim(1)
	out := make([][]float64, r)
	for i := range out {
		out[i] = flat[i*c : (i+1)*c]
	}
	return out
}

// Scalar returns the value of a scalar float64 or float32 tensor (NaN for another dtype).
func Scalar(t *tensors.Tensor) float64 {
	switch v := t.Value().(type) {
	case float64:
		return v
	case float32:
		return float64(v)
	}
	return math.NaN()
}

// Finite reports whether every value is neither NaN nor infinite.
func Finite(values ...float64) bool {
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// CopyFrozen copies every variable of src whose scope satisfies keep into dst (same scope and
// name, cloned values) and marks the copies not trainable: the trained part of a model, frozen
// while new parameters (e.g. the latents of new points) are fitted in dst.
func CopyFrozen(src, dst *mlmodel.Scope, keep func(scope string) bool) error {
	for v := range src.Store().IterVariables() {
		scope := v.Scope()
		if !keep(scope) {
			continue
		}
		val, err := v.Value()
		if err == nil {
			val, err = val.LocalClone()
		}
		if err != nil {
			return fmt.Errorf("vars: copying %s/%s: %w", scope, v.Name(), err)
		}
		dst.Store().Scope(scope).VariableWithValue(v.Name(), val).SetTrainable(false)
	}
	return nil
}

// Each calls f for every variable of the store that s belongs to (every scope, not only s's
// subtree), in the store's order.
func Each(s *mlmodel.Scope, f func(v *mlmodel.Variable)) {
	for v := range s.Store().IterVariables() {
		f(v)
	}
}

// Flatten returns the values of vs as float64, one variable after another (row-major within each):
// the vector an optimiser such as L-BFGS works on. Errors: a variable without a value.
func Flatten(vs []*mlmodel.Variable) ([]float64, error) {
	var x []float64
	for _, v := range vs {
		val, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", v.Scope(), v.Name(), err)
		}
		x = append(x, Flat64(val)...)
	}
	return x, nil
}

// Unflatten sets vs from x (Flatten's order), each converted to dt. Errors: a value the variable
// does not accept.
func Unflatten(vs []*mlmodel.Variable, x []float64, dt dtypes.DType) error {
	off := 0
	for _, v := range vs {
		size := v.Shape().Size()
		t := Convert(tensors.FromFlatDataAndDimensions(append([]float64(nil), x[off:off+size]...), v.Shape().Dimensions...), dt)
		if err := v.SetValue(t); err != nil {
			return fmt.Errorf("%s/%s: %w", v.Scope(), v.Name(), err)
		}
		off += size
	}
	return nil
}
