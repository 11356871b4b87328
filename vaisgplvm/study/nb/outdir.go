package nb

import (
	"fmt"
	"os"
	"path/filepath"
)

// OutDirEnv is the environment variable GoNB sets to the notebook's directory.
const OutDirEnv = "GONB_DIR"

// OutDir returns the notebook's own output directory for name, created if needed: out/<name>
// beside the notebook (under $GONB_DIR; the current directory outside GoNB), so that notebooks
// write nowhere else and no two notebooks share a file. Errors: the directory cannot be created.
func OutDir(name string) (string, error) {
	base := os.Getenv(OutDirEnv)
	if base == "" {
		base = "."
	}
	dir := filepath.Join(base, "out", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("nb: the notebook's output directory: %w", err)
	}
	return dir, nil
}
