package experiment

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
)

// Provenance says how a result was made, for its JSON: the command line (args, after the program
// name), the source commit (the build's VCS stamp; in a `go run` build, which has none, the
// working tree's `git rev-parse HEAD`, marked "+modified" when `git status` lists changes) and the
// machine (OS, architecture, CPU model, logical CPUs, Go version and experiments, the pure-Go
// backend's matrix kernels: backend.MatMulKernels). The commit is
// read once per process, at the first Provenance or PinProvenance call.
func Provenance(args []string) map[string]any {
	return map[string]any{
		"command": "vaisgplvm " + strings.Join(args, " "),
		"commit":  startCommit(),
		"machine": machine(),
	}
}

// startCommit returns readCommit's answer, read once per process.
func startCommit() string {
	pinOnce.Do(func() { pinned = readCommit() })
	return pinned
}

var (
	pinOnce    sync.Once
	pinned     string
	readCommit = commit // replaced by the test
)

// PinProvenance reads the source revision now, so that a long run's Provenance names the commit it
// started from: a `go run` build reads it from the working tree, which may move on while the run
// lasts. Commands call it before any work.
func PinProvenance() { startCommit() }

// commit returns the source revision ("unknown" when neither the build nor git says).
func commit() string {
	rev, modified := "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if rev == "" {
		out, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			return "unknown"
		}
		rev = strings.TrimSpace(string(out))
		st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
		modified = err == nil && len(strings.TrimSpace(string(st))) > 0
	}
	if modified {
		rev += "+modified"
	}
	return rev
}

// machine describes the computer the run is on.
func machine() string {
	cpu := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	exp := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOEXPERIMENT" && s.Value != "" {
				exp = ", GOEXPERIMENT=" + s.Value
			}
		}
	}
	return strings.Join([]string{runtime.GOOS + "/" + runtime.GOARCH, cpu, strconv.Itoa(runtime.NumCPU()) + " logical CPUs", runtime.Version() + exp, "pure-Go matrix kernels " + backend.MatMulKernels()}, ", ")
}

// ResumeArgs returns a train command's arguments args (after "train") with --resume ckpt in place
// of any --resume given: the command line that resumes an interrupted run from its checkpoint ckpt.
func ResumeArgs(args []string, ckpt string) string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--resume" || a == "-resume" {
			i++
			continue
		}
		if strings.HasPrefix(a, "--resume=") || strings.HasPrefix(a, "-resume=") {
			continue
		}
		out = append(out, a)
	}
	return strings.Join(append(out, "--resume", ckpt), " ")
}
