package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenRule: a directory with another run's outputs is refused (and left as it was), overwritten
// only on request (the old files removed first), accepted for a resume; a second run is locked out
// while the first holds it; killed runs' temporary files are removed.
func TestOpenRule(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	names := []string{"metrics.json", "curve.csv"}
	d, err := Open(dir, names, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("metrics.json", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, names, Options{}); !errors.Is(err, ErrInUse) {
		t.Errorf("second Open while the first holds the lock: %v, want ErrInUse", err)
	}
	d.Close()

	_, err = Open(dir, names, Options{})
	if err == nil || !strings.Contains(err.Error(), "metrics.json") || !strings.Contains(err.Error(), "--overwrite") {
		t.Errorf("directory with an earlier run: %v, want a refusal naming metrics.json and --overwrite", err)
	}
	if buf, _ := os.ReadFile(filepath.Join(dir, "metrics.json")); string(buf) != "first" {
		t.Errorf("a refused run changed metrics.json: %q", buf)
	}
	// Unrelated files (another command's outputs) do not count.
	if d, err := Open(dir, []string{"infer.json"}, Options{}); err != nil {
		t.Errorf("other names: %v", err)
	} else {
		d.Close()
	}
	d, err = Open(dir, names, Options{Resume: true})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	d.Close()
	for _, n := range []string{".tmp-123", ".ckpt-456"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err = Open(dir, names, Options{Overwrite: true})
	if err != nil {
		t.Fatalf("overwrite: %v", err)
	}
	defer d.Close()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != LockName {
			t.Errorf("after Open with Overwrite, %s is left", e.Name())
		}
	}
	if err := d.WriteFile("curve.csv", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(d.File("curve.csv")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("curve.csv: %v %v", st, err)
	}
}

// TestOpenUncreatable: a directory that cannot be created is an error naming the flag, before
// anything else happens.
func TestOpenUncreatable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(file, "sub"), nil, Options{Flag: "--out"}); err == nil || !strings.HasPrefix(err.Error(), "--out ") {
		t.Errorf("uncreatable directory: %v", err)
	}
}
