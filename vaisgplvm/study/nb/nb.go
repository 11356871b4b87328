// Package nb shows results inside GoNB notebooks: figures as inline PNG, HTML tables of results
// (report.Table, the tables package paper and cmf return: ShowResult) with mean ± 2 s.e., and a
// live training display (iteration, -ELBO and its curve updated in place). It is the only package
// that imports GoNB; the command does not link it.
// Outside a notebook (a terminal, a test) the same calls degrade gracefully: figures are not
// shown (Show returns nil after rendering, so errors still surface), tables print as text and
// training draws a plain progress bar on stderr.
//
// Quick mode ($VAISGPLVM_QUICK=1) lets notebooks shrink their work so CI can execute them: use
// Size(full, quick) for iteration counts and the like.
package nb

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/plots"
)

// QuickEnv is the environment variable that switches notebooks to quick mode when set to 1.
const QuickEnv = "VAISGPLVM_QUICK"

// Quick reports whether quick mode is on.
func Quick() bool { return os.Getenv(QuickEnv) == "1" }

// Size returns quick in quick mode and full otherwise.
func Size(full, quick int) int {
	if Quick() {
		return quick
	}
	return full
}

// FullEnv is the environment variable that gives a notebook's long cells their full size when set
// to 1: a notebook whose full run takes more than a few minutes on 2 cores runs a smaller default
// and says so (Sizes).
const FullEnv = "VAISGPLVM_FULL"

// Full reports whether full sizes were asked for (FullEnv).
func Full() bool { return os.Getenv(FullEnv) == "1" }

// Sizes returns quick in quick mode, full when Full, and the default small otherwise.
func Sizes(full, small, quick int) int {
	switch {
	case Quick():
		return quick
	case Full():
		return full
	}
	return small
}

// InNotebook reports whether the code runs under a GoNB kernel.
func InNotebook() bool { return gonbui.IsNotebook }

// Show renders p as a PNG of w x h (zero: plots' defaults) and displays it in the notebook.
func Show(p *plot.Plot, w, h vg.Length) error {
	png, err := plots.PNG(p, w, h)
	if err != nil {
		return err
	}
	if gonbui.IsNotebook {
		gonbui.DisplayPNG(png)
		gonbui.Sync()
	}
	return nil
}

// PlotsHTML renders plots as PNGs of w x h (zero: plots' defaults) in one row of HTML <img>
// elements, for an output block that is redrawn in place (Lab's update). Errors: a plot that
// does not render.
func PlotsHTML(w, h vg.Length, ps ...*plot.Plot) (string, error) {
	var b strings.Builder
	b.WriteString(`<div style="display:flex;flex-wrap:wrap">`)
	for _, p := range ps {
		png, err := plots.PNG(p, w, h)
		if err != nil {
			return "", err
		}
		b.WriteString(`<img src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(png) + `"/>`)
	}
	b.WriteString(`</div>`)
	return b.String(), nil
}

// ShowFile displays a PNG file written earlier (e.g. by the vaisgplvm command).
func ShowFile(path string) error {
	buf, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("nb: %w", err)
	}
	if gonbui.IsNotebook {
		gonbui.DisplayPNG(buf)
		gonbui.Sync()
	}
	return nil
}

// ShowGlob displays every PNG file matching pattern (filepath.Glob), in name order. Errors: a bad
// pattern, no file matching it, or an unreadable file.
func ShowGlob(pattern string) error {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return fmt.Errorf("nb: %w", err)
	}
	if len(files) == 0 {
		return fmt.Errorf("nb: no file matches %s", pattern)
	}
	sort.Strings(files)
	for _, f := range files {
		if err := ShowFile(f); err != nil {
			return err
		}
	}
	return nil
}

// MeanSE formats the mean and two standard errors of values as "m ± 2se" with the verb format
// (e.g. "%.3f"); a single value shows as "m".
func MeanSE(format string, values []float64) string {
	m, se := metrics.MeanAndTwoSE(values)
	if len(values) < 2 {
		return fmt.Sprintf(format, m)
	}
	return fmt.Sprintf(format+" ± "+format, m, se)
}

// Table is report.Table with Show: notebooks build tables of their own as nb.Table{...}.Show().
type Table report.Table

// HTML renders the table as an HTML table (report.Table.HTML).
func (t Table) HTML() string { return report.Table(t).HTML() }

// Text renders the table as Markdown (report.Table.Text).
func (t Table) Text() string { return report.Table(t).Text() }

// Show displays the table: HTML in a notebook, Markdown text on stdout elsewhere.
func (t Table) Show() {
	if gonbui.IsNotebook {
		gonbui.DisplayHTML(t.HTML())
		gonbui.Sync()
		return
	}
	fmt.Print(t.Text())
}

// Result is what the paper's tables and the GP-LVM-CMF experiment return: their tables.
type Result interface {
	Tables() []report.Table
}

// ShowResult displays r's tables (Table.Show each) and, when r has them (a Warnings() []string
// method), its warnings.
func ShowResult(r Result) {
	for _, t := range r.Tables() {
		Table(t).Show()
	}
	if w, ok := r.(interface{ Warnings() []string }); ok {
		for _, s := range w.Warnings() {
			fmt.Println("Warning:", s)
		}
	}
}
