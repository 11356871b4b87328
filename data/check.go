package data

import (
	"fmt"
	"math"
)

// CheckMatrix checks data x [N, D] and its mask [N, D] (nil: every entry observed) before a
// model or baseline uses them, and returns an error naming the first problem: no rows or no
// columns, a row of another length, a mask of another shape or with an entry other than 0
// (missing) and 1 (observed), or an observed entry that is NaN or ±Inf. Missing entries may hold
// anything.
func CheckMatrix(x, mask [][]float64) error {
	if err := checkRect("data", x); err != nil {
		return err
	}
	if mask != nil {
		if len(mask) != len(x) {
			return fmt.Errorf("mask has %d rows, the data %d: want one mask row per data row", len(mask), len(x))
		}
		for i, r := range mask {
			if len(r) != len(x[i]) {
				return fmt.Errorf("mask row %d has %d entries, the data %d columns", i+1, len(r), len(x[i]))
			}
			for j, v := range r {
				if v != 0 && v != 1 {
					return fmt.Errorf("mask[%d][%d] = %g: want 0 (missing) or 1 (observed)", i, j, v)
				}
			}
		}
	}
	for i, r := range x {
		for j, v := range r {
			if (mask == nil || mask[i][j] == 1) && (math.IsNaN(v) || math.IsInf(v, 0)) {
				return fmt.Errorf("data[%d][%d] = %g is not finite: mark it missing (mask 0) or remove it", i, j, v)
			}
		}
	}
	return nil
}

// checkRect checks that x (named name in errors) has at least one row, at least one column and
// rows of equal length.
func checkRect(name string, x [][]float64) error {
	if len(x) == 0 {
		return fmt.Errorf("%s has no rows", name)
	}
	if len(x[0]) == 0 {
		return fmt.Errorf("%s has no columns", name)
	}
	for i, r := range x {
		if len(r) != len(x[0]) {
			return fmt.Errorf("%s row %d has %d values, row 1 has %d: want a rectangular matrix", name, i+1, len(r), len(x[0]))
		}
	}
	return nil
}
