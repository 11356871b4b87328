package data

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// Files of the tabular datasets (see ../shared/data/README.md for sources).
var (
	OilflowData = File{Path: "oilflow/oilflow.csv",
		SHA256: "48b289c61eda5e3faba7dc9b5b96ac5fafb06aceadfcaa4a148f3de95b3f1fd0"} // no canonical CSV to download
	OilflowLabels = File{Path: "oilflow/oilflow_labels.csv",
		SHA256: "503dbb11c3d63354abf39006a6591c48efcd13a70ca8b2f0ed71ac7d893893f8"}
	WineRed = File{Path: "wine/winequality-red.csv",
		SHA256: "4a402cf041b025d4566d954c3b9ba8635a3a8a01e039005d97d6a710278cf05e",
		URL:    "https://raw.githubusercontent.com/JakubRoks1/DataScienceTask/63b5e545d8f26bbabff238eb2c7a8af5adec3cf7/winequality-red.csv"}
)

// Oilflow loads the three-phase oil flow data: X [1000, 12] (raw values, -0.26 to 2.17) and
// labels in {0, 1, 2}.
func Oilflow() (*Dataset, error) {
	xp, err := Locate(OilflowData)
	if err != nil {
		return nil, err
	}
	lp, err := Locate(OilflowLabels)
	if err != nil {
		return nil, err
	}
	header, rows, err := ReadCSV(xp, ',', 12)
	if err != nil {
		return nil, err
	}
	_, lrows, err := ReadCSV(lp, ',', 1)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1000 || len(lrows) != 1000 {
		return nil, fmt.Errorf("oilflow: %d data rows and %d labels, want 1000 each", len(rows), len(lrows))
	}
	labels := make([]int, len(lrows))
	for i, r := range lrows {
		labels[i] = int(r[0])
	}
	return &Dataset{Name: "oilflow", X: rows, Labels: labels, Columns: header}, nil
}

// Wine loads the UCI red wine quality data: X [1599, 11] physicochemical features (raw units)
// and the quality score (3..8) as the label; quality is not a feature.
func Wine() (*Dataset, error) {
	p, err := Locate(WineRed)
	if err != nil {
		return nil, err
	}
	header, rows, err := ReadCSV(p, ';', 12)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1599 {
		return nil, fmt.Errorf("wine: %s has %d rows, want 1599", p, len(rows))
	}
	x := make([][]float64, len(rows))
	labels := make([]int, len(rows))
	for i, r := range rows {
		x[i] = r[:11]
		labels[i] = int(r[11])
	}
	return &Dataset{Name: "wine", X: x, Labels: labels, Columns: header[:11]}, nil
}

// Load returns the named dataset: "oilflow" or "wine".
func Load(name string) (*Dataset, error) {
	switch name {
	case "oilflow":
		return Oilflow()
	case "wine":
		return Wine()
	}
	return nil, fmt.Errorf("unknown dataset %q (want oilflow or wine)", name)
}

// ReadCSV reads a CSV file with one header line and cols numeric columns per row. Errors name the
// file, line and column of the first bad field (a truncated or corrupt file).
func ReadCSV(path string, sep rune, cols int) (header []string, rows [][]float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = sep
	r.FieldsPerRecord = cols
	header, err = r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading header: %w", path, err)
	}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w (file truncated or corrupt?)", path, err)
		}
		row := make([]float64, cols)
		for j, s := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("%s line %d column %d: %q is not a finite number", path, line, j+1, s)
			}
			row[j] = v
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s: no data rows", path)
	}
	return header, rows, nil
}

// Standardize returns a copy of x with every column shifted to mean 0 and scaled to unit sample
// variance, plus the means and standard deviations used (columns with zero variance, or fewer than
// two values, keep scale 1). NaN entries (missing values) are left out of the means and variances
// and stay NaN. Training on standardised data changes the scale of every reported metric; the
// paper's Table 1 most likely used raw oilflow values (see README).
func Standardize(x [][]float64) (out [][]float64, mean, std []float64) {
	n, d := len(x), len(x[0])
	mean, std = make([]float64, d), make([]float64, d)
	for j := 0; j < d; j++ {
		var col []float64
		for i := 0; i < n; i++ {
			if !math.IsNaN(x[i][j]) {
				col = append(col, x[i][j])
			}
		}
		if len(col) > 0 {
			mean[j] = stat.Mean(col, nil)
		}
		if len(col) > 1 {
			std[j] = stat.StdDev(col, nil)
		}
		if std[j] == 0 {
			std[j] = 1
		}
	}
	out = make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, d)
		for j := range out[i] {
			out[i][j] = (x[i][j] - mean[j]) / std[j]
		}
	}
	return out, mean, std
}
