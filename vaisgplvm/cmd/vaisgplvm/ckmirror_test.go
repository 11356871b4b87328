package main

// ckMirror is the checkpoint's on-disk layout (train/checkpoint.go), mirrored field by field so
// that a test can damage a checkpoint the way a hostile or broken file would (gob matches fields by
// name). It leaves out the Checksum field: decoding drops it, so a rewritten file reads as a
// checkpoint written before checkpoints carried one (which are loaded as they are).
type ckMirror struct {
	ConfigVersion int
	ConfigJSON    []byte
	DataTag       string
	Iter          int
	Curve         []float64
	Vars          []varMirror
}

type varMirror struct {
	Scope, Name string
	Dims        []int
	DType       string
	F64         []float64
	I64         []int64
}
