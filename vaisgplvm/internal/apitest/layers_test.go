package apitest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/vaisgplvm/vaisgplvm/"

// TestLayers keeps docs/architecture.md's layer table true: every package of the module is in
// exactly one row; each imports only packages of the rows above it or listed before it in its row;
// each row's "imports from the module" column is exactly what its packages import from other rows;
// only nb imports GoNB, and the command does not link it (go list -deps); experiment does not
// depend on paper.
func TestLayers(t *testing.T) {
	root := moduleRoot(t)
	rows := layerTable(t, filepath.Join(root, "docs", "architecture.md"))
	imports := goList(t, root, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	place := map[string][2]int{} // package -> (row, position in row)
	for r, row := range rows {
		for i, p := range row.packages {
			if _, dup := place[p]; dup {
				t.Errorf("package %s is in two rows of the layer table", p)
			}
			place[p] = [2]int{r, i}
		}
	}
	for p := range imports {
		if !strings.HasPrefix(p, "vaisgplvm/") && p != "data" {
			continue // the repository's test-only packages (docker, notebooks)
		}
		if _, ok := place[p]; !ok {
			t.Errorf("package %s is missing from docs/architecture.md's layer table", p)
		}
	}
	for r, row := range rows {
		want := map[string]bool{}
		for _, p := range row.packages {
			deps, ok := imports[p]
			if !ok {
				t.Errorf("layer table row %q lists %s, which go list does not know", row.layer, p)
				continue
			}
			for _, d := range deps {
				if strings.HasPrefix(d, "github.com/janpfeifer/gonb") && p != "vaisgplvm/study/nb" {
					t.Errorf("%s imports GoNB (only nb may)", p)
				}
				if !strings.HasPrefix(d, module) {
					continue
				}
				d = strings.TrimPrefix(d, module)
				at, ok := place[d]
				switch {
				case !ok:
					t.Errorf("%s imports %s, which the layer table lacks", p, d)
				case at[0] > r || (at[0] == r && at[1] > place[p][1]):
					t.Errorf("%s imports %s, listed after it: imports must run up the table", p, d)
				}
				if at[0] != r {
					want[trimLib(d)] = true
				}
			}
		}
		got := map[string]bool{}
		for _, u := range row.uses {
			got[u] = true
		}
		for u := range want {
			if !got[u] {
				t.Errorf("layer table row %q: its packages import %s; add it to the row's imports", row.layer, u)
			}
		}
		for u := range got {
			if !want[u] {
				t.Errorf("layer table row %q lists the import %s, which none of its packages has", row.layer, u)
			}
		}
	}
	for d := range goList(t, root, "-deps", "-f", "{{.ImportPath}}", "./vaisgplvm/cmd/vaisgplvm") {
		if strings.Contains(d, "gonb") {
			t.Errorf("the command links %s", d)
		}
	}
	// A plain training never reaches the paper's tables: the command hands table runs a converter.
	if _, ok := goList(t, root, "-deps", "-f", "{{.ImportPath}}", "./vaisgplvm/study/experiment")[module+"vaisgplvm/study/paper"]; ok {
		t.Errorf("experiment depends on paper (go list -deps); it must not")
	}
}

type layerRow struct {
	layer          string
	packages, uses []string // paths as the table writes them, under vaisgplvm/ except data
}

var backticked = regexp.MustCompile("`([^`]+)`")

// layerTable reads the rows of the table whose header starts "| layer | packages |".
func layerTable(t *testing.T, path string) []layerRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []layerRow
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "| layer | packages |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(line, "|")
			if len(cells) < 5 {
				t.Fatalf("layer table row %q: want 4 columns", line)
			}
			row := layerRow{layer: strings.TrimSpace(cells[1])}
			for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
				row.packages = append(row.packages, libPath(m[1]))
			}
			for _, m := range backticked.FindAllStringSubmatch(cells[3], -1) {
				row.uses = append(row.uses, m[1])
			}
			rows = append(rows, row)
		case in:
			in = false
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no layer table", path)
	}
	return rows
}

// libPath maps the table's name of a package to its path in the module (vaisgplvm/... but data).
func libPath(name string) string {
	if name == "data" {
		return name
	}
	return "vaisgplvm/" + name
}

// trimLib is libPath's inverse.
func trimLib(path string) string { return strings.TrimPrefix(path, "vaisgplvm/") }

// goList runs go list in root and returns each output line's first field with the rest.
func goList(t *testing.T, root string, args ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	res := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		res[strings.TrimPrefix(f[0], module)] = slices.Clone(f[1:])
	}
	return res
}

// moduleRoot is the directory of go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
