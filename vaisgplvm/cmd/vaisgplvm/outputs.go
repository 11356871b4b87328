package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/rundir"
)

// writeMatrix writes rows [N, C] as CSV output name of dir, under a header line of C names
// (nil: none), atomically. A non-finite value is an error naming the file, row and column: no
// NaN is ever written as a result.
func writeMatrix(dir *rundir.Dir, name string, header []string, rows [][]float64) error {
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

// latentHeader names q latent dimensions h1..hq.
func latentHeader(q int) []string {
	h := make([]string, q)
	for i := range h {
		h[i] = "h" + strconv.Itoa(i+1)
	}
	return h
}

// columnHeader returns the data's column names, or x1..xD when it has none (the image sets).
func columnHeader(ds *data.Dataset) []string {
	if c := namedColumns(ds); c != nil {
		return c
	}
	_, d := ds.Dims()
	h := make([]string, d)
	for i := range h {
		h[i] = "x" + strconv.Itoa(i+1)
	}
	return h
}

// openRunDir opens the output directory out for a run writing names (package rundir: refused when
// it holds files the run cannot prove it may replace, or when an input is among the outputs);
// every refusal is a usage error.
func openRunDir(out string, names []string, opt rundir.Options) (*rundir.Dir, error) {
	d, err := rundir.Open(out, names, opt)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return d, nil
}
