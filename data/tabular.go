package data

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// Files of the tabular datasets (sources, licences and formats: data/README.md).
var (
	// OilflowData is the 1000-point training split of the three-phase oil flow data; it has no
	// canonical CSV to download (the source is whitespace-separated text), so it has no URL.
	OilflowData = File{Path: "oilflow/oilflow.csv",
		SHA256:   "48b289c61eda5e3faba7dc9b5b96ac5fafb06aceadfcaa4a148f3de95b3f1fd0",
		Embedded: "oilflow/oilflow.csv.gz", EmbeddedSHA256: "e06e4516e95a166c8a1b834b0a30221ea21204185db8920f9d4916ecc1c7bc3e"}
	OilflowLabels = File{Path: "oilflow/oilflow_labels.csv",
		SHA256:   "503dbb11c3d63354abf39006a6591c48efcd13a70ca8b2f0ed71ac7d893893f8",
		Embedded: "oilflow/oilflow_labels.csv.gz", EmbeddedSHA256: "a16bcd31623d6a43900163b57312fdd5f749e5cb899c3b86f802a63765cce2e9"}
	// WineRed is the UCI Wine Quality red file, byte for byte.
	WineRed = File{Path: "wine/winequality-red.csv",
		SHA256:   "4a402cf041b025d4566d954c3b9ba8635a3a8a01e039005d97d6a710278cf05e",
		URL:      "https://archive.ics.uci.edu/ml/machine-learning-databases/wine-quality/winequality-red.csv",
		Embedded: "wine/winequality-red.csv.gz", EmbeddedSHA256: "bb4d056e7e6f9614f956578f99a192fa07c673b656154f4c1dd3fb0f30ba899f"}
	// WineWhiteData is the UCI Wine Quality white file (264426 bytes). It is not embedded: Read
	// downloads it into the user cache on first use.
	WineWhiteData = File{Path: "wine/winequality-white.csv",
		SHA256: "76c3f809815c17c07212622f776311faeb31e87610d52c26d87d6e361b169836",
		URL:    "https://archive.ics.uci.edu/ml/machine-learning-databases/wine-quality/winequality-white.csv"}
)

// Oilflow loads the three-phase oil flow data: X [1000, 12] (raw values, -0.26 to 2.17) and
// labels in {0, 1, 2}.
func Oilflow() (*Dataset, error) {
	header, rows, err := readCSVFile(OilflowData, ',', 12)
	if err != nil {
		return nil, err
	}
	_, lrows, err := readCSVFile(OilflowLabels, ',', 1)
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
	return &Dataset{Name: "oilflow", X: rows, Labels: labels, Columns: header, LabelNames: OilflowClasses}, nil
}

// Wine loads the UCI red wine quality data: X [1599, 11] physicochemical features (raw units)
// and the quality score (3..8) as the label; quality is not a feature.
func Wine() (*Dataset, error) { return wineQuality(WineRed, "wine", 1599) }

// WineWhite loads the UCI white wine quality data: X [4898, 11] physicochemical features (raw
// units) and the quality score (3..9) as the label. The file is downloaded into the user cache on
// first use (see Read); set $VAISGPLVM_DATA to a directory holding wine/winequality-white.csv to
// work offline.
func WineWhite() (*Dataset, error) { return wineQuality(WineWhiteData, "wine-white", 4898) }

// wineQuality parses a UCI Wine Quality file of n rows: 11 features and the quality label.
func wineQuality(f File, name string, n int) (*Dataset, error) {
	header, rows, err := readCSVFile(f, ';', 12)
	if err != nil {
		return nil, err
	}
	if len(rows) != n {
		return nil, fmt.Errorf("%s: %s has %d rows, want %d", name, f.Path, len(rows), n)
	}
	x := make([][]float64, len(rows))
	labels := make([]int, len(rows))
	for i, r := range rows {
		x[i] = r[:11]
		labels[i] = int(r[11])
	}
	return &Dataset{Name: name, X: x, Labels: labels, Columns: header[:11], LabelColumn: header[11], LabelNames: wineClasses()}, nil
}

// Load returns the named built-in dataset (Names; Lookup): "oilflow", "wine" (red), "frey" and
// "mnist" (its 1s and 7s) with pixels on [0, 1], or "wine-white" (downloaded on first use).
func Load(name string) (*Dataset, error) {
	b, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return b.Load(Unit)
}

// readCSVFile reads the verified content of f as a CSV file (readCSV).
func readCSVFile(f File, sep rune, cols int) (header []string, rows [][]float64, err error) {
	buf, err := Read(f)
	if err != nil {
		return nil, nil, err
	}
	return readCSV(f.Path, bytes.NewReader(buf), sep, cols)
}

// ReadCSV reads a CSV file with one header line and cols numeric columns per row. Errors name the
// file, line and column of the first bad field (a truncated or corrupt file).
func ReadCSV(path string, sep rune, cols int) (header []string, rows [][]float64, err error) {
	if cols < 1 {
		return nil, nil, fmt.Errorf("reading %s: %d columns: want >= 1", path, cols)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	return readCSV(path, f, sep, cols)
}

// readCSV parses CSV text from r (named name in errors): see ReadCSV.
func readCSV(name string, in io.Reader, sep rune, cols int) (header []string, rows [][]float64, err error) {
	r := csv.NewReader(in)
	r.Comma = sep
	r.FieldsPerRecord = cols
	header, err = r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading header: %w", name, err)
	}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w (file truncated or corrupt?)", name, err)
		}
		row := make([]float64, cols)
		for j, s := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("%s line %d column %d: %q is not a finite number", name, line, j+1, s)
			}
			row[j] = v
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s: no data rows", name)
	}
	return header, rows, nil
}

// Standardize returns a copy of x with every column shifted to mean 0 and scaled to unit sample
// variance, plus the means and standard deviations used (columns with zero variance, or fewer than
// two values, keep scale 1). NaN entries (missing values) are left out of the means and variances
// and stay NaN. Training on standardised data changes the scale of every reported metric; the
// paper's Table 1 most likely used raw oilflow values (see docs/options.md, "Metrics"). Errors:
// x empty or not rectangular, an entry ±Inf, a column whose standard deviation or mean overflows
// float64 (values near ±1.8e308 of both signs).
func Standardize(x [][]float64) (out [][]float64, mean, std []float64, err error) {
	if err := checkRect("Standardize: x", x); err != nil {
		return nil, nil, nil, err
	}
	for i, r := range x {
		for j, v := range r {
			if math.IsInf(v, 0) {
				return nil, nil, nil, fmt.Errorf("Standardize: x[%d][%d] is %g: want finite values (NaN for missing)", i, j, v)
			}
		}
	}
	n, d := len(x), len(x[0])
	mean, std = make([]float64, d), make([]float64, d)
	out = make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, d)
	}
	for j := 0; j < d; j++ {
		var col []float64
		for i := 0; i < n; i++ {
			if !math.IsNaN(x[i][j]) {
				col = append(col, x[i][j])
			}
		}
		s, ym, ys := scaledMoments(col)
		mean[j], std[j] = ym*s, ys*s // MeanStdDev
		if std[j] == 0 {
			std[j] = 1
		}
		if math.IsInf(std[j], 0) || math.IsInf(mean[j], 0) {
			return nil, nil, nil, fmt.Errorf("Standardize: column %d's standard deviation (or mean) overflows float64 (its values reach %g): "+
				"rescale the column before standardising it", j+1, s)
		}
		finite := true
		for i := 0; i < n && finite; i++ {
			out[i][j] = (x[i][j] - mean[j]) / std[j]
			finite = !math.IsInf(out[i][j], 0) && (math.IsNaN(out[i][j]) == math.IsNaN(x[i][j]))
		}
		if finite {
			continue
		}
		// Near the float64 limit x - mean or the standard deviation itself overflows: standardise
		// in units of the column's largest |value| s, (x/s - mean/s) / (std/s).
		if ys == 0 {
			ys = 1 / s
		}
		for i := 0; i < n; i++ {
			out[i][j] = (x[i][j]/s - ym) / ys
		}
	}
	return out, mean, std, nil
}

// scaledMoments returns s = max |col| (1 when col is empty or all zero) and the mean and sample
// standard deviation of col / s (the standard deviation 0 for fewer than two values).
func scaledMoments(col []float64) (s, mean, std float64) {
	for _, v := range col {
		s = max(s, math.Abs(v))
	}
	if s == 0 {
		return 1, 0, 0
	}
	y := make([]float64, len(col))
	for i, v := range col {
		y[i] = v / s
	}
	mean = stat.Mean(y, nil)
	if len(col) > 1 {
		std = stat.StdDev(y, nil)
	}
	return s, mean, std
}

// MeanStdDev returns the mean and the sample standard deviation of col, computed on col / max|col|
// and scaled back, so that values near 1e-300 (whose squares underflow) or 1e300 (whose sums and
// squares overflow) keep their mean and spread. The mean of no values and the standard deviation
// of fewer than two are 0.
func MeanStdDev(col []float64) (mean, std float64) {
	if len(col) == 0 {
		return 0, 0
	}
	s, m, sd := scaledMoments(col)
	return m * s, sd * s
}

// OilflowClasses are the oil flow data's flow regimes, indexed by its labels 0-2 (Bishop & James
// 1993).
var OilflowClasses = []string{"homogeneous", "annular", "stratified"}

// wineClasses names the wine datasets' labels, the quality scores 0-10.
func wineClasses() []string {
	names := make([]string, 11)
	for i := range names {
		names[i] = fmt.Sprintf("quality %d", i)
	}
	return names
}
