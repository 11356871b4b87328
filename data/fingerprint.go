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
