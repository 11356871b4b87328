package data

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// ReadPoints reads new points for a model trained on data with feature columns columns (header
// names, in the model's order) whose labels came from the column label ("" none): the file's
// columns are matched to the training columns by header name, in any order. A training column
// absent from the file is entirely missing (Mask 0: to be predicted); the label column, when
// present, is read and its labels dropped; a column of any other name, or a name given twice, is
// an error naming it and the training columns. Without names (columns nil, e.g. images) the
// file's d feature columns are taken in order. The returned Dataset has the training columns, in
// the training order.
func ReadPoints(path string, columns []string, label string, d int) (*Dataset, error) {
	header, err := readHeader(path)
	if err != nil {
		return nil, err
	}
	opt := TableOptions{AllowUnobservedColumns: true}
	if label != "" && slices.Contains(header, label) {
		opt.LabelColumn = label
	}
	if len(columns) == 0 {
		opt.Columns = d
		ds, err := ReadTable(path, opt)
		if err != nil {
			return nil, err
		}
		ds.Labels, ds.LabelNames = nil, nil
		return ds, nil
	}
	for j, name := range header {
		switch {
		case name == opt.LabelColumn && opt.LabelColumn != "":
		case !slices.Contains(columns, name):
			return nil, fmt.Errorf("%s: column %q is not one of the training columns (%s); rename or drop it",
				path, name, strings.Join(columns, ", "))
		case slices.Index(header, name) != j:
			return nil, fmt.Errorf("%s: column %q appears twice", path, name)
		}
	}
	ds, err := ReadTable(path, opt)
	if err != nil {
		return nil, err
	}
	at := make([]int, len(ds.Columns)) // file feature column -> training column
	for j, name := range ds.Columns {
		at[j] = slices.Index(columns, name)
	}
	x, mask := make([][]float64, len(ds.X)), make([][]float64, len(ds.X))
	for i := range ds.X {
		x[i], mask[i] = make([]float64, len(columns)), make([]float64, len(columns))
		for k := range x[i] {
			x[i][k] = math.NaN()
		}
		for j, k := range at {
			x[i][k], mask[i][k] = ds.X[i][j], 1
			if ds.Mask != nil {
				mask[i][k] = ds.Mask[i][j]
			}
		}
	}
	ds.X, ds.Mask, ds.Columns, ds.Labels, ds.LabelNames = x, mask, slices.Clone(columns), nil, nil
	if ds.Missing() == 0 {
		ds.Mask = nil
	}
	return ds, nil
}

// readHeader returns the header line's fields of the delimited file at path.
func readHeader(path string) ([]string, error) {
	f, _, header, err := openTable(path, 0)
	if err != nil {
		return nil, err
	}
	f.Close()
	return header, nil
}
