package data

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MissingTokens are the field values ReadTable reads as missing (compared case-insensitively,
// after trimming spaces): the empty field, NaN, NA, N/A, null and "?".
var MissingTokens = []string{"", "nan", "na", "n/a", "null", "?"}

// TableOptions tune ReadTable.
type TableOptions struct {
	// LabelColumn names a header column that holds class labels (integers or text); it is not a
	// feature. Empty: every column is a feature.
	LabelColumn string
	// Sep is the field separator; 0 detects it from the header line (tab, semicolon or comma).
	Sep rune
	// Columns, when positive, is the number of feature columns the file must have.
	Columns int
	// AllowUnobservedColumns accepts feature columns with no observed value (new points whose
	// column is to be predicted); training data must observe every column.
	AllowUnobservedColumns bool
}

// ReadTable reads your own data: a delimited text file with one header line and one row per data
// point. Every column except opt.LabelColumn is a feature; a feature field in MissingTokens is
// missing (X holds NaN there, Mask 0). Labels, when asked for, must all be present; integer labels
// are kept as they are, text labels are numbered in order of first appearance (LabelNames).
//
// Returns a Dataset named after the file, X [N, D] (D = columns - 1 with a label column). Errors
// name the file, line and column: a row with the wrong number of fields, a field that is not a
// number or not finite (Inf), a missing or unknown label column, a missing label, a feature column
// or a row with no observed value, or a file with no data rows.
func ReadTable(path string, opt TableOptions) (*Dataset, error) {
	f, r, header, err := openTable(path, opt.Sep)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	labelCol := -1
	if opt.LabelColumn != "" {
		if labelCol = slices.Index(header, opt.LabelColumn); labelCol < 0 {
			return nil, fmt.Errorf("%s: no column named %q for the labels (the header has %s)", path, opt.LabelColumn, strings.Join(header, ", "))
		}
	}
	if err := checkHeader(path, header); err != nil {
		return nil, err
	}
	ds := &Dataset{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), LabelColumn: opt.LabelColumn}
	for j, h := range header {
		if j != labelCol {
			ds.Columns = append(ds.Columns, h)
		}
	}
	if len(ds.Columns) == 0 {
		return nil, fmt.Errorf("%s: no feature columns", path)
	}
	if opt.Columns > 0 && len(ds.Columns) != opt.Columns {
		return nil, fmt.Errorf("%s has %d feature columns, want %d", path, len(ds.Columns), opt.Columns)
	}
	var rawLabels []string
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w (want %d fields per row, as in the header)", path, err, len(header))
		}
		row, mrow := make([]float64, 0, len(ds.Columns)), make([]float64, 0, len(ds.Columns))
		for j, s := range rec {
			s = strings.TrimSpace(s)
			if j == labelCol {
				if isMissing(s) {
					return nil, fmt.Errorf("%s line %d: the label (column %q) is missing", path, line, opt.LabelColumn)
				}
				rawLabels = append(rawLabels, s)
				continue
			}
			if isMissing(s) {
				row, mrow = append(row, math.NaN()), append(mrow, 0)
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(v, 0) {
				hint := ""
				if err != nil && opt.LabelColumn == "" {
					hint = fmt.Sprintf("; if column %q holds class labels, name it as the label column (--labels %s)", header[j], header[j])
				}
				return nil, fmt.Errorf("%s line %d column %d (%s): %s is not a finite number (missing values: empty, NaN, NA or ?)%s", path, line, j+1, shorten(header[j]), clip(s), hint)
			}
			row, mrow = append(row, v), append(mrow, 1)
		}
		if !slices.Contains(mrow, 1) {
			return nil, fmt.Errorf("%s line %d: no observed value; drop the row", path, line)
		}
		ds.X, ds.Mask = append(ds.X, row), append(ds.Mask, mrow)
	}
	if len(ds.X) == 0 {
		return nil, fmt.Errorf("%s: no data rows", path)
	}
	if err := ds.checkColumnsObserved(); err != nil && !opt.AllowUnobservedColumns {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if ds.Missing() == 0 {
		ds.Mask = nil
	}
	if labelCol >= 0 {
		ds.Labels, ds.LabelNames = parseLabels(rawLabels)
	}
	return ds, nil
}

// openTable opens the delimited file at path (sep: its separator, 0 to detect it) and reads its
// header line; the caller closes the file and reads the rows from r.
func openTable(path string, sep rune) (f *os.File, r *csv.Reader, header []string, err error) {
	if f, err = openRegular(path); err != nil {
		return nil, nil, nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if err := notCompressed(path, f); err != nil {
		return nil, nil, nil, err
	}
	if sep == 0 {
		if sep, err = detectSeparator(f); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	r = csv.NewReader(f)
	r.Comma = sep
	header, err = r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, nil, fmt.Errorf("%s is empty: a table needs a header line and at least one data row", path)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: reading the header line: %w", path, err)
	}
	header[0] = strings.TrimPrefix(header[0], "\ufeff") // the byte-order mark spreadsheets write
	return f, r, header, nil
}

// checkHeader refuses a header line that cannot name the columns: a name given twice (infer
// matches the columns of new points by name), or only numbers (a file without a header line,
// whose first data row would silently become the names).
func checkHeader(path string, header []string) error {
	numbers := 0
	for j, h := range header {
		if i := slices.Index(header[:j], h); i >= 0 {
			return fmt.Errorf("%s: the header names columns %d and %d both %s: give every column its own name", path, i+1, j+1, clip(h))
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(h), 64); err == nil && !math.IsNaN(v) {
			numbers++
		}
	}
	if numbers == len(header) {
		return fmt.Errorf("%s: the first line holds only numbers (%s ...), so it looks like a data row, not a header: add a first line of column names",
			path, clip(strings.Join(header[:min(3, len(header))], ", ")))
	}
	return nil
}

// clip quotes s for an error message, cut to its first 40 characters when longer (a field of
// megabytes is not echoed whole).
func clip(s string) string {
	if t := shorten(s); t != s {
		return fmt.Sprintf("%q... (%d bytes)", strings.TrimSuffix(t, "..."), len(s))
	}
	return fmt.Sprintf("%q", s)
}

// shorten returns s cut to its first 40 characters and "..." when longer.
func shorten(s string) string {
	const limit = 40
	if r := []rune(s); len(r) > limit {
		return string(r[:limit]) + "..."
	}
	return s
}

// notCompressed refuses a compressed or archived file (its magic bytes), whose binary content
// would otherwise be parsed and echoed as text, and rewinds f.
func notCompressed(path string, f *os.File) error {
	magic := make([]byte, 6)
	n, _ := io.ReadFull(f, magic)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range []struct {
		magic, what, fix string
	}{
		{"\x1f\x8b", "gzip-compressed", "gunzip it"}, {"PK\x03\x04", "a zip archive", "unzip it"},
		{"BZh", "bzip2-compressed", "bunzip2 it"}, {"\xfd7zXZ", "xz-compressed", "unxz it"},
		{"\x28\xb5\x2f\xfd", "zstd-compressed", "unzstd it"},
	} {
		if strings.HasPrefix(string(magic[:n]), k.magic) {
			return fmt.Errorf("%s is %s, not a delimited text file: %s first", path, k.what, k.fix)
		}
	}
	return nil
}

// detectSeparator reads the header line of f and rewinds it: tab, semicolon or comma, whichever
// the header contains (in that order); a header without any is one column, read with commas.
func detectSeparator(f *os.File) (rune, error) {
	buf := make([]byte, 64<<10)
	n, err := f.Read(buf)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	if bytes.HasPrefix(buf[:n], []byte{0xff, 0xfe}) || bytes.HasPrefix(buf[:n], []byte{0xfe, 0xff}) || bytes.Count(buf[:n], []byte{0}) > n/4 {
		return 0, errors.New("the file is UTF-16 (or binary), not text in UTF-8: save it as UTF-8 (CSV UTF-8 in a spreadsheet)")
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(buf[:n]), "\n")
	for _, sep := range []rune{'\t', ';', ','} {
		if strings.ContainsRune(first, sep) {
			return sep, nil
		}
	}
	return ',', nil
}

func isMissing(s string) bool {
	return slices.Contains(MissingTokens, strings.ToLower(s))
}

func (ds *Dataset) checkColumnsObserved() error {
	for j, name := range ds.Columns {
		observed := false
		for i := range ds.X {
			if ds.Mask[i][j] == 1 {
				observed = true
				break
			}
		}
		if !observed {
			return fmt.Errorf("column %d (%s) has no observed value; drop it", j+1, name)
		}
	}
	return nil
}

// parseLabels keeps integer labels as they are; otherwise it numbers the distinct text labels in
// order of first appearance and returns their names.
func parseLabels(raw []string) ([]int, []string) {
	labels := make([]int, len(raw))
	numeric := true
	for i, s := range raw {
		v, err := strconv.Atoi(s)
		if err != nil {
			numeric = false
			break
		}
		labels[i] = v
	}
	if numeric {
		return labels, nil
	}
	var names []string
	for i, s := range raw {
		k := slices.Index(names, s)
		if k < 0 {
			k = len(names)
			names = append(names, s)
		}
		labels[i] = k
	}
	return labels, names
}
