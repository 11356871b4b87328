package apitest

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLibraryBelowStudy keeps docs/architecture.md's groups true: every package of the module is in
// exactly one of library, study and tools, and no library package depends (go list -deps) on a
// study or tools package.
func TestLibraryBelowStudy(t *testing.T) {
	root := moduleRoot(t)
	groups := groupTable(t, filepath.Join(root, "docs", "architecture.md"))
	group := map[string]string{}
	for g, pkgs := range groups {
		for _, p := range pkgs {
			if other, dup := group[p]; dup {
				t.Errorf("package %s is in groups %s and %s", p, other, g)
			}
			group[p] = g
		}
	}
	for _, g := range []string{"library", "study", "tools"} {
		if len(groups[g]) == 0 {
			t.Fatalf("docs/architecture.md's group table has no %s row", g)
		}
	}
	for p := range goList(t, root, "-f", "{{.ImportPath}}", "./...") {
		if (strings.HasPrefix(p, "vaisgplvm/") || p == "data") && group[p] == "" {
			t.Errorf("package %s is in no group of docs/architecture.md", p)
		}
	}
	for _, lib := range groups["library"] {
		for d := range goList(t, root, "-deps", "-f", "{{.ImportPath}}", "./"+lib) {
			if g := group[d]; g != "" && g != "library" {
				t.Errorf("library package %s depends on %s, a %s package", lib, d, g)
			}
		}
	}
}

// groupTable reads the table whose header starts "| group | packages |": each group's packages,
// as module paths (libPath).
func groupTable(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	groups := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "| group | packages |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(line, "|")
			if len(cells) < 4 {
				t.Fatalf("group table row %q: want 2 columns", line)
			}
			g := strings.TrimSpace(cells[1])
			for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
				groups[g] = append(groups[g], libPath(m[1]))
			}
		case in:
			in = false
		}
	}
	return groups
}
