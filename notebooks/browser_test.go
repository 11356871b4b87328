//go:build unix

package notebooks_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/nb"
)

// browserOrSkip returns the Python that has Selenium ($VAISGPLVM_PYTHON, else /usr/bin/python3) when headless Chromium, its driver and
// Debian's classic Jupyter Notebook server are installed; otherwise it skips, saying how to install
// them, or fails with VAISGPLVM_REQUIRE_BROWSER=1 (as .ci/run sets).
func browserOrSkip(t *testing.T) string {
	t.Helper()
	const how = "apt-get install -y --no-install-recommends chromium chromium-driver jupyter-notebook python3-selenium"
	missing := ""
	for _, f := range []string{"/usr/bin/chromium", "/usr/bin/chromedriver"} {
		if _, err := os.Stat(f); err != nil {
			missing = f
		}
	}
	if err := exec.Command("jupyter", "notebook", "--version").Run(); err != nil {
		missing = "jupyter notebook"
	}
	python := os.Getenv("VAISGPLVM_PYTHON") // Debian's, whose python3-selenium apt installs
	if python == "" {
		python = "/usr/bin/python3"
	}
	if err := exec.Command(python, "-c", "import selenium").Run(); err != nil {
		missing = "python3-selenium (for " + python + ")"
	}
	if missing != "" {
		if os.Getenv("VAISGPLVM_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s not found; install with: %s (VAISGPLVM_REQUIRE_BROWSER=1: the browser test must run here)", missing, how)
		}
		t.Skipf("%s not found; install with: %s: notebook 02 was NOT driven in a browser", missing, how)
	}
	return python
}

// moduleTree returns a directory that is the repository as far as Go and GoNB can tell (its
// top-level entries linked, notebooks/ a real directory holding a copy of the notebook name), so
// that a Jupyter server rooted at its notebooks/ runs the notebook's `go mod edit` against the
// repository and writes nothing into it.
func moduleTree(t *testing.T, name string) string {
	t.Helper()
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir()
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "notebooks" || e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(repo, e.Name()), filepath.Join(tree, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(tree, "notebooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	buf, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "notebooks", name), buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestScheduleLabInBrowser runs notebook 02 as a person would: Debian's Jupyter Notebook server
// with the GoNB kernel (quick mode), headless Chromium driven by Selenium (testdata/browser.py):
// every cell runs, the lab's sliders appear, one slider is clicked and moved with the arrow keys,
// and the lab's table must change. VAISGPLVM_BROWSER_SHOTS=DIR keeps screenshots before and after
// the move.
func TestScheduleLabInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("long (tens of seconds to minutes on 2 cores): skipped under -short; the README's test command runs it")
	}
	python := browserOrSkip(t)
	jupyter, env := kernelEnv(t)
	verboseKernel(t, env)
	const name = "02-beta-schedules-by-hand.ipynb"
	tree := moduleTree(t, name)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	token := fmt.Sprintf("t%d", time.Now().UnixNano())
	server := exec.Command(jupyter, "notebook", "--no-browser", "--allow-root", "--ip=127.0.0.1",
		fmt.Sprintf("--port=%d", port), "--NotebookApp.token="+token, "--notebook-dir="+filepath.Join(tree, "notebooks"))
	// The lab waits up to 120 s for the browser to answer: on 2 busy cores Chromium took more than the
	// default 10 s, and the lab then (rightly) took the run for a headless one.
	// The lab traces its events (nb.LabTraceEnv), for the report of a lab that stops answering.
	trace := filepath.Join(t.TempDir(), "lab.trace")
	server.Env = append(env, "JUPYTER_RUNTIME_DIR="+t.TempDir(), "VAISGPLVM_FRONTEND_WAIT=120", nb.LabTraceEnv+"="+trace)
	// The server's log goes to a file, not a pipe: the kernels it starts inherit it, and Wait would
	// wait for them. The server and its kernels form one process group, ended together.
	logFile, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	server.Stdout, server.Stderr = logFile, logFile
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	api := fmt.Sprintf("http://127.0.0.1:%d/api", port)
	// Jupyter starts each kernel in a session of its own, out of the server's process group: the
	// kernels are shut down through the server first (a GoNB kernel was left running otherwise).
	defer func() {
		shutdownKernels(api, token)
		_ = syscall.Kill(-server.Process.Pid, syscall.SIGKILL)
		_ = server.Wait()
	}()
	log := serverLog(logFile.Name())
	url := fmt.Sprintf("http://127.0.0.1:%d/?token=%s", port, token)
	for start := time.Now(); ; time.Sleep(250 * time.Millisecond) {
		if resp, err := http.Get(api + "/status?token=" + token); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(start) > 60*time.Second {
			t.Fatalf("the Jupyter server did not answer in 60 s:\n%s", tail(log(), 3000))
		}
	}
	cmd := exec.Command(python, "testdata/browser.py", url, name, os.Getenv("VAISGPLVM_BROWSER_SHOTS"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var r struct {
		OK      bool     `json:"ok"`
		Why     string   `json:"why"`
		Ready   *float64 `json:"seconds_to_sliders"`
		Latency *float64 `json:"latency_s"`
		Before  string   `json:"before"`
		After   string   `json:"after"`
		Clicks  int      `json:"stop_clicks"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("browser.py: %v (%v)\n%s\n%s\nserver:\n%s", err, runErr, out, tail(stderr.String(), 3000), tail(log(), 3000))
	}
	if !r.OK {
		t.Fatalf("browser.py: %s\nlab trace (%s, the cell program's goroutines at the end):\n%s\nserver (GoNB's comms at -v 2):\n%s",
			r.Why, nb.LabTraceEnv, tail(labTrace(trace), 12000), tail(log(), 6000))
	}
	t.Logf("sliders shown %.0f s after Run All; the table changed %.2f s after the slider moved; the cell ended after %d click(s) on Stop",
		*r.Ready, *r.Latency, r.Clicks)
	if r.Clicks > 1 {
		t.Logf("Stop was pressed %d times; lab trace:\n%s", r.Clicks, tail(labTrace(trace), 3000))
	}
	if r.Before == r.After || !strings.Contains(r.Before, "this setting") || !strings.Contains(r.After, "this setting") {
		t.Errorf("the lab's table did not change as a slider moved:\nbefore %.500q\nafter %.500q", r.Before, r.After)
	}
}

// labTrace returns the lab's trace (nb.LabTraceEnv) after asking the cell program that wrote it for
// its goroutines' stacks (SIGUSR1 to the pid on its first line).
func labTrace(path string) string {
	var pid int
	if _, after, ok := strings.Cut(readFile(path), "pid="); ok {
		fmt.Sscan(after, &pid)
	}
	if pid > 0 && syscall.Kill(pid, syscall.SIGUSR1) == nil {
		time.Sleep(2 * time.Second)
	}
	return readFile(path)
}

// verboseKernel raises the GoNB kernel's logging of its channel to the browser (comms.go at level
// 1, namedpipes.go, which delivers the browser's values to the cell program, at 2) in the
// kernel.json that kernelEnv installed, so that the server's log shows what the kernel passed on.
func verboseKernel(t *testing.T, env []string) {
	t.Helper()
	var dir string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "JUPYTER_DATA_DIR="); ok {
			dir = v
		}
	}
	path := filepath.Join(dir, "kernels", "gonb", "kernel.json")
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(buf), `"-vmodule="`) {
		t.Fatalf("%s: no -vmodule= argument to raise:\n%s", path, buf)
	}
	buf = []byte(strings.Replace(string(buf), `"-vmodule="`, `"-vmodule=comms=1,namedpipes=2"`, 1))
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// shutdownKernels asks the Jupyter server at api to shut down each of its kernels.
func shutdownKernels(api, token string) {
	resp, err := http.Get(api + "/kernels?token=" + token)
	if err != nil {
		return
	}
	var kernels []struct {
		ID string `json:"id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&kernels)
	resp.Body.Close()
	if err != nil {
		return
	}
	for _, k := range kernels {
		req, err := http.NewRequest(http.MethodDelete, api+"/kernels/"+k.ID+"?token="+token, nil)
		if err != nil {
			continue
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// serverLog returns a function that reads the server's log file so far.
func serverLog(path string) func() string {
	return func() string { return readFile(path) }
}
