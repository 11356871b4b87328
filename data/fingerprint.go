package data

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
)

// ContentSHA256 returns the hex sha256 of a data matrix x [N, D] and its mask [N, D] (nil: none),
// NaN entries included: the fingerprint the tables' JSON (data_content_sha256), the job store's
// keys and metrics.json record for the data a model was trained on. It hashes the sizes and the
// float64 bits in little-endian order, so it is the same on every machine.
func ContentSHA256(x, mask [][]float64) string {
	h := sha256.New()
	var b [8]byte
	for _, m := range [][][]float64{x, mask} {
		binary.LittleEndian.PutUint64(b[:], uint64(len(m)))
		h.Write(b[:])
		for _, row := range m {
			binary.LittleEndian.PutUint64(b[:], uint64(len(row)))
			h.Write(b[:])
			for _, v := range row {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
				h.Write(b[:])
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// AnnotationSHA256 returns the hex sha256 of what a dataset holds beside its numbers: the labels
// [N] and their class names, the label column's name and the feature columns' names. With
// ContentSHA256 it fingerprints everything a result computed from the dataset can depend on (a
// 1-NN error depends on the labels); the job store's keys use both. Each part is hashed with its
// length first, so that no two different annotations give the same bytes.
func AnnotationSHA256(ds *Dataset) string {
	h := sha256.New()
	var b [8]byte
	put := func(n int) {
		binary.LittleEndian.PutUint64(b[:], uint64(n))
		h.Write(b[:])
	}
	strs := func(ss []string) {
		put(len(ss))
		for _, s := range ss {
			put(len(s))
			h.Write([]byte(s))
		}
	}
	put(len(ds.Labels))
	for _, l := range ds.Labels {
		put(l)
	}
	strs(ds.LabelNames)
	strs([]string{ds.LabelColumn})
	strs(ds.Columns)
	return hex.EncodeToString(h.Sum(nil))
}
