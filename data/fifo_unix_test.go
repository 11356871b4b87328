//go:build unix

package data

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRefusesNonRegularFiles: a FIFO (a named pipe) is refused before it is opened, since opening
// it would block until some process writes to it (as $VAISGPLVM_DATA or --data could point at);
// so is a directory.
func TestRefusesNonRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, t.TempDir()} {
		done := make(chan error, 1)
		go func() { _, err := ReadTable(p, TableOptions{}); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: error %v, want 'not a regular file'", p, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadTable(%s) blocked", p)
		}
		if _, err := SHA256(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("SHA256(%s): %v", p, err)
		}
		if _, err := readVerified(p, ""); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("readVerified(%s): %v", p, err)
		}
	}
}
