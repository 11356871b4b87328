package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/vars"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// checkpoint is the on-disk format: one gob file with the model's configuration, every context
// variable (model parameters and Adam's moments and step count), the iteration and the curve.
type checkpoint struct {
	// ConfigVersion and ConfigJSON are the configuration (model.MarshalConfig at
	// model.ConfigVersion; model.ParseConfig migrates older versions). Checkpoints written before
	// the configuration was versioned have version 0 and the flat Config instead.
	ConfigVersion int
	ConfigJSON    []byte
	Config        savedConfig // version 0 only
	DataTag       string      // what the model was trained on (Trainer.DataTag)
	Iter          int
	Curve         []float64
	Vars          []savedVar
	// Checksum is the sha256 of the checkpoint's content (sum: every field in a fixed binary
	// form, where gob's bytes depend on the type ids a process assigned and an empty slice decodes
	// as nil): Load and ReadCheckpointInfo refuse a checkpoint whose content does not match it (a
	// flipped bit in a lengthscale decodes fine). Checkpoints written before it existed have none
	// and are read as they are.
	Checksum []byte
}

// sum returns the sha256 of ck's content without Checksum: each field in order, integers and
// float bits little-endian, every string and slice preceded by its length.
func (ck *checkpoint) sum() ([]byte, error) {
	h := sha256.New()
	var b [8]byte
	u := func(v uint64) { binary.LittleEndian.PutUint64(b[:], v); h.Write(b[:]) }
	str := func(s string) { u(uint64(len(s))); h.Write([]byte(s)) }
	floats := func(v []float64) {
		u(uint64(len(v)))
		for _, x := range v {
			u(math.Float64bits(x))
		}
	}
	u(uint64(ck.ConfigVersion))
	str(string(ck.ConfigJSON))
	str(fmt.Sprintf("%#v", ck.Config))
	str(ck.DataTag)
	u(uint64(ck.Iter))
	floats(ck.Curve)
	u(uint64(len(ck.Vars)))
	for _, v := range ck.Vars {
		str(v.Scope)
		str(v.Name)
		u(uint64(len(v.Dims)))
		for _, d := range v.Dims {
			u(uint64(d))
		}
		str(v.DType)
		floats(v.F64)
		u(uint64(len(v.I64)))
		for _, x := range v.I64 {
			u(uint64(x))
		}
	}
	return h.Sum(nil), nil
}

// fileMagic starts every checkpoint file Save writes; the sha256 of the rest of the
// file (the gob payload) follows it, so that a flipped bit anywhere is found before gob reads
// anything: a bit flipped in gob's own type description renames a field, which gob then skips,
// and the content checksum (Checksum, itself such a field) cannot see that. Files without it are
// older checkpoints, read as they were.
var fileMagic = []byte("vaisgplvm checkpoint\n")

// IsCheckpointFile reports whether the regular file at path begins as every checkpoint Save writes
// does: the test for a file that a command may replace with a checkpoint of the same name (it is
// one of its own kind, not a user's file). A missing file is false with no error.
func IsCheckpointFile(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil || !fi.Mode().IsRegular() {
		return false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(fileMagic))
	n, _ := io.ReadFull(f, head)
	return bytes.Equal(head[:n], fileMagic), nil
}

// readCheckpoint decodes the checkpoint at path and checks its checksums. Errors name the file:
// one that cannot be opened, is not a checkpoint, or whose bytes or content do not match.
func readCheckpoint(path string) (*checkpoint, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	payload := raw
	if rest, ok := bytes.CutPrefix(raw, fileMagic); ok {
		if len(rest) < sha256.Size {
			return nil, fmt.Errorf("checkpoint %s is damaged: it ends inside its header; use another checkpoint or train again", path)
		}
		sum := sha256.Sum256(rest[sha256.Size:])
		if !bytes.Equal(sum[:], rest[:sha256.Size]) {
			return nil, fmt.Errorf("checkpoint %s is damaged: its bytes do not match the checksum written with them (a changed or corrupted file); use another checkpoint or train again", path)
		}
		payload = rest[sha256.Size:]
	}
	var ck checkpoint
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&ck); err != nil {
		return nil, fmt.Errorf("checkpoint %s is corrupt or not a vaisgplvm checkpoint: %w", path, err)
	}
	if ck.Checksum != nil {
		sum, err := ck.sum()
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", path, err)
		}
		if !bytes.Equal(sum, ck.Checksum) {
			return nil, fmt.Errorf("checkpoint %s is damaged: its content does not match the checksum written with it (a changed or corrupted file); use another checkpoint or train again", path)
		}
	}
	return &ck, nil
}

// config returns the checkpoint's configuration, from either form.
func (ck *checkpoint) config() (model.Config, error) {
	if ck.ConfigVersion == 0 {
		return ck.Config.config(), nil
	}
	return model.ParseConfig(ck.ConfigVersion, ck.ConfigJSON)
}

// savedConfig is the configuration as checkpoints stored it before they embedded it as versioned
// JSON (version 0): one flat struct with the field names of model.Config's parts (gob matches
// fields by name). Frozen: only read, for older checkpoints (TestLoadCheckpointBeforeConfigSplit).
type savedConfig struct {
	Method       string
	Q            int
	M            int
	K            int
	Samples      int
	Kernel       string
	Whitened     bool
	DiagQ0       bool
	SharedQSqrt  bool
	MeanBias     bool
	Scale0       float64
	Schedule     string
	Eta          float64
	LearnEta     bool
	PaperEta     bool
	AdaptEta     bool
	AcceptTarget float64
	AdaptRate    float64
	PointEta     bool
	StopGrad     bool
	STL          bool
	Precondition bool
	Tamed        bool
	LR           float64
	ClipGrad     float64
	AdamBeta2    float64
	Batch        int
	Seed         uint64
	Noise0       float64
	Jitter       float64
	DType        string
}

// config rebuilds the model.Config of a version-0 checkpoint (fields it lacks take their zero value).
func (s savedConfig) config() model.Config {
	return model.Config{
		ModelConfig: model.ModelConfig{Q: s.Q, M: s.M, Kernel: s.Kernel, Whitened: s.Whitened, DiagQ0: s.DiagQ0,
			SharedQSqrt: s.SharedQSqrt, MeanBias: s.MeanBias, Scale0: s.Scale0, Noise0: s.Noise0, Jitter: s.Jitter, DType: s.DType},
		BoundConfig: model.BoundConfig{Method: s.Method, K: s.K, Samples: s.Samples, Schedule: s.Schedule, Eta: s.Eta,
			LearnEta: s.LearnEta, PaperEta: s.PaperEta, AdaptEta: s.AdaptEta, AcceptTarget: s.AcceptTarget, AdaptRate: s.AdaptRate,
			PointEta: s.PointEta, StopGrad: s.StopGrad, STL: s.STL, Precondition: s.Precondition, Tamed: s.Tamed},
		TrainConfig: model.TrainConfig{LR: s.LR, ClipGrad: s.ClipGrad, AdamBeta2: s.AdamBeta2, Batch: s.Batch, Seed: s.Seed},
	}
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
	if err := t.check(); err != nil {
		return err
	}
	cfg, err := model.MarshalConfig(t.Model.Cfg)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	ck := checkpoint{ConfigVersion: model.ConfigVersion, ConfigJSON: cfg, DataTag: t.DataTag, Iter: t.Iter, Curve: t.Curve}
	vars.Each(t.Ctx, func(v *mlmodel.Variable) {
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
		if err == nil && !vars.Finite(sv.F64...) {
			err = fmt.Errorf("checkpoint: variable %s/%s holds a non-finite value; not saved (the run diverged)", v.Scope(), v.Name())
		}
		ck.Vars = append(ck.Vars, sv)
	})
	if err != nil {
		return err
	}
	if ck.Checksum, err = ck.sum(); err != nil {
		return fmt.Errorf("checkpoint: encoding: %w", err)
	}
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(&ck); err != nil {
		return fmt.Errorf("checkpoint: encoding: %w", err)
	}
	sum := sha256.Sum256(payload.Bytes())
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ckpt-*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name())
	for _, part := range [][]byte{fileMagic, sum[:], payload.Bytes()} {
		if _, err := tmp.Write(part); err != nil {
			tmp.Close()
			return fmt.Errorf("checkpoint: writing: %w", err)
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ReadCheckpointInfo returns the model settings and data tag stored in a checkpoint, so a caller
// can rebuild the model before calling Load.
func ReadCheckpointInfo(path string) (model.Config, string, error) {
	ck, err := readCheckpoint(path)
	if err != nil {
		return model.Config{}, "", err
	}
	cfg, err := ck.config()
	if err != nil {
		return model.Config{}, "", fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return cfg, ck.DataTag, nil
}

// Load restores parameters, optimiser state, iteration and curve from a checkpoint written by
// Save for the same model configuration. Call it before the first Step. A checkpoint of other
// data (its DataTag differs from t.DataTag, both set) is a *DataMismatchError.
func (t *Trainer) Load(path string) error {
	if err := t.check(); err != nil {
		return err
	}
	ck, err := readCheckpoint(path)
	if err != nil {
		return err
	}
	cfg, err := ck.config()
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if !cfg.Equal(t.Model.Cfg) {
		return fmt.Errorf("checkpoint %s was written for other settings (%s): resume with the settings it was trained with",
			path, configDiff(cfg, t.Model.Cfg))
	}
	if ck.DataTag != "" && t.DataTag != "" && ck.DataTag != t.DataTag {
		return &DataMismatchError{Path: path, Saved: ck.DataTag, Now: t.DataTag}
	}
	dtype := t.Model.DType().String()
	ck.migrate(dtype)
	for _, sv := range ck.Vars {
		if !strings.HasPrefix(sv.Scope, "/") || sv.Name == "" {
			return fmt.Errorf("checkpoint %s is corrupt: variable %q in scope %q", path, sv.Name, sv.Scope)
		}
		if sv.DType != dtype && sv.DType != "Int64" {
			return fmt.Errorf("checkpoint %s is corrupt: variable %s/%s is %s in a checkpoint of a %s model; use the checkpoint the run wrote",
				path, sv.Scope, sv.Name, sv.DType, dtype)
		}
	}
	vals, err := ck.values(t.Ctx)
	if err != nil {
		return fmt.Errorf("checkpoint %s is corrupt: %w", path, err)
	}
	if ck.Iter == 0 && len(ck.Vars) == 0 {
		// Saved before the first step: the model starts from its initial values, as without Load.
	} else if err := t.checkComplete(ck.Vars, ck.Iter == 0); err != nil {
		return fmt.Errorf("checkpoint %s is incomplete: %w; use the checkpoint the run wrote", path, err)
	}
	for i, sv := range ck.Vars {
		t.Ctx.Store().Scope(sv.Scope).VariableWithValue(sv.Name, vals[i])
	}
	t.Iter, t.Curve = ck.Iter, ck.Curve
	return nil
}

// migrate renames the variables of checkpoints written with GoMLX v0.26 to their GoMLX v0.28
// names: Adam's step count, an Int64 "global_step" in the optimizer's scope, is now a counter "step"
// in the model's dtype (the same count; Adam's bias correction reads it as a float either way).
func (ck *checkpoint) migrate(dtype string) {
	for i, sv := range ck.Vars {
		if sv.Scope == "/AdamOptimizer" && sv.Name == "global_step" && sv.DType == "Int64" && len(sv.Dims) == 0 && len(sv.I64) == 1 {
			ck.Vars[i] = savedVar{Scope: sv.Scope, Name: "step", DType: dtype, F64: []float64{float64(sv.I64[0])}}
		}
	}
}

// values checks every saved variable (a known dtype, dimensions that match its data and, for a
// variable the context already has, its shape; finite values; an iteration count that matches the
// curve) and returns their tensors, so that a damaged checkpoint changes nothing.
func (ck *checkpoint) values(ctx *mlmodel.Scope) ([]*tensors.Tensor, error) {
	if ck.Iter < 0 || len(ck.Curve) != ck.Iter {
		return nil, fmt.Errorf("iteration %d with a curve of %d values", ck.Iter, len(ck.Curve))
	}
	if !vars.Finite(ck.Curve...) {
		return nil, fmt.Errorf("a non-finite -ELBO in the curve")
	}
	vals := make([]*tensors.Tensor, len(ck.Vars))
	for i, sv := range ck.Vars {
		size := 1
		for _, d := range sv.Dims {
			if d < 0 || (d > 0 && size > math.MaxInt32/d) {
				return nil, fmt.Errorf("variable %s/%s has dimensions %v", sv.Scope, sv.Name, sv.Dims)
			}
			size *= d
		}
		n := len(sv.F64)
		if sv.DType == "Int64" {
			n = len(sv.I64)
		}
		if n != size {
			return nil, fmt.Errorf("variable %s/%s holds %d values for dimensions %v", sv.Scope, sv.Name, n, sv.Dims)
		}
		if !vars.Finite(sv.F64...) {
			return nil, fmt.Errorf("variable %s/%s holds a non-finite value", sv.Scope, sv.Name)
		}
		switch sv.DType {
		case "Int64":
			vals[i] = tensors.FromFlatDataAndDimensions(sv.I64, sv.Dims...)
		case "Float32":
			vals[i] = vars.Convert(tensors.FromFlatDataAndDimensions(sv.F64, sv.Dims...), dtypes.Float32)
		case "Float64":
			vals[i] = tensors.FromFlatDataAndDimensions(sv.F64, sv.Dims...)
		default:
			return nil, fmt.Errorf("variable %s/%s has dtype %q", sv.Scope, sv.Name, sv.DType)
		}
		if old := ctx.Store().Scope(sv.Scope).GetVariable(sv.Name); old != nil && !old.Shape().Equal(vals[i].Shape()) {
			return nil, fmt.Errorf("variable %s/%s has shape %s, the model's is %s", sv.Scope, sv.Name, vals[i].Shape(), old.Shape())
		}
	}
	return vals, nil
}

// configDiff lists the settings in which a and b differ, as "name: a vs b".
func configDiff(a, b model.Config) string {
	var ma, mb map[string]any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	_ = json.Unmarshal(ja, &ma)
	_ = json.Unmarshal(jb, &mb)
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(ma)) {
		if fmt.Sprint(ma[k]) != fmt.Sprint(mb[k]) {
			diffs = append(diffs, fmt.Sprintf("%s: %v vs %v now", k, ma[k], mb[k]))
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: unset vs %v now", k, mb[k]))
		}
	}
	if len(diffs) == 0 {
		return "a field without a name"
	}
	return strings.Join(diffs, ", ")
}

// DataMismatchError is Load's error when the checkpoint's DataTag differs from the trainer's: the
// model was trained on other data. Saved and Now are the two tags, as the caller wrote them.
type DataMismatchError struct {
	Path, Saved, Now string
}

func (e *DataMismatchError) Error() string {
	return fmt.Sprintf("checkpoint %s was trained on other data (checkpoint: %s; this run: %s)", e.Path, e.Saved, e.Now)
}

// checkComplete checks that saved holds every variable the model's training step uses, with its
// shape: a variable missing from a checkpoint would otherwise be created afresh, at its initial
// value, and the model silently used half-trained. With noSteps (a checkpoint of a model fitted
// without Adam, as converge.Fit's) Adam's state may be missing: before a first step it is at its
// initial value.
func (t *Trainer) checkComplete(saved []savedVar, noSteps bool) error {
	need, err := t.requiredVariables()
	if err != nil {
		return err
	}
	have := map[string][]int{}
	for _, sv := range saved {
		have[path.Join(sv.Scope, sv.Name)] = sv.Dims
	}
	for _, name := range slices.Sorted(maps.Keys(need)) {
		dims, ok := have[name]
		switch {
		case !ok && noSteps && optimizerState(name):
		case !ok:
			return fmt.Errorf("it lacks the variable %s (shape %v)", name, need[name])
		case !slices.Equal(dims, need[name]):
			return fmt.Errorf("variable %s has shape %v, the model's is %v", name, dims, need[name])
		}
	}
	return nil
}

// optimizerState reports whether the variable at path (scope/name) is Adam's state: its moments,
// its step count, its learning rate.
func optimizerState(path string) bool {
	return strings.HasPrefix(path, "/AdamOptimizer/") || strings.HasPrefix(path, "/optimizers/") || strings.HasSuffix(path, "/global_step")
}

// requiredVariables returns the dimensions of every variable the training step creates, by scope
// path and name, found by building (not compiling) the step's graph on a scratch context.
func (t *Trainer) requiredVariables() (vs map[string][]int, err error) {
	args, err := buildInputs(inputKey{model: t.Model, seed: t.Model.Cfg.Seed})
	if err != nil {
		return nil, err
	}
	ctx := mlmodel.NewStore().RootScope()
	if err := vars.SetDType(ctx, t.Model.DType()); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("building the model's graph to list its variables: %v", r)
		}
	}()
	g := NewGraph(t.Backend, "variables")
	defer g.Finalize()
	mlmodel.SetStore(g, ctx.Store())
	nodes := make([]*Node, len(args))
	for i, a := range args {
		at, ok := a.(*tensors.Tensor)
		if !ok {
			at = tensors.MustFromAnyValue(a)
		}
		nodes[i] = Parameter(g, fmt.Sprintf("arg%d", i), at.Shape())
	}
	t.stepFn(ctx, nodes)
	vs = map[string][]int{}
	vars.Each(ctx, func(v *mlmodel.Variable) {
		vs[path.Join(v.Scope(), v.Name())] = v.Shape().Dimensions
	})
	return vs, nil
}
