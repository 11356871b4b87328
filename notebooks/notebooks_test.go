// Package notebooks_test executes every notebook in this directory with Jupyter's nbconvert and the
// GoNB kernel (both pinned: GoNB and goimports are tool lines in go.mod and built here), in quick
// mode ($VAISGPLVM_QUICK=1), and fails on a cell error, a panic or non-zero exit in any output,
// or a missing figure / table output. The executed copies go to a temporary directory: the
// committed notebooks keep their full-size outputs.
//
// Needs Debian's jupyter-nbconvert, python3-nbclient and jupyter-client; without them the test
// skips and says how to install them, or fails with VAISGPLVM_REQUIRE_JUPYTER=1 (as .ci/run sets,
// so that CI never reports the notebooks as passing without having run them).
package notebooks_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/nb"
)

// wants lists the output MIME types each notebook must produce.
var wants = map[string][]string{
	"00-tour.ipynb":                         {"image/png", "text/html"},
	"01-annealed-importance-sampling.ipynb": {"image/png", "text/html"},
	"02-beta-schedules-by-hand.ipynb":       {"image/png", "text/html"},
	"03-table1-oilflow-wine.ipynb":          {"image/png", "text/html"},
	"04-table2-frey-mnist.ipynb":            {"image/png", "text/html"},
	"05-table3-ess.ipynb":                   {"image/png", "text/html"},
	"06-table5-standard-gplvm.ipynb":        {"image/png", "text/html"},
	"07-table6-runtime.ipynb":               {"image/png", "text/html"},
	"08-gplvm-cmf.ipynb":                    {"image/png", "text/html"},
}

func TestNotebooksExecute(t *testing.T) {
	if testing.Short() {
		t.Skip("long (tens of seconds to minutes on 2 cores): skipped under -short; the README's test command runs it")
	}
	jupyter, env := kernelEnv(t)
	files, err := filepath.Glob("*.ipynb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no notebooks found (%v)", err)
	}
	sort.Strings(files)
	for _, f := range files {
		if _, ok := wants[f]; !ok {
			t.Errorf("%s: not listed in wants (add its expected outputs)", f)
		}
	}
	tmp := t.TempDir()
	for _, f := range files {
		t.Run(strings.TrimSuffix(f, ".ipynb"), func(t *testing.T) {
			out := filepath.Join(tmp, f)
			start := time.Now()
			cmd := exec.Command(jupyter, "nbconvert", "--to", "notebook", "--execute",
				"--ExecutePreprocessor.timeout=900", "--output", out, f)
			cmd.Env = env
			if log, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("nbconvert: %v\n%s", err, tail(string(log), 3000))
			}
			t.Logf("%s: %.0f s in quick mode", f, time.Since(start).Seconds())
			probs, err := problems(out, wants[f])
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range probs {
				t.Error(p)
			}
		})
	}
}

// jupyterOrSkip returns the jupyter command when Jupyter's nbconvert is installed; otherwise it
// skips the test, saying how to install it and what did not run (notRun), or fails it with
// VAISGPLVM_REQUIRE_JUPYTER=1 (as .ci/run sets).
func jupyterOrSkip(t *testing.T, notRun string) string {
	t.Helper()
	jupyter, err := exec.LookPath("jupyter")
	if err != nil || exec.Command(jupyter, "nbconvert", "--version").Run() != nil {
		const how = "Jupyter nbconvert not found; install it with: apt-get install -y --no-install-recommends jupyter-nbconvert python3-nbclient jupyter-client"
		if os.Getenv("VAISGPLVM_REQUIRE_JUPYTER") == "1" {
			t.Fatal(how + " (VAISGPLVM_REQUIRE_JUPYTER=1: it must run here)")
		}
		t.Skip(how + ": " + notRun)
	}
	return jupyter
}

// kernelEnv returns the jupyter command and an environment in which GoNB (built here from go.mod's
// tool lines, with goimports) is installed as a Jupyter kernel in a temporary directory, in quick
// mode. Without Jupyter it skips, saying so, or fails with VAISGPLVM_REQUIRE_JUPYTER=1.
func kernelEnv(t *testing.T) (string, []string) {
	t.Helper()
	jupyter := jupyterOrSkip(t, "the notebooks were NOT executed")
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	build := exec.Command("go", "build", "-o", bin+"/", "github.com/janpfeifer/gonb", "golang.org/x/tools/cmd/goimports")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building gonb and goimports from go.mod's tool lines: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"JUPYTER_DATA_DIR="+filepath.Join(tmp, "jupyter"), "VAISGPLVM_QUICK=1",
		// As README's jupyter line: with GoMLX's AVX-512 matrix kernels notebook 02's lab never
		// redraws after its slider moves (TestScheduleLabWidgets times out on an AVX-512 CPU; it
		// passes in 31 s without them). Not yet understood; the kernels stay off for the notebooks.
		"GOMLX_SIMD_AVX512=false")
	install := exec.Command(filepath.Join(bin, "gonb"), "--install", "--force_deps")
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("gonb --install: %v\n%s", err, out)
	}
	return jupyter, env
}

// problems lists the error outputs, panics or non-zero exits in stream outputs, and missing MIME
// types of an executed notebook.
func problems(path string, want []string) ([]string, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var nb struct {
		Cells []struct {
			Outputs []struct {
				OutputType string                     `json:"output_type"`
				Text       json.RawMessage            `json:"text"`
				Data       map[string]json.RawMessage `json:"data"`
				EName      string                     `json:"ename"`
				EValue     string                     `json:"evalue"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(buf, &nb); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var probs []string
	seen := map[string]bool{}
	for i, c := range nb.Cells {
		for _, o := range c.Outputs {
			if o.OutputType == "error" {
				probs = append(probs, fmt.Sprintf("cell %d: error %s: %s", i, o.EName, o.EValue))
			}
			text := streamText(o.Text)
			for _, bad := range []string{"panic:", "exit status"} {
				if strings.Contains(text, bad) {
					probs = append(probs, fmt.Sprintf("cell %d: output contains %q:\n%s", i, bad, tail(text, 2000)))
				}
			}
			for mime, v := range o.Data {
				if strings.TrimSpace(streamText(v)) != "" { // an emptied transient display does not count
					seen[mime] = true
				}
			}
		}
	}
	for _, w := range want {
		if !seen[w] {
			probs = append(probs, fmt.Sprintf("no %s output", w))
		}
	}
	return probs, nil
}

// TestProblemsCatchesFailures: a panic in a stream, an error output and a missing figure are each
// reported; a clean notebook with the wanted outputs is not.
func TestProblemsCatchesFailures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, cells string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`{"cells": [`+cells+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.ipynb", `{"outputs": [{"output_type": "display_data", "data": {"image/png": "iVBOR"}}, {"output_type": "stream", "text": ["ok\n"]}]}`)
	if p, err := problems(good, []string{"image/png"}); err != nil || len(p) != 0 {
		t.Errorf("clean notebook: %v %v", p, err)
	}
	bad := write("bad.ipynb", `{"outputs": [{"output_type": "stream", "text": ["panic: boom\n", "exit status 2\n"]}, {"output_type": "error", "ename": "E", "evalue": "v"}, {"output_type": "display_data", "data": {"text/html": [""]}}]}`)
	p, err := problems(bad, []string{"image/png", "text/html"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 5 { // panic, exit status, error output, no image/png, no (non-empty) text/html
		t.Errorf("got %d problems, want 5: %q", len(p), p)
	}
}

func streamText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	_ = json.Unmarshal(raw, &lines)
	return strings.Join(lines, "")
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// TestNotebooksCallThePackage: the table notebooks (03-07) call package paper directly: no notebook runs a
// command (go run, os/exec) or declares its own copy of a table's row type.
func TestNotebooksCallThePackage(t *testing.T) {
	files, err := filepath.Glob("*.ipynb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no notebooks found (%v)", err)
	}
	for _, f := range files {
		cells, err := codeCells(f)
		if err != nil {
			t.Fatal(err)
		}
		src := strings.Join(cells, "")
		for _, bad := range []string{"go run", `"os/exec"`, "json.Unmarshal", "Rows    []struct", "Rows []struct"} {
			if strings.Contains(src, bad) {
				t.Errorf("%s: a code cell contains %q; call the library (package paper) instead", f, bad)
			}
		}
		if strings.HasPrefix(f, "0") && f >= "03" && f < "08" && !strings.Contains(src, "paper.Table") {
			t.Errorf("%s: a table notebook that does not call paper.TableN", f)
		}
	}
}

// TestScheduleLabWidgets drives notebook 02's lab sliders through the GoNB kernel with a stand-in
// for the browser (testdata/frontend.py: it opens GoNB's channel, answers heartbeats and sends the
// values a browser's widgets would), in quick mode and with its own temporary directory: every code
// cell of the notebook runs in order, the last one (nb.Lab) shows the trained chain's view, the
// stand-in moves the beta_1 slider, the view is redrawn for the new schedule, and Stop ends the cell
// with that view left in its output. The widgets' own JavaScript does not run here.
func TestScheduleLabWidgets(t *testing.T) {
	if testing.Short() {
		t.Skip("long (tens of seconds to minutes on 2 cores): skipped under -short; the README's test command runs it")
	}
	jupyter, env := kernelEnv(t)
	python, err := interpreter(jupyter)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cells, err := codeCells("02-beta-schedules-by-hand.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cells[len(cells)-1], "nb.Lab(") {
		t.Fatalf("the last code cell of notebook 02 is not the lab with sliders:\n%s", cells[len(cells)-1])
	}
	args := []string{"testdata/frontend.py"}
	for i, c := range cells {
		f := filepath.Join(tmp, fmt.Sprintf("cell%02d.go", i))
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, f)
	}
	cmd := exec.Command(python, args...)
	trace := filepath.Join(tmp, "lab.trace")
	cmd.Env = append(env, "TMPDIR="+tmp, "FRONTEND_TIMEOUT=600", nb.LabTraceEnv+"="+trace)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var r struct {
		OK      bool     `json:"ok"`
		Why     string   `json:"why"`
		Latency *float64 `json:"latency_s"`
		Shown   []string `json:"shown"`
		Final   string   `json:"final"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("frontend.py: %v (%v)\n%s\n%s", err, runErr, out, tail(stderr.String(), 3000))
	}
	if !r.OK {
		t.Fatalf("frontend.py: %s\nshown: %q\n%s\nlab trace (%s):\n%s", r.Why, r.Shown, tail(stderr.String(), 3000), nb.LabTraceEnv, tail(readFile(trace), 12000))
	}
	t.Logf("the view was redrawn %.2f s after the slider moved (quick mode: 10 points)", *r.Latency)
	if len(r.Shown) != 2 || !strings.Contains(r.Shown[0], "this setting") || r.Shown[0] == r.Shown[1] || r.Final != r.Shown[1] {
		t.Errorf("want the trained view, then a redrawn one left as the final output; got %d views, final %.200q", len(r.Shown), r.Final)
	}
	// beta_1's slider went to position 31 of 1..99 (0.01 + 30/98 * 0.98 = 0.31): the moved view lists it.
	if !strings.Contains(r.Shown[1], "0.31") {
		t.Errorf("the redrawn view does not show beta_1 = 0.31: %.600q", stripImages(r.Shown[1]))
	}
}

// readFile returns a file's text, or why there is none.
func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return string(b)
}

// interpreter is the Python that runs jupyter (its #! line), which has jupyter_client.
func interpreter(jupyter string) (string, error) {
	buf, err := os.ReadFile(jupyter)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(buf), "\n")
	if !strings.HasPrefix(line, "#!") {
		return "", fmt.Errorf("%s has no #! line", jupyter)
	}
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 2 && filepath.Base(fields[0]) == "env" {
		return exec.LookPath(fields[1])
	}
	return fields[0], nil
}

// codeCells returns the code cells of a notebook, in order.
func codeCells(path string) ([]string, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var nb struct {
		Cells []struct {
			CellType string          `json:"cell_type"`
			Source   json.RawMessage `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(buf, &nb); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var cells []string
	for _, c := range nb.Cells {
		if c.CellType == "code" {
			cells = append(cells, streamText(c.Source))
		}
	}
	return cells, nil
}

// stripImages drops inline PNGs from HTML, for messages.
func stripImages(h string) string {
	for {
		i := strings.Index(h, "data:image/png;base64,")
		if i < 0 {
			return h
		}
		j := strings.Index(h[i:], `"`)
		if j < 0 {
			return h[:i]
		}
		h = h[:i] + "IMG" + h[i+j:]
	}
}

// TestReadmeNotebookSetup runs the README's notebook setup lines (its sh block under "To run
// them", all but the line that starts the Jupyter server) as written, with bash, from the clone's
// root in an empty HOME (Go's module and build caches kept, so nothing is downloaded): GoNB and
// goimports land in ~/go/bin and the GoNB kernel in HOME's Jupyter data directory.
func TestReadmeNotebookSetup(t *testing.T) {
	jupyterOrSkip(t, "the README's notebook setup was NOT run")
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "To run them")
	if ok {
		_, after, ok = strings.Cut(after, "```sh\n")
	}
	block, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no sh block under \"To run them\"")
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if strings.TrimSpace(l) == "" || strings.Contains(l, "jupyter lab") {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) < 3 || !strings.Contains(block, "--force_deps") || !strings.Contains(block, "PATH") {
		t.Fatalf("README's setup block lacks the build, PATH or gonb --install --force_deps lines:\n%s", block)
	}
	home := t.TempDir()
	var path []string // PATH without any directory that already has a gonb: the README must put it there
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "gonb")); err != nil {
			path = append(path, d)
		}
	}
	env := []string{"HOME=" + home, "PATH=" + strings.Join(path, string(os.PathListSeparator))}
	for _, v := range []string{"GOMODCACHE", "GOCACHE", "GOPROXY", "GOFLAGS", "GOTOOLCHAIN"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(lines, "\n"))
	cmd.Dir, cmd.Env = "..", env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's setup lines failed: %v\n%s\n%s", err, strings.Join(lines, "\n"), tail(string(out), 3000))
	}
	for _, f := range []string{"go/bin/gonb", "go/bin/goimports", ".local/share/jupyter/kernels/gonb/kernel.json"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Errorf("after the README's setup: %v", err)
		}
	}
}
