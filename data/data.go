// Package data loads the datasets of the VAIS-GPLVM experiments and your own delimited files.
//
// The paper's four datasets (oil flow, red wine, Frey faces, the MNIST 10k test set) are compiled
// into the module (go:embed, gzip-compressed where it pays), so they load from any directory with
// no network. Read looks for a file, in order,
//
//  1. in $VAISGPLVM_DATA (a directory with the layout of File.Path, uncompressed: your own copies),
//  2. in the embedded copy,
//  3. in the user cache (os.UserCacheDir()/vaisgplvm), which it fills by downloading File.URL
//     (datasets that are not embedded, such as the white wine).
//
// Every file's content is checked against its sha256 before it is parsed; a mismatch or a parse
// error is an error naming the file and the fix. Sources, licences and formats: data/README.md.
package data

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// EnvVar names the environment variable pointing at a data directory that overrides the embedded
// files.
const EnvVar = "VAISGPLVM_DATA"

//go:embed oilflow wine frey mnist
var embedded embed.FS

// File is one data file: its path inside a data directory, the sha256 of its content as
// distributed, its canonical download URL and, when it ships with the module, its embedded copy.
type File struct {
	// Path is the file's path inside a data directory ($VAISGPLVM_DATA or the user cache), e.g.
	// "oilflow/oilflow.csv".
	Path string
	// SHA256 is the hex sha256 of the content as distributed (the original file, before any
	// compression of ours).
	SHA256 string
	// URL is the canonical download URL; "" when the file cannot be downloaded in this form.
	URL string
	// Embedded names the copy compiled into the module (under data/), "" when there is none. When
	// it ends in ".gz" and Path does not, the copy is gzip-compressed and Read decompresses it.
	Embedded string
	// EmbeddedSHA256 is the hex sha256 of the embedded bytes as stored.
	EmbeddedSHA256 string
}

// Dataset is data X [N, D] with optional integer labels [N].
type Dataset struct {
	Name string
	X    [][]float64
	// Mask [N, D] is 1 where X is observed and 0 where it is missing (X holds NaN there); nil when
	// every entry is observed.
	Mask   [][]float64
	Labels []int
	// LabelNames are the class names, indexed by label: a text label column's values, a built-in
	// dataset's classes (oil flow's flow regimes, wine's quality scores); nil where the labels name
	// themselves (numeric labels, MNIST's digits).
	LabelNames []string
	// Columns names the features (may be nil).
	Columns []string
	// LabelColumn is the header name of the column the labels came from ("" when none had one).
	LabelColumn string
	// ImageRows, ImageCols give the image shape when each row of X is an image (row-major).
	ImageRows, ImageCols int
}

// Dims returns N and D.
func (d *Dataset) Dims() (int, int) {
	if len(d.X) == 0 {
		return 0, 0
	}
	return len(d.X), len(d.X[0])
}

// Missing returns the number of missing entries: the zeros of Mask (0 when Mask is nil).
func (d *Dataset) Missing() int {
	n := 0
	for _, r := range d.Mask {
		for _, v := range r {
			if v == 0 {
				n++
			}
		}
	}
	return n
}

// Read returns the verified content of f: from $VAISGPLVM_DATA when it holds f.Path, else from
// the embedded copy, else from the user cache, downloading f.URL into it when absent. Errors name
// every place looked at and how to provide the file.
func Read(f File) ([]byte, error) {
	var tried []string
	if dir := os.Getenv(EnvVar); dir != "" {
		p := filepath.Join(dir, f.Path)
		if _, err := os.Stat(p); err == nil {
			return readVerified(p, f.SHA256)
		}
		tried = append(tried, p)
	}
	if f.Embedded != "" {
		return readEmbedded(f)
	}
	cache, err := cacheDir()
	if err != nil {
		return nil, fmt.Errorf("data file %s not found (looked in %v) and no user cache: %w; set $%s to a directory holding %s",
			f.Path, tried, err, EnvVar, f.Path)
	}
	p := filepath.Join(cache, f.Path)
	if _, err := os.Stat(p); err == nil {
		buf, err := readVerified(p, f.SHA256)
		if err != nil {
			return nil, fmt.Errorf("%w (delete the cached file to download it again)", err)
		}
		return buf, nil
	}
	if err := download(f.URL, p, f.SHA256); err != nil {
		return nil, fmt.Errorf("data file %s not found (looked in %v) and download failed: %w; "+
			"set $%s to a directory holding %s", f.Path, append(tried, p), err, EnvVar, f.Path)
	}
	return readVerified(p, f.SHA256)
}

// readEmbedded returns the embedded copy of f, decompressed when it is stored gzip-compressed,
// after checking the content's sha256.
func readEmbedded(f File) ([]byte, error) {
	buf, err := fs.ReadFile(embedded, f.Embedded)
	if err != nil {
		return nil, fmt.Errorf("embedded data file %s: %w (a damaged build of the module?)", f.Embedded, err)
	}
	if strings.HasSuffix(f.Embedded, ".gz") && !strings.HasSuffix(f.Path, ".gz") {
		if buf, err = gunzip(buf); err != nil {
			return nil, fmt.Errorf("embedded data file %s: %w", f.Embedded, err)
		}
	}
	if err := checkSum("embedded "+f.Embedded, buf, f.SHA256); err != nil {
		return nil, err
	}
	return buf, nil
}

func gunzip(buf []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(buf))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

func cacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "vaisgplvm"), nil
}

// readVerified reads the file at p and checks its sha256.
func readVerified(p, want string) ([]byte, error) {
	f, err := openRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("reading data file: %w", err)
	}
	if err := checkSum(p, buf, want); err != nil {
		return nil, err
	}
	return buf, nil
}

// checkSum compares the sha256 of buf, the content of the file named name, with want.
func checkSum(name string, buf []byte, want string) error {
	if got := sum256(buf); got != want {
		return fmt.Errorf("data file %s is corrupt or a different version: sha256 %s, want %s; "+
			"replace it with the original (see data/README.md in the project)", name, got, want)
	}
	return nil
}

func sum256(buf []byte) string {
	s := sha256.Sum256(buf)
	return hex.EncodeToString(s[:])
}

// SHA256 returns the hex sha256 of the file at p.
func SHA256(p string) (string, error) {
	f, err := openRegular(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading data file %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// downloadTimeout bounds one download.
const downloadTimeout = 120 * time.Second

// download fetches url into p (through a temporary file in p's directory, renamed once its sha256
// is right, so that no partial or wrong file is ever left at p).
func download(url, p, sum string) error {
	if url == "" {
		return errors.New("no download URL")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	client := &http.Client{Timeout: downloadTimeout}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".download-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), resp.Body); err != nil {
		tmp.Close()
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("GET %s: the downloaded file has sha256 %s, want %s (a different version or a broken transfer)", url, got, sum)
	}
	return os.Rename(tmp.Name(), p)
}

// openRegular opens the regular file at p for reading, refusing, before opening it, anything else
// (a FIFO, whose open would block until a writer comes, a device, a directory).
func openRegular(p string) (*os.File, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("opening data file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("data file %s is not a regular file (%s): give a file", p, st.Mode().Type())
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("opening data file: %w", err)
	}
	return f, nil
}
