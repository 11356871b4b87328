package paper

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// upgradeStores, when set, makes TestProtocolStoresSealed rewrite the stores on record that are in
// format 1 (unsealed, keys without the data's annotation) into the current format:
//
//	go test ./vaisgplvm/study/paper -run TestProtocolStoresSealed -upgrade-stores
//
// A format-1 file's key is its training's identity (the same hash jobKey computes first), so the
// new key is storeKey(that key, the built-in dataset's annotation). The files on record are in git,
// whose hashes vouch for their bytes; a program never upgrades a user's store (loadJob retrains).
var upgradeStores = flag.Bool("upgrade-stores", false, "rewrite the format-1 stores in records/ in the current format")

// protocolStores lists the stored trainings and fits of records/ (every table's jobs/).
func protocolStores(t *testing.T) []string {
	var files []string
	err := filepath.WalkDir("../../../records", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Base(filepath.Dir(path)) == "jobs" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// annotationOf returns data.AnnotationSHA256 of the built-in dataset name as the tables load it
// (the same whatever the pixel scale or standardisation: checked).
func annotationOf(t *testing.T, name string) string {
	t.Helper()
	var a, b *data.Dataset
	var err error
	if protocol.IsImage(name) {
		a, err = protocol.LoadImages(name, "unit")
		if err == nil {
			b, err = protocol.LoadImages(name, "raw")
		}
	} else {
		a, err = protocol.LoadTabular(name, false)
		if err == nil {
			b, err = protocol.LoadTabular(name, true)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if data.AnnotationSHA256(a) != data.AnnotationSHA256(b) {
		t.Fatalf("%s: the annotation depends on the scale", name)
	}
	return data.AnnotationSHA256(a)
}

// TestProtocolStoresSealed: every stored training and fit on record in records/ is sealed,
// decodes, is of the current format and is filed under its own key.
func TestProtocolStoresSealed(t *testing.T) {
	files := protocolStores(t)
	if len(files) < 250 {
		t.Fatalf("%d stored trainings under records, want the ~290 on record", len(files))
	}
	annotations := map[string]string{}
	for _, f := range files {
		kind, ext := sealJob, filepath.Ext(f)
		if ext == ".json" {
			kind = sealJob5
		}
		buf, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		payload, err := rundir.Unseal(kind, buf)
		if errors.Is(err, rundir.ErrUnsealed) && *upgradeStores {
			name := strings.SplitN(filepath.Base(f), "-", 2)[0]
			if annotations[name] == "" {
				annotations[name] = annotationOf(t, name)
			}
			upgradeStored(t, f, kind, annotations[name])
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		format, key := decodedKey(t, f, payload)
		if format != storeFormat || !strings.HasSuffix(strings.TrimSuffix(f, ext), "-"+key[:16]) {
			t.Errorf("%s: format %d, key %.16s: want format %d filed under its key", f, format, key, storeFormat)
		}
	}
}

// decodedKey decodes a stored training (.gob) or fit (.json) and returns its format and key.
func decodedKey(t *testing.T, path string, payload []byte) (int, string) {
	t.Helper()
	if filepath.Ext(path) == ".json" {
		var s stored5
		if err := json.Unmarshal(payload, &s); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return s.Format, s.Key
	}
	var s storedJob
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s.Format, s.Key
}

// upgradeStored rewrites the format-1 file at path in the current format under its new key and
// removes the old file.
func upgradeStored(t *testing.T, path, kind, annotation string) {
	t.Helper()
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	format, old := decodedKey(t, path, buf)
	ext := filepath.Ext(path)
	if format != 1 || !strings.HasSuffix(strings.TrimSuffix(path, ext), "-"+old[:16]) {
		t.Fatalf("%s: format %d key %.16s: not a format-1 file under its key", path, format, old)
	}
	key, err := storeKey(old, annotation)
	if err != nil {
		t.Fatal(err)
	}
	var payload []byte
	if ext == ".json" {
		var s stored5
		if err := json.Unmarshal(buf, &s); err != nil {
			t.Fatal(err)
		}
		s.Format, s.Key = storeFormat, key
		if payload, err = json.MarshalIndent(s, "", " "); err != nil {
			t.Fatal(err)
		}
		payload = append(payload, '\n')
	} else {
		var s storedJob
		if err := gob.NewDecoder(bytes.NewReader(buf)).Decode(&s); err != nil {
			t.Fatal(err)
		}
		s.Format, s.Key = storeFormat, key
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(&s); err != nil {
			t.Fatal(err)
		}
		payload = b.Bytes()
	}
	name := strings.TrimSuffix(path, old[:16]+ext) + key[:16] + ext
	if err := rundir.WriteAtomic(name, rundir.Seal(kind, payload)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s -> %s", filepath.Base(path), filepath.Base(name))
}
