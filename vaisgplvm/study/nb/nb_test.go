package nb

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// TestTableRendersAndEscapes: nb.Table renders as report.Table does, with MeanSE's cells.
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

type warned struct{}

func (warned) Tables() []report.Table {
	return []report.Table{{Title: "first", Header: []string{"a"}}, {Title: "second", Header: []string{"b"}}}
}
func (warned) Warnings() []string { return []string{"careful"} }

// TestShowResult: outside a notebook ShowResult prints every table's Markdown, then the warnings.
func TestShowResult(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	ShowResult(warned{})
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	want := "first\n\n| a |\n|---|\nsecond\n\n| b |\n|---|\nWarning: careful\n"
	if string(out) != want {
		t.Errorf("ShowResult printed\n%q\nwant\n%q", out, want)
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
	if Sizes(100, 30, 3) != 30 || Full() {
		t.Error("normal mode: want the default (small) size of Sizes")
	}
	t.Setenv(FullEnv, "1")
	if Sizes(100, 30, 3) != 100 || !Full() {
		t.Error("full mode: want the full size")
	}
	t.Setenv(QuickEnv, "1")
	if Sizes(100, 30, 3) != 3 {
		t.Error("quick and full: quick wins (CI)")
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

// TestOutDir: out/<name> under the notebook's directory ($GONB_DIR), created, and under the
// current directory outside GoNB.
func TestOutDir(t *testing.T) {
	base := t.TempDir()
	t.Setenv(OutDirEnv, base)
	dir, err := OutDir("00-tour")
	if err != nil || dir != filepath.Join(base, "out", "00-tour") {
		t.Fatalf("OutDir = %q, %v", dir, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("%s was not created: %v", dir, err)
	}
	t.Setenv(OutDirEnv, "")
	t.Chdir(base)
	if dir, err := OutDir("x"); err != nil || dir != filepath.Join("out", "x") {
		t.Errorf("outside GoNB: %q, %v", dir, err)
	}
}
