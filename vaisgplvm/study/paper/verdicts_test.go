package paper_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
)

// TestReadClaims: the claims of Table 1 on record read back (6, each with its subject, both
// orderings and a verdict) and lay out as a table; a file without claims and one that is not
// JSON are errors naming the file.
func TestReadClaims(t *testing.T) {
	claims, err := paper.ReadClaims(filepath.Join("..", "..", "..", "records", "table1", "table1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 6 {
		t.Fatalf("%d claims in Table 1's record, want 6", len(claims))
	}
	tab := paper.ClaimsTable("Table 1", claims)
	for i, r := range tab.Rows {
		if r[0] != claims[i].Subject || !strings.Contains(r[1], "<") || !strings.Contains(r[2], "<") ||
			(r[3] != "yes" && r[3] != "no" && r[3] != "best only") {
			t.Errorf("row %d: %q", i, r)
		}
	}
	dir := t.TempDir()
	for name, content := range map[string]string{"empty.json": `{"claims": []}`, "text.json": "not json"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := paper.ReadClaims(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming it", name, err)
		}
	}
}
