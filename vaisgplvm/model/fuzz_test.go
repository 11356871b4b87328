package model

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzNew: any data, mask and sizes a caller can pass to New (ragged or empty rows, masks of
// another shape or with values other than 0 and 1, NaN and ±Inf entries, values near the float64
// limits, Q and M of any size) give either an error or a model of the data's size; never a panic
// or a hang. The bytes are decoded as float64 values: the data first, then the mask.
func FuzzNew(f *testing.F) {
	enc := func(v ...float64) []byte {
		b := make([]byte, 0, 8*len(v))
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	f.Add(enc(1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 0, 1, 1, 1, 1, 0, 1, 1), uint8(3), uint8(1), uint8(2), true)
	f.Add(enc(1, 2, 3, 4, 5, 6, 7, 8, 9), uint8(3), uint8(2), uint8(3), false)
	f.Add(enc(1.7e308, -1.7e308, 3, 4, math.NaN(), 6, 0.5, 1, 1, 1, 1, 1), uint8(2), uint8(1), uint8(2), true)
	f.Add(enc(math.Inf(1), 2), uint8(1), uint8(1), uint8(1), false)
	f.Add([]byte{}, uint8(0), uint8(0), uint8(0), true)
	f.Fuzz(func(t *testing.T, in []byte, width, q, m uint8, withMask bool) {
		w := 1 + int(width%5)
		var vals []float64
		for i := 0; i+8 <= len(in) && len(vals) < 200; i += 8 {
			vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(in[i:])))
		}
		half := len(vals)
		if withMask {
			half = len(vals) / 2
		}
		rows := func(v []float64) [][]float64 {
			var x [][]float64
			for len(v) > 0 {
				n := min(w, len(v))
				x, v = append(x, v[:n]), v[n:]
			}
			return x
		}
		x := rows(vals[:half])
		var mask [][]float64
		if withMask {
			mask = rows(vals[half:])
		}
		cfg := DefaultConfig("mf", int(q%4))
		cfg.M = int(m % 8)
		mod, err := New(cfg, x, mask)
		if err != nil {
			return
		}
		if mod.N != len(x) || mod.D != len(x[0]) {
			t.Fatalf("model of %d x %d for data %d x %d", mod.N, mod.D, len(x), len(x[0]))
		}
	})
}
