package data_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
)

// TestRegistry: the paper's four datasets come first with Table 4's settings; a dataset
// registered from another package loads through Load and Lookup, is listed by Names, refuses a
// second registration, and goes with Unregister; an unknown name's error lists the registered ones.
func TestRegistry(t *testing.T) {
	if got := data.Names(); !slices.Equal(got[:4], []string{"oilflow", "wine", "frey", "mnist"}) {
		t.Errorf("Names() = %v: want the paper's four first", got)
	}
	for name, q := range map[string]int{"oilflow": 10, "wine": 9, "frey": 20, "mnist": 5} {
		b, err := data.Lookup(name)
		if err != nil || b.Q != q || b.Image != (name == "frey" || name == "mnist") {
			t.Errorf("Lookup(%s) = %+v, %v: want Q %d", name, b, err, q)
		}
	}
	toy := func(data.PixelScale) (*data.Dataset, error) {
		return &data.Dataset{Name: "toy", X: [][]float64{{1, 2}, {3, 4}, {5, 7}}}, nil
	}
	if err := data.Register(data.Builtin{Name: "toy", Q: 1}, toy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { data.Unregister("toy") })
	if err := data.Register(data.Builtin{Name: "toy"}, toy); err == nil {
		t.Error("second registration of toy: want an error")
	}
	ds, err := data.Load("toy")
	if err != nil || len(ds.X) != 3 || !slices.Contains(data.Names(), "toy") {
		t.Errorf("Load(toy) = %v, %v; Names %v", ds, err, data.Names())
	}
	data.Unregister("toy")
	if _, err := data.Load("toy"); err == nil || !strings.Contains(err.Error(), "want one of oilflow, wine, frey, mnist") {
		t.Errorf("after Unregister: %v, want an error listing the datasets", err)
	}
}
