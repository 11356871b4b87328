// Package nb shows results inside GoNB notebooks: figures as inline PNG, HTML tables of results
// with mean ± 2 s.e., and a live training display (iteration, -ELBO and its curve updated in place).
// Outside a notebook (a terminal, a test) the same calls degrade gracefully: figures are not
// shown (Show returns nil after rendering, so errors still surface), tables print as text and
// training draws a plain progress bar on stderr.
//
// Quick mode ($VAISGPLVM_QUICK=1) lets notebooks shrink their work so CI can execute them: use
// Size(full, quick) for iteration counts and the like.
package nb

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/metrics"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/plots"
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

// Table is a titled table of strings.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// HTML renders the table as an HTML table (cells escaped).
func (t Table) HTML() string {
	var sb strings.Builder
	sb.WriteString(`<table style="border-collapse:collapse">`)
	if t.Title != "" {
		fmt.Fprintf(&sb, "<caption>%s</caption>", html.EscapeString(t.Title))
	}
	sb.WriteString("<tr>")
	for _, h := range t.Header {
		fmt.Fprintf(&sb, `<th style="padding:2px 8px;border-bottom:1px solid #888">%s</th>`, html.EscapeString(h))
	}
	sb.WriteString("</tr>")
	for _, r := range t.Rows {
		sb.WriteString("<tr>")
		for _, c := range r {
			fmt.Fprintf(&sb, `<td style="padding:2px 8px;text-align:right">%s</td>`, html.EscapeString(c))
		}
		sb.WriteString("</tr>")
	}
	sb.WriteString("</table>")
	return sb.String()
}

// Text renders the table as a Markdown table.
func (t Table) Text() string {
	var sb strings.Builder
	if t.Title != "" {
		sb.WriteString(t.Title + "\n\n")
	}
	sb.WriteString("| " + strings.Join(t.Header, " | ") + " |\n|")
	for range t.Header {
		sb.WriteString("---|")
	}
	sb.WriteString("\n")
	for _, r := range t.Rows {
		sb.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return sb.String()
}

// Show displays the table: HTML in a notebook, Markdown text on stdout elsewhere.
func (t Table) Show() {
	if gonbui.IsNotebook {
		gonbui.DisplayHTML(t.HTML())
		gonbui.Sync()
		return
	}
	fmt.Print(t.Text())
}
