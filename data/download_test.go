package data

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// whiteWineLike returns a file in the UCI Wine Quality format with n rows.
func whiteWineLike(n int) []byte {
	var sb strings.Builder
	sb.WriteString(`"fixed acidity";"volatile acidity";"citric acid";"residual sugar";"chlorides";"free sulfur dioxide";"total sulfur dioxide";"density";"pH";"sulphates";"alcohol";"quality"` + "\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "7;0.27;0.36;20.7;0.045;45;170;1.001;3;0.45;8.8;%d\n", 3+i%7)
	}
	return []byte(sb.String())
}

// TestDownloadWineWhite exercises the download path of a dataset that is not embedded against a
// local HTTP server (never the network): the first load downloads into the user cache, the second
// reads the cache, a file whose sha256 is wrong is refused and leaves nothing in the cache, and a
// failed download says where to put the file instead.
func TestDownloadWineWhite(t *testing.T) {
	body := whiteWineLike(4898)
	var hits atomic.Int32
	var serve atomic.Value
	serve.Store(body)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/winequality-white.csv" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(serve.Load().([]byte))
	}))
	defer srv.Close()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv(EnvVar, "")
	saved := WineWhiteData
	defer func() { WineWhiteData = saved }()
	WineWhiteData.URL = srv.URL + "/winequality-white.csv"
	WineWhiteData.SHA256 = sum256(body)

	ds, err := Load("wine-white")
	if err != nil {
		t.Fatal(err)
	}
	if n, d := ds.Dims(); n != 4898 || d != 11 || ds.Labels[1] != 4 || ds.Name != "wine-white" {
		t.Errorf("wine-white: %dx%d, label[1] %d, name %s", n, d, ds.Labels[1], ds.Name)
	}
	cached := filepath.Join(cache, "vaisgplvm", WineWhiteData.Path)
	if buf, err := os.ReadFile(cached); err != nil || sum256(buf) != WineWhiteData.SHA256 {
		t.Fatalf("cached copy %s: %v", cached, err)
	}
	if _, err := WineWhite(); err != nil || hits.Load() != 1 {
		t.Errorf("second load: %v after %d requests, want the cache and 1 request", err, hits.Load())
	}

	// A different file at the URL: refused, nothing left in the cache.
	if err := os.Remove(cached); err != nil {
		t.Fatal(err)
	}
	serve.Store(whiteWineLike(10))
	if _, err := WineWhite(); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("wrong download: error %v, want a sha256 mismatch", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(cached)); len(entries) != 0 {
		t.Errorf("a refused download left %d files in %s", len(entries), filepath.Dir(cached))
	}

	// An unreachable file: the error names the URL's status and $VAISGPLVM_DATA.
	WineWhiteData.URL = srv.URL + "/gone.csv"
	if _, err := WineWhite(); err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), EnvVar) {
		t.Errorf("404: error %v, want the status and $%s", err, EnvVar)
	}

	// $VAISGPLVM_DATA holding the file works offline.
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	if err := os.MkdirAll(filepath.Join(dir, "wine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, WineWhiteData.Path), body, 0o644); err != nil {
		t.Fatal(err)
	}
	before := hits.Load()
	if _, err := WineWhite(); err != nil || hits.Load() != before {
		t.Errorf("from $%s: %v, %d new requests", EnvVar, err, hits.Load()-before)
	}
}
