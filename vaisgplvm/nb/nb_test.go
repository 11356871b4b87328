package nb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTableRendersAndEscapes(t *testing.T) {
	tab := Table{Title: "T <1>", Header: []string{"method", "-ELBO"}, Rows: [][]string{{"vais", MeanSE("%.2f", []float64{1, 3})}, {"<mf>", MeanSE("%.2f", []float64{2})}}}
	h := tab.HTML()
	for _, want := range []string{"<caption>T &lt;1&gt;</caption>", "<th", "2.00 ± 2.00", "&lt;mf&gt;"} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %q: %s", want, h)
		}
	}
	if txt := tab.Text(); !strings.Contains(txt, "| vais | 2.00 ± 2.00 |") || !strings.Contains(txt, "| <mf> | 2.00 |") {
		t.Errorf("text table:\n%s", txt)
	}
}

func TestQuickSize(t *testing.T) {
	t.Setenv(QuickEnv, "1")
	if Size(100, 3) != 3 || !Quick() {
		t.Error("quick mode: want the quick size")
	}
	t.Setenv(QuickEnv, "")
	if Size(100, 3) != 100 || Quick() {
		t.Error("normal mode: want the full size")
	}
}

// TestShowGlob: files matching a pattern are read; no match is an error.
func TestShowGlob(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.png"), []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ShowGlob(filepath.Join(dir, "*.png")); err != nil {
		t.Errorf("one match: %v", err)
	}
	if err := ShowGlob(filepath.Join(dir, "*.svg")); err == nil {
		t.Error("no match: want an error")
	}
}
