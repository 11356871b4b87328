package data

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEmbeddedFiles checks every embedded file against its two sha256 values (the stored bytes and
// the content after decompression) and that every file under the embedded folders belongs to a
// File, so that nothing ships unchecked.
func TestEmbeddedFiles(t *testing.T) {
	t.Setenv(EnvVar, "")
	var names []string
	for _, f := range Files {
		if f.Embedded == "" {
			continue
		}
		names = append(names, f.Embedded)
		stored, err := fs.ReadFile(embedded, f.Embedded)
		if err != nil {
			t.Errorf("%s: %v", f.Embedded, err)
			continue
		}
		if got := sum256(stored); got != f.EmbeddedSHA256 {
			t.Errorf("%s: stored sha256 %s, want %s", f.Embedded, got, f.EmbeddedSHA256)
		}
		content, err := Read(*f)
		if err != nil {
			t.Errorf("%s: %v", f.Path, err)
			continue
		}
		if got := sum256(content); got != f.SHA256 {
			t.Errorf("%s: content sha256 %s, want %s", f.Path, got, f.SHA256)
		}
	}
	if err := fs.WalkDir(embedded, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !slices.Contains(names, p) {
			t.Errorf("embedded file %s belongs to no data.File", p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// A damaged embedded copy (here: a File whose content sum is wrong) is an error, not data.
	bad := OilflowData
	bad.SHA256 = strings.Repeat("0", 64)
	if _, err := Read(bad); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("wrong content sha256 of an embedded file: error %v", err)
	}
}

// TestNoParentDirectoryLookups: no file of the repository (code, tests, notebooks, scripts, docs)
// reads or tells anyone to read the build machines' shared folder beside the checkout; the product
// works in a clone with nothing beside it.
func TestNoParentDirectoryLookups(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	needle := ".." + "/shared" // split so that this file does not match itself
	binary := []string{".gz", ".png", ".gob", ".u8"}
	checked := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") && name != ".ci" || name == "out" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if slices.Contains(binary, filepath.Ext(p)) {
			return nil
		}
		buf, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		checked++
		if strings.Contains(string(buf), needle) {
			t.Errorf("%s mentions %s: the product must not read outside the repository", rel, needle)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Errorf("checked only %d files under %s: is the walk right?", checked, root)
	}
}
