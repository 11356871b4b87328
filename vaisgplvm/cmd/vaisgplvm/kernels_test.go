package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/backend"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
)

// TestKernelOverride runs the command as a process under each matrix-kernel family this build can
// run, forced by VAISGPLVM_MATMUL: every run's first line names the family and that it was forced,
// and their -ELBO agree to 1e-9 relative (VAIS, 3 iterations); a family the build cannot run is a
// usage error (exit 2). In a build without GOEXPERIMENT=simd only the portable kernels exist.
func TestKernelOverride(t *testing.T) {
	dir, base, _ := trainedSetup(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"VAISGPLVM_TEST_MAIN=1", data.EnvVar + "=", "HOME=" + dir}
	for _, e := range os.Environ() {
		if n, _, _ := strings.Cut(e, "="); n != backend.MatMulEnv && n != backend.AVX512Env && n != backend.AVX2Env && n != backend.ChoiceEnv && n != experiment.AppliedEnv {
			env = append(env, e)
		}
	}
	first := math.NaN()
	for _, k := range backend.Available() {
		out := filepath.Join(dir, "k-"+k)
		cmd := exec.Command(exe, "train", "--data", base, "--method", "vais", "--m", "5", "--k", "2", "--iters", "3", "--quiet", "--no-figures", "--out", out)
		cmd.Env = append(env, backend.ChoiceEnv+"="+k)
		msg, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", k, err, msg)
		}
		if line := strings.SplitN(string(msg), "\n", 2)[0]; !strings.Contains(line, "matrix kernels: "+k+" (forced by "+backend.ChoiceEnv) {
			t.Errorf("%s: first line %q", k, line)
		}
		var met experiment.Metrics
		buf, _ := os.ReadFile(filepath.Join(out, "metrics.json"))
		if err := json.Unmarshal(buf, &met); err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(first) {
			first = met.Eval.NegELBO
		} else if math.Abs(met.Eval.NegELBO-first) > 1e-9*math.Abs(first) {
			t.Errorf("%s: -ELBO %.15g, the %s kernels' %.15g", k, met.Eval.NegELBO, backend.Available()[0], first)
		}
	}
	missing := "avx512"
	if len(backend.Available()) == 3 {
		missing = "sse" // every real family is available: a name that is none
	}
	cmd := exec.Command(exe, "train", "--data", base, "--method", "mf", "--iters", "2", "--quiet", "--out", filepath.Join(dir, "bad"))
	cmd.Env = append(env, backend.ChoiceEnv+"="+missing)
	msg, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(msg), backend.ChoiceEnv) {
		t.Errorf("%s=%s: %v, %s; want exit 2 naming the variable", backend.ChoiceEnv, missing, err, msg)
	}
}
