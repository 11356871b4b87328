package experiment

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// WriteMatrix writes rows [N, C] as the CSV output name of dir, under a header line of C names
// (nil: none), atomically. A non-finite value is an error naming the file, row and column: no NaN
// is ever written as a result.
func WriteMatrix(dir *rundir.Dir, name string, header []string, rows [][]float64) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if header != nil {
		_ = w.Write(header)
	}
	for i, r := range rows {
		rec := make([]string, len(r))
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: row %d column %d is %g; not written (the model diverged)", name, i+1, j+1, v)
			}
			rec[j] = strconv.FormatFloat(v, 'g', 10, 64)
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return dir.WriteFile(name, buf.Bytes())
}

// WriteLatents writes latents [N, Q] as the CSV output name of dir under the header h1..hQ and,
// when ds has labels for its N rows, a last column of them (named ds.LabelColumn, else "label";
// each label's name from ds.LabelNames when it has one, else the number), so that the latents can
// be plotted by class without the data file. A non-finite latent is an error, as in WriteMatrix.
func WriteLatents(dir *rundir.Dir, name string, latents [][]float64, ds *data.Dataset) error {
	if len(latents) == 0 || ds == nil || len(ds.Labels) != len(latents) {
		q := 0
		if len(latents) > 0 {
			q = len(latents[0])
		}
		return WriteMatrix(dir, name, LatentHeader(q), latents)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(append(LatentHeader(len(latents[0])), cmp.Or(ds.LabelColumn, "label")))
	for i, r := range latents {
		rec := make([]string, len(r), len(r)+1)
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: row %d column %d is %g; not written (the model diverged)", name, i+1, j+1, v)
			}
			rec[j] = strconv.FormatFloat(v, 'g', 10, 64)
		}
		label := strconv.Itoa(ds.Labels[i])
		if l := ds.Labels[i]; l >= 0 && l < len(ds.LabelNames) {
			label = ds.LabelNames[l]
		}
		_ = w.Write(append(rec, label))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return dir.WriteFile(name, buf.Bytes())
}

// WriteCurve writes curve.csv: the -ELBO per point after each iteration.
func WriteCurve(dir *rundir.Dir, curve []float64) error { return writeCurveAs(dir, "curve.csv", curve) }

// writeCurveAs writes the curve as output name of dir.
func writeCurveAs(dir *rundir.Dir, name string, curve []float64) error {
	var b strings.Builder
	b.WriteString("iteration,neg_elbo_per_point\n")
	for i, v := range curve {
		fmt.Fprintf(&b, "%d,%.10g\n", i+1, v)
	}
	return dir.WriteFile(name, []byte(b.String()))
}

// LatentHeader names q latent dimensions h1..hq (nil for q < 1).
func LatentHeader(q int) []string { return numbered("h", q) }

// ColumnHeader returns the data's column names, or x1..xD when it has none (the image sets).
func ColumnHeader(ds *data.Dataset) []string {
	if c := NamedColumns(ds); c != nil {
		return c
	}
	_, d := ds.Dims()
	return numbered("x", d)
}

// NamedColumns returns the dataset's feature names, nil when it has none (the images).
func NamedColumns(ds *data.Dataset) []string {
	if _, d := ds.Dims(); len(ds.Columns) == d {
		return ds.Columns
	}
	return nil
}

// numbered returns prefix1..prefixN.
func numbered(prefix string, n int) []string {
	if n < 1 {
		return nil
	}
	h := make([]string, n)
	for i := range h {
		h[i] = prefix + strconv.Itoa(i+1)
	}
	return h
}
