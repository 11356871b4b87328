package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"os"
	"testing"
)

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

// readCkMirror decodes the checkpoint at path into a ckMirror, past the header line and sha256
// that checkpoints carry ahead of their gob payload (train/checkpoint.go, fileMagic). Written back
// with gob alone, the file reads as an older checkpoint (no header, no checksum).
func readCkMirror(t *testing.T, path string) ckMirror {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rest, ok := bytes.CutPrefix(raw, []byte("vaisgplvm checkpoint\n")); ok && len(rest) >= sha256.Size {
		raw = rest[sha256.Size:]
	}
	var ck ckMirror
	if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&ck); err != nil {
		t.Fatal(err)
	}
	return ck
}
