// Package report holds the neutral forms in which results are rendered: a titled table of strings
// with its Markdown and HTML renderings. The paper's tables and the GP-LVM-CMF experiment return
// them; the command prints their Markdown, and package nb shows their HTML in a notebook. It
// imports nothing of the project, so every layer can use it.
package report

import (
	"fmt"
	"html"
	"strings"
)

// Table is a titled table of strings: Header [columns] and Rows [rows][columns].
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

// Text renders the table as a Markdown table, its title (when set) in a paragraph above.
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

// Markdown joins tables' Text one blank line apart.
func Markdown(tables []Table) string {
	parts := make([]string, len(tables))
	for i, t := range tables {
		parts[i] = t.Text()
	}
	return strings.Join(parts, "\n")
}
