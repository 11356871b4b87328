package apitest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCommandLines bounds the command's non-test Go lines: it defines flags and maps them to the
// library's options, and the work is the library's (docs/architecture.md).
const maxCommandLines = 1200

// TestCommandSize fails when vaisgplvm/cmd/vaisgplvm's non-test .go files together have more than
// maxCommandLines lines: move the work into a library package and keep the flags' mapping there.
func TestCommandSize(t *testing.T) {
	dir := filepath.Join(moduleRoot(t), "vaisgplvm", "cmd", "vaisgplvm")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		buf, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(buf, []byte("\n"))
	}
	t.Logf("the command has %d non-test lines (at most %d)", lines, maxCommandLines)
	if lines > maxCommandLines {
		t.Errorf("the command has %d non-test lines, more than %d: move the work into the library (experiment, reproduce) and keep flags and their mapping in the command", lines, maxCommandLines)
	}
}
