package train

import (
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// checkpoint is the on-disk format: one gob file with every context variable (model parameters
// and Adam's moments and step count), the iteration and the curve.
type checkpoint struct {
	Config  model.Config
	DataTag string // what the model was trained on (Trainer.DataTag)
	Iter    int
	Curve   []float64
	Vars    []savedVar
}

type savedVar struct {
	Scope, Name string
	Dims        []int
	DType       string
	F64         []float64
	I64         []int64
}

// Save writes all parameters and optimiser state to path atomically (temporary file + rename), so
// an interrupted save never destroys the previous checkpoint.
func (t *Trainer) Save(path string) error {
	ck := checkpoint{Config: t.Model.Cfg, DataTag: t.DataTag, Iter: t.Iter, Curve: t.Curve}
	var err error
	t.Ctx.EnumerateVariables(func(v *context.Variable) {
		if err != nil {
			return
		}
		val, e := v.Value()
		if e != nil {
			err = e
			return
		}
		sv := savedVar{Scope: v.Scope(), Name: v.Name(), Dims: val.Shape().Dimensions, DType: val.DType().String()}
		switch val.DType().String() {
		case "Float64":
			sv.F64 = tensors.MustCopyFlatData[float64](val)
		case "Float32":
			for _, x := range tensors.MustCopyFlatData[float32](val) {
				sv.F64 = append(sv.F64, float64(x))
			}
		case "Int64":
			sv.I64 = tensors.MustCopyFlatData[int64](val)
		default:
			err = fmt.Errorf("checkpoint: variable %s/%s has unsupported dtype %s", v.Scope(), v.Name(), val.DType())
		}
		ck.Vars = append(ck.Vars, sv)
	})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ckpt-*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := gob.NewEncoder(tmp).Encode(&ck); err != nil {
		tmp.Close()
		return fmt.Errorf("checkpoint: encoding: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ReadCheckpointInfo returns the model settings and data tag stored in a checkpoint, so a caller
// can rebuild the model before calling Load.
func ReadCheckpointInfo(path string) (model.Config, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return model.Config{}, "", fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	var ck checkpoint
	if err := gob.NewDecoder(f).Decode(&ck); err != nil {
		return model.Config{}, "", fmt.Errorf("checkpoint %s is corrupt or not a vaisgplvm checkpoint: %w", path, err)
	}
	return ck.Config, ck.DataTag, nil
}

// Load restores parameters, optimiser state, iteration and curve from a checkpoint written by
// Save for the same model configuration. Call it before the first Step.
func (t *Trainer) Load(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	var ck checkpoint
	if err := gob.NewDecoder(f).Decode(&ck); err != nil {
		return fmt.Errorf("checkpoint %s is corrupt or not a vaisgplvm checkpoint: %w", path, err)
	}
	if ck.Config != t.Model.Cfg {
		return fmt.Errorf("checkpoint %s was written for settings %+v, not %+v", path, ck.Config, t.Model.Cfg)
	}
	if ck.DataTag != "" && t.DataTag != "" && ck.DataTag != t.DataTag {
		return fmt.Errorf("checkpoint %s was trained on %q, not %q", path, ck.DataTag, t.DataTag)
	}
	for _, sv := range ck.Vars {
		var val *tensors.Tensor
		switch sv.DType {
		case "Int64":
			val = tensors.FromFlatDataAndDimensions(sv.I64, sv.Dims...)
		case "Float32":
			val = vars.Convert(tensors.FromFlatDataAndDimensions(sv.F64, sv.Dims...), dtypes.Float32)
		default:
			val = tensors.FromFlatDataAndDimensions(sv.F64, sv.Dims...)
		}
		t.Ctx.InAbsPath(sv.Scope).VariableWithValue(sv.Name, val)
	}
	t.Iter, t.Curve = ck.Iter, ck.Curve
	return nil
}
