// Package data loads the datasets of the VAIS-GPLVM experiments.
//
// Files are looked up, in order, in $VAISGPLVM_DATA, in ../shared/data (relative to the working
// directory or any parent of it, so tests and notebooks find it), and in a user cache
// (os.UserCacheDir()/vaisgplvm) which is filled by downloading the file from its canonical URL.
// Every file is checked against its sha256 before it is parsed; a mismatch or a parse error is an
// error naming the file and the fix.
package data

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// EnvVar names the environment variable pointing at a data directory.
const EnvVar = "VAISGPLVM_DATA"

// File is one data file: its path inside a data directory, sha256 and canonical download URL.
type File struct {
	Path   string
	SHA256 string
	URL    string
}

// Dataset is data X [N, D] with optional integer labels [N].
type Dataset struct {
	Name string
	X    [][]float64
	// Mask [N, D] is 1 where X is observed and 0 where it is missing (X holds NaN there); nil when
	// every entry is observed.
	Mask   [][]float64
	Labels []int
	// LabelNames are the class names of a text label column, indexed by label (nil for numeric labels).
	LabelNames []string
	// Columns names the features (may be nil).
	Columns []string
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

// Locate returns the path of a verified copy of f, downloading it into the user cache when no
// local copy exists. Errors name every place looked at.
func Locate(f File) (string, error) {
	var tried []string
	for _, dir := range searchDirs() {
		p := filepath.Join(dir, f.Path)
		if _, err := os.Stat(p); err == nil {
			if err := verify(p, f.SHA256); err != nil {
				return "", err
			}
			return p, nil
		}
		tried = append(tried, p)
	}
	cache, err := cacheDir()
	if err != nil {
		return "", fmt.Errorf("data file %s not found (looked in %v) and no user cache: %w", f.Path, tried, err)
	}
	p := filepath.Join(cache, f.Path)
	if _, err := os.Stat(p); err == nil {
		if err := verify(p, f.SHA256); err != nil {
			return "", fmt.Errorf("%w (delete the cached file to download it again)", err)
		}
		return p, nil
	}
	if err := download(f.URL, p, f.SHA256); err != nil {
		return "", fmt.Errorf("data file %s not found (looked in %v and %s) and download failed: %w; "+
			"set $%s to a directory holding %s", f.Path, tried, p, err, EnvVar, f.Path)
	}
	return p, nil
}

func searchDirs() []string {
	var dirs []string
	if d := os.Getenv(EnvVar); d != "" {
		dirs = append(dirs, d)
	}
	wd, err := os.Getwd()
	if err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			dirs = append(dirs, filepath.Join(dir, "..", "shared", "data"))
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return dirs
}

func cacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "vaisgplvm"), nil
}

// verify checks the sha256 of the file at p.
func verify(p, want string) error {
	got, err := SHA256(p)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("data file %s is corrupt or a different version: sha256 %s, want %s; "+
			"replace it with the original (see data/README.md in the project)", p, got, want)
	}
	return nil
}

// SHA256 returns the hex sha256 of the file at p.
func SHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("opening data file: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading data file %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// download fetches url into p (through a temporary file) and checks its sha256.
func download(url, p, sum string) error {
	if url == "" {
		return errors.New("no download URL")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	client := &http.Client{Timeout: 60 * time.Second}
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
	if _, err := io.Copy(tmp, resp.Body); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := verify(tmp.Name(), sum); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}
