package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestReadCSVErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "a,b\n1,2\n3.5,-4\n")
	_, rows, err := ReadCSV(good, ',', 2)
	if err != nil || len(rows) != 2 || rows[1][0] != 3.5 || rows[1][1] != -4 {
		t.Fatalf("good file: rows %v, err %v", rows, err)
	}
	for name, body := range map[string]string{
		"truncated.csv": "a,b\n1,2\n3\n", // last row cut short
		"corrupt.csv":   "a,b\n1,x\n",    // not a number
		"nan.csv":       "a,b\n1,NaN\n",  // not finite
		"empty.csv":     "a,b\n",         // no rows
	} {
		if _, _, err := ReadCSV(write(name, body), ',', 2); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v should name the file", name, err)
		}
	}
	if _, _, err := ReadCSV(filepath.Join(dir, "missing.csv"), ',', 2); err == nil {
		t.Error("missing file: no error")
	}
}

func TestReadOverrideChecksum(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	if err := os.MkdirAll(filepath.Join(dir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "x", "f.csv")
	if err := os.WriteFile(p, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// sha256("hello\n")
	ok := File{Path: "x/f.csv", SHA256: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"}
	if got, err := Read(ok); err != nil || string(got) != "hello\n" {
		t.Fatalf("Read = %q, %v", got, err)
	}
	bad := ok
	bad.SHA256 = strings.Repeat("0", 64)
	if _, err := Read(bad); err == nil || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), p) {
		t.Errorf("checksum mismatch: error %v should say corrupt and name %s", err, p)
	}
	// The override wins over the embedded copy: a changed oil-flow file in $VAISGPLVM_DATA is
	// refused, not silently replaced by the embedded one.
	if err := os.MkdirAll(filepath.Join(dir, "oilflow"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, OilflowData.Path), []byte("f1\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Oilflow(); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("a wrong oilflow.csv in $%s: error %v, want a checksum error", EnvVar, err)
	}
}

func TestStandardize(t *testing.T) {
	x := [][]float64{{1, 5}, {3, 5}, {5, 5}}
	out, mean, std, err := Standardize(x)
	if err != nil {
		t.Fatal(err)
	}
	if mean[0] != 3 || std[0] != 2 || out[0][0] != -1 || out[2][0] != 1 || std[1] != 1 || out[1][1] != 0 {
		t.Errorf("Standardize: out %v mean %v std %v", out, mean, std)
	}
}

// TestMeanStdDevExtremeScales: at scales 1e-300 and 1e300 the mean and standard deviation are the
// unit-scale values times the scale (relative 1e-12), where the plain formulas give 0 or +Inf, and
// Standardize gives the unit-scale result (1e-12); at
// unit scale they equal gonum's stat.Mean / stat.StdDev to 1e-15.
func TestMeanStdDevExtremeScales(t *testing.T) {
	col := []float64{0.3, -1.7, 2.2, 0.05, 1.1}
	m0, s0 := MeanStdDev(col)
	if math.Abs(m0-stat.Mean(col, nil)) > 1e-15 || math.Abs(s0-stat.StdDev(col, nil)) > 1e-15 {
		t.Fatalf("unit scale: %g %g vs gonum %g %g", m0, s0, stat.Mean(col, nil), stat.StdDev(col, nil))
	}
	for _, scale := range []float64{1e-300, 1e300} {
		y := make([]float64, len(col))
		for i, v := range col {
			y[i] = v * scale
		}
		m, s := MeanStdDev(y)
		if math.Abs(m/scale-m0) > 1e-12*math.Abs(m0) || math.Abs(s/scale-s0) > 1e-12*s0 {
			t.Errorf("scale %g: mean %g sd %g, want %g %g", scale, m/scale, s/scale, m0, s0)
		}
		out, _, _, _ := Standardize([][]float64{{y[0]}, {y[1]}, {y[2]}})
		want, _, _, _ := Standardize([][]float64{{col[0]}, {col[1]}, {col[2]}})
		for i := range out {
			if math.Abs(out[i][0]-want[i][0]) > 1e-12 {
				t.Errorf("scale %g: Standardize gives %v, want %v", scale, out, want)
			}
		}
	}
	if m, s := MeanStdDev(nil); m != 0 || s != 0 {
		t.Errorf("no values: %g %g", m, s)
	}
	if _, s := MeanStdDev([]float64{4}); s != 0 {
		t.Errorf("one value: sd %g", s)
	}
}

// TestRealData loads the embedded tabular datasets.
func TestRealData(t *testing.T) {
	t.Setenv(EnvVar, "")
	oil, err := Oilflow()
	if err != nil {
		t.Fatal(err)
	}
	if n, d := oil.Dims(); n != 1000 || d != 12 || len(oil.Labels) != 1000 {
		t.Errorf("oilflow %dx%d with %d labels", n, d, len(oil.Labels))
	}
	wine, err := Wine()
	if err != nil {
		t.Fatal(err)
	}
	if n, d := wine.Dims(); n != 1599 || d != 11 || wine.Labels[0] != 5 {
		t.Errorf("wine %dx%d, first quality %d", n, d, wine.Labels[0])
	}
}

// TestImageLoaders loads the embedded image datasets and checks them against data/README.md.
func TestImageLoaders(t *testing.T) {
	t.Setenv(EnvVar, "")
	fr, err := Frey(Raw)
	if err != nil {
		t.Fatal(err)
	}
	n, d := fr.Dims()
	lo, hi, sum := 255.0, 0.0, 0.0
	for _, r := range fr.X {
		for _, v := range r {
			lo, hi, sum = min(lo, v), max(hi, v), sum+v
		}
	}
	// data/README.md states: 1965 x 560, range 8..238, mean 154.46.
	if n != 1965 || d != 560 || lo != 8 || hi != 238 || math.Abs(sum/float64(n*d)-154.46) > 0.01 {
		t.Errorf("frey: %dx%d range %g..%g mean %g", n, d, lo, hi, sum/float64(n*d))
	}
	fu, _ := Frey(Unit)
	if math.Abs(fu.X[3][7]*255-fr.X[3][7]) > 1e-9 {
		t.Errorf("unit scaling: %g vs raw %g", fu.X[3][7], fr.X[3][7])
	}
	mn, err := MNIST17(Unit)
	if err != nil {
		t.Fatal(err)
	}
	ones := 0
	for _, l := range mn.Labels {
		if l == 1 {
			ones++
		}
	}
	if n, d := mn.Dims(); n != 2163 || d != 784 || ones != 1135 || mn.ImageRows != 28 {
		t.Errorf("mnist 1s and 7s: %dx%d with %d ones, want 2163x784 with 1135", n, d, ones)
	}
	// The binarised 10k set: the test set's digit counts (LeCun's page: 980 zeros ... 1009 nines),
	// pixels in {0, 1}, and the first 1 or 7 equal to MNIST17's first image thresholded at 127.
	bin, err := MNISTBinary()
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, 10)
	for _, l := range bin.Labels {
		counts[l]++
	}
	if n, d := bin.Dims(); n != 10000 || d != 784 || fmt.Sprint(counts) != "[980 1135 1032 1010 982 892 958 1028 974 1009]" {
		t.Errorf("mnist binary: %dx%d, digit counts %v", n, d, counts)
	}
	first := slices.IndexFunc(bin.Labels, func(l int) bool { return l == 1 || l == 7 })
	for j, v := range bin.X[first] {
		if want := map[bool]float64{true: 1, false: 0}[math.Round(mn.X[0][j]*255) > 127]; v != want {
			t.Fatalf("mnist binary pixel %d of image %d: %g, want %g", j, first, v, want)
		}
	}
	if _, err := Frey(PixelScale(9)); err == nil {
		t.Error("an unknown pixel scale should be an error")
	}
}

func TestReadIDXCorrupt(t *testing.T) {
	p := "x.gz"
	if _, _, _, err := readIDX(p, []byte("plain text"), 2051, 3); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("non-gzip file: error %v", err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_ = binary.Write(zw, binary.BigEndian, []uint32{2051, 10, 28, 28})
	_, _ = zw.Write(make([]byte, 100)) // far fewer than 10*28*28 bytes
	_ = zw.Close()
	if _, _, _, err := readIDX(p, buf.Bytes(), 2051, 3); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated IDX: error %v", err)
	}
	if _, _, _, err := readIDX(p, buf.Bytes(), 2049, 1); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("wrong magic: error %v", err)
	}
}

func TestMissingMask(t *testing.T) {
	mask, damaged, err := MissingMask(1965, 560, 0.05, 0.75, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(damaged) != 98 { // round(0.05 * 1965)
		t.Errorf("%d damaged images, want 98", len(damaged))
	}
	for _, i := range damaged {
		missing := 0
		for _, v := range mask[i] {
			if v == 0 {
				missing++
			}
		}
		if missing != 420 { // 0.75 * 560
			t.Errorf("image %d lost %d pixels, want 420", i, missing)
		}
	}
	again, _, _ := MissingMask(1965, 560, 0.05, 0.75, 3)
	other, _, _ := MissingMask(1965, 560, 0.05, 0.75, 4)
	same, diff := true, false
	for i := range mask {
		for j := range mask[i] {
			same = same && mask[i][j] == again[i][j]
			diff = diff || mask[i][j] != other[i][j]
		}
	}
	if !same || !diff {
		t.Errorf("mask not determined by its seed (same seed equal: %v, other seed differs: %v)", same, diff)
	}
	if _, _, err := MissingMask(10, 5, 1.5, 0.5, 1); err == nil {
		t.Error("a fraction above 1 should be an error")
	}
}

// TestReadmeListsEveryFile: data/README.md's table names every data file with the sha256 of its
// content, its embedded copy with that copy's sha256, and says which have a download URL, as the
// code does.
func TestReadmeListsEveryFile(t *testing.T) {
	buf, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(buf), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		for i := range cells {
			cells[i] = strings.Trim(cells[i], "` ")
		}
		rows[cells[0]] = cells[1:]
	}
	if len(rows) != len(Files) {
		t.Errorf("README.md lists %d files, the code has %d", len(rows), len(Files))
	}
	for _, f := range Files {
		row, ok := rows[f.Path]
		if !ok || len(row) != 3 {
			t.Errorf("README.md: no row of 4 cells for %s (got %q)", f.Path, row)
			continue
		}
		embedded := f.Embedded + " (sha256 " + f.EmbeddedSHA256 + ")"
		if f.Embedded == "" {
			embedded = "no"
		}
		if row[0] != f.SHA256 || row[1] != embedded || (row[2] == "none") != (f.URL == "") {
			t.Errorf("README.md row for %s is %q; want sha256 %s, embedded %q and a URL only when the code has one", f.Path, row, f.SHA256, embedded)
		}
	}
}

// TestStandardizeNearTheLimit: a column whose x - mean and whose standard deviation overflow
// float64 ([1.79e308, 1.79e308, -1.79e308]) still standardises to finite values, those of
// [1, 1, -1]: 1/sqrt(3), 1/sqrt(3), -2/sqrt(3) (to 1e-12).
func TestStandardizeNearTheLimit(t *testing.T) {
	// The standard deviation of this column overflows float64: no finite std can undo the scaling,
	// so it is an error naming the column (issue 50: it returned std +Inf with a nil error).
	if _, _, std, err := Standardize([][]float64{{1, 1.79e308}, {2, 1.79e308}, {3, -1.79e308}}); err == nil || !strings.Contains(err.Error(), "column 2") {
		t.Errorf("std %v, error %v: want an error naming column 2", std, err)
	}
	// x - mean overflows but the standard deviation does not: standardised in the column's units.
	// In units of 1.7e308 the column is 1, -1, -1, -1, -1: mean -0.6, sample sd sqrt(0.8).
	out, _, _, err := Standardize([][]float64{{1.7e308}, {-1.7e308}, {-1.7e308}, {-1.7e308}, {-1.7e308}})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{1, -1, -1, -1, -1} {
		if want := (v + 0.6) / math.Sqrt(0.8); math.Abs(out[i][0]-want) > 1e-12 {
			t.Errorf("row %d: %g, want %g", i, out[i][0], want)
		}
	}
}

// TestAnnotationSHA256: the fingerprint of labels and names changes with one label, one class
// name, the label column's name or one feature's name, and not with the numbers (ContentSHA256's).
func TestAnnotationSHA256(t *testing.T) {
	base := func() *Dataset {
		return &Dataset{X: [][]float64{{1, 2}, {3, 4}}, Labels: []int{0, 1}, LabelNames: []string{"a", "b"},
			LabelColumn: "kind", Columns: []string{"x", "y"}}
	}
	want := AnnotationSHA256(base())
	same := base()
	same.X[0][0] = 7
	if got := AnnotationSHA256(same); got != want {
		t.Errorf("the numbers changed the annotation's fingerprint")
	}
	for name, change := range map[string]func(*Dataset){
		"a label":            func(d *Dataset) { d.Labels[1] = 0 },
		"a class name":       func(d *Dataset) { d.LabelNames[0] = "c" },
		"the label column":   func(d *Dataset) { d.LabelColumn = "type" },
		"a column name":      func(d *Dataset) { d.Columns[1] = "z" },
		"names run together": func(d *Dataset) { d.Columns = []string{"xy", ""} },
	} {
		d := base()
		change(d)
		if AnnotationSHA256(d) == want {
			t.Errorf("changing %s left the fingerprint as it was", name)
		}
	}
}
