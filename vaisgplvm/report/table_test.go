package report

import (
	"strings"
	"testing"
)

// TestTableRendersAndEscapes: HTML escapes the title and cells; Markdown keeps them as written and
// Markdown joins tables one blank line apart.
func TestTableRendersAndEscapes(t *testing.T) {
	tab := Table{Title: "T <1>", Header: []string{"method", "-ELBO"}, Rows: [][]string{{"vais", "2.00 ± 2.00"}, {"<mf>", "2.00"}}}
	h := tab.HTML()
	for _, want := range []string{"<caption>T &lt;1&gt;</caption>", "<th", "2.00 ± 2.00", "&lt;mf&gt;"} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %q: %s", want, h)
		}
	}
	txt := tab.Text()
	want := "T <1>\n\n| method | -ELBO |\n|---|---|\n| vais | 2.00 ± 2.00 |\n| <mf> | 2.00 |\n"
	if txt != want {
		t.Errorf("text table:\n%q\nwant\n%q", txt, want)
	}
	if md := Markdown([]Table{tab, {Header: []string{"a"}}}); md != want+"\n| a |\n|---|\n" {
		t.Errorf("Markdown of two tables:\n%q", md)
	}
}
