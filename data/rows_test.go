package data

import (
	"reflect"
	"testing"
)

// TestRows: the rows asked for, in that order, as copies.
func TestRows(t *testing.T) {
	x := [][]float64{{1, 2}, {3, 4}, {5, 6}}
	got := Rows(x, []int{2, 0, 2})
	if !reflect.DeepEqual(got, [][]float64{{5, 6}, {1, 2}, {5, 6}}) {
		t.Fatalf("Rows = %v", got)
	}
	got[0][0] = 9
	if x[2][0] != 5 {
		t.Error("Rows shares memory with x")
	}
}
