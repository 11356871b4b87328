package main

// ckMirror is the checkpoint's on-disk layout (train/checkpoint.go), mirrored field by field so
// that a test can damage a checkpoint the way a hostile or broken file would (gob matches fields by
// name). TestCheckpointMirror fails when the format changes under it.
type ckMirror struct {
	Config  cfgMirror
	DataTag string
	Iter    int
	Curve   []float64
	Vars    []varMirror
}

type cfgMirror struct {
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

type varMirror struct {
	Scope, Name string
	Dims        []int
	DType       string
	F64         []float64
	I64         []int64
}
