package model

import (
	"reflect"
	"slices"
	"testing"
)

// TestConfigDiff: Diff names exactly the fields that differ, in field order, and agrees with
// Equal.
func TestConfigDiff(t *testing.T) {
	a := DefaultConfig("vais", 1)
	if d := a.Diff(a); len(d) != 0 || !a.Equal(a) {
		t.Fatalf("a configuration against itself: %v", d)
	}
	b := a
	b.K, b.LR, b.BoundSettings = a.K+1, a.LR*2, map[string]float64{"damping": 0.5}
	d := b.Diff(a)
	if len(d) != 3 || d[0] != "LR" && d[0] != "K" || !slices.Contains(d, "BoundSettings") || b.Equal(a) {
		t.Errorf("Diff = %v; want K, LR and BoundSettings", d)
	}
	for i := 1; i < len(d); i++ {
		ai := slices.IndexFunc(reflect.VisibleFields(reflect.TypeFor[Config]()), func(f reflect.StructField) bool { return f.Name == d[i-1] })
		bi := slices.IndexFunc(reflect.VisibleFields(reflect.TypeFor[Config]()), func(f reflect.StructField) bool { return f.Name == d[i] })
		if ai >= bi {
			t.Errorf("Diff = %v: not in field order", d)
		}
	}
}
