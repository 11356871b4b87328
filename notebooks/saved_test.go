package notebooks_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsidePath matches an absolute path outside the repository in a saved output: a temporary or
// home directory, or this machine's work tree (a saved output must show paths relative to the
// repository, which every clone has).
var outsidePath = regexp.MustCompile(`(^|[\s"'(=:])/(tmp|home|root|work|var|Users|private)/`)

// savedProblems lists, for one notebook file's JSON, the code cells whose saved outputs were not
// made by their current source (metadata.vaisgplvm.source_sha256 missing or not the sha256 of the
// source, as scripts/stamp_notebooks.py writes it right after execution) and the outputs that show
// an absolute path outside the repository.
func savedProblems(buf []byte) ([]string, error) {
	var nb struct {
		Cells []struct {
			CellType string          `json:"cell_type"`
			Source   json.RawMessage `json:"source"`
			Metadata struct {
				Vaisgplvm struct {
					SourceSHA256 string `json:"source_sha256"`
				} `json:"vaisgplvm"`
			} `json:"metadata"`
			Outputs []json.RawMessage `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(buf, &nb); err != nil {
		return nil, err
	}
	var probs []string
	for i, c := range nb.Cells {
		if c.CellType != "code" || len(c.Outputs) == 0 {
			continue
		}
		sum := sha256.Sum256([]byte(streamText(c.Source)))
		switch got := c.Metadata.Vaisgplvm.SourceSHA256; got {
		case "":
			probs = append(probs, fmt.Sprintf("cell %d: saved outputs without the sha256 of the source that made them (execute with scripts/run-notebooks.sh)", i))
		case hex.EncodeToString(sum[:]):
		default:
			probs = append(probs, fmt.Sprintf("cell %d: its source changed after its outputs were saved (execute it again with scripts/run-notebooks.sh)", i))
		}
		for _, o := range c.Outputs {
			if m := outsidePath.FindString(string(o)); m != "" {
				probs = append(probs, fmt.Sprintf("cell %d: a saved output shows a path outside the repository (%q)", i, strings.TrimSpace(m)))
				break
			}
		}
	}
	return probs, nil
}

// TestSavedOutputsMatchSources: every committed notebook's saved outputs were made by the code
// cells as they are now (the source hash stamped at execution) and show no path outside the
// repository. Needs no Jupyter.
func TestSavedOutputsMatchSources(t *testing.T) {
	files, err := filepath.Glob("*.ipynb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no notebooks found (%v)", err)
	}
	for _, f := range files {
		buf, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		probs, err := savedProblems(buf)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range probs {
			t.Errorf("%s: %s", f, p)
		}
	}
}

// TestSavedProblemsCatches: a stale output (source edited after stamping), an unstamped one and a
// /tmp path are each reported; a stamped, clean cell and a cell without outputs are not.
func TestSavedProblemsCatches(t *testing.T) {
	src := "%%\nfmt.Println(1)"
	sum := sha256.Sum256([]byte(src))
	good := hex.EncodeToString(sum[:])
	cell := func(source, hash, out string) string {
		meta := "{}"
		if hash != "" {
			meta = fmt.Sprintf(`{"vaisgplvm": {"source_sha256": %q}}`, hash)
		}
		outs := "[]"
		if out != "" {
			outs = fmt.Sprintf(`[{"output_type": "stream", "text": [%q]}]`, out)
		}
		s, _ := json.Marshal(source)
		return fmt.Sprintf(`{"cell_type": "code", "source": %s, "metadata": %s, "outputs": %s}`, s, meta, outs)
	}
	nbOf := func(cells ...string) []byte { return []byte(`{"cells": [` + strings.Join(cells, ",") + `]}`) }
	cases := map[string]struct {
		nb   []byte
		want int
	}{
		"clean":        {nbOf(cell(src, good, "1\n"), cell("x := 1", "", "")), 0},
		"stale":        {nbOf(cell(src+"\n// edited", good, "1\n")), 1},
		"unstamped":    {nbOf(cell(src, "", "1\n")), 1},
		"outside path": {nbOf(cell(src, good, "wrote /tmp/run-1/latents.png\n")), 1},
	}
	for name, c := range cases {
		probs, err := savedProblems(c.nb)
		if err != nil {
			t.Fatal(err)
		}
		if len(probs) != c.want {
			t.Errorf("%s: %d problems %q, want %d", name, len(probs), probs, c.want)
		}
	}
}
