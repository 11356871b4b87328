package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
)

// TestOutputsSayHowTheyWereMade: metrics.json, infer.json, evidence.json and cmf.json each record
// the resolved configuration and how they were made (the command line, the commit, the machine);
// metrics.json also the data's source with its sha256 and the content trained on. Every command
// says where it wrote its files, and evidence says how far its AIS runs are.
func TestOutputsSayHowTheyWereMade(t *testing.T) {
	t.Setenv(data.EnvVar, "")
	dir := t.TempDir()
	file, _ := ownData(t, dir, 40)
	runDir := filepath.Join(dir, "run")
	var stderr bytes.Buffer
	mustRun := func(args ...string) {
		t.Helper()
		stderr.Reset()
		code, printed := runPrinting(t, args)
		stderr.WriteString(printed)
		if code != 0 {
			t.Fatalf("%v exited %d: %s", args, code, stderr.String())
		}
		out := args[len(args)-1] // every call below ends with --out DIR
		if !strings.Contains(stderr.String(), "wrote "+out+": ") {
			t.Errorf("%s did not say where it wrote its files (want \"wrote %s: ...\"):\n%s", args[0], out, stderr.String())
		}
	}
	type made struct {
		Provenance struct {
			Command, Commit, Machine string
		} `json:"provenance"`
	}
	read := func(path string, v any) {
		t.Helper()
		buf, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(buf, v)
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	checkMade := func(name, cmd string, m made) {
		t.Helper()
		if !strings.HasPrefix(m.Provenance.Command, "vaisgplvm "+cmd+" ") || m.Provenance.Commit == "" || !strings.Contains(m.Provenance.Machine, "logical CPUs") {
			t.Errorf("%s provenance %+v, want the %s command line, a commit and the machine", name, m.Provenance, cmd)
		}
	}

	mustRun("train", "--data", file, "--labels", "kind", "--standardize", "--method", "vais", "--m", "6", "--k", "3", "--iters", "4",
		"--no-figures", "--quiet", "--out", runDir)
	var met struct {
		made
		Config struct {
			M, K   int
			Method string
		} `json:"config"`
		Source struct {
			File, SHA256, Labels string
			Standardized         bool `json:"standardized"`
		} `json:"source"`
		Content string `json:"data_content_sha256"`
	}
	read(filepath.Join(runDir, "metrics.json"), &met)
	checkMade("metrics.json", "train", met.made)
	sum, err := data.SHA256(file)
	abs, _ := filepath.Abs(file)
	if err != nil || met.Source.File != abs || met.Source.SHA256 != sum || met.Source.Labels != "kind" || !met.Source.Standardized {
		t.Errorf("metrics.json source %+v, want %s with sha256 %s, labels kind, standardized (%v)", met.Source, abs, sum, err)
	}
	if len(met.Content) != 64 || met.Config.M != 6 || met.Config.K != 3 || met.Config.Method != "vais" {
		t.Errorf("metrics.json: content sha256 %q, config %+v", met.Content, met.Config)
	}

	ck := filepath.Join(runDir, "checkpoint.gob")
	mustRun("infer", "--checkpoint", ck, "--data", file, "--iters", "2", "--out", filepath.Join(dir, "inf"))
	var inf struct {
		made
		Options struct{ Iters int } `json:"options"`
	}
	read(filepath.Join(dir, "inf", "infer.json"), &inf)
	checkMade("infer.json", "infer", inf.made)
	if inf.Options.Iters != 2 {
		t.Errorf("infer.json options %+v, want iters 2", inf.Options)
	}

	mustRun("evidence", "--checkpoint", ck, "--temps", "20", "--runs", "2", "--draws", "2", "--points", "5", "--out", filepath.Join(dir, "ev"))
	var ev struct {
		made
		Config struct{ Method string } `json:"config"`
		Temps  int                     `json:"temperatures"`
	}
	for _, stage := range []string{"pilot", "main", "check main"} { // the last temperature of each stage is always said
		if want := "evidence: " + stage + " AIS, temperature"; !strings.Contains(stderr.String(), want) {
			t.Errorf("evidence's progress lacks %q:\n%s", want, stderr.String())
		}
	}
	read(filepath.Join(dir, "ev", "evidence.json"), &ev)
	checkMade("evidence.json", "evidence", ev.made)
	if ev.Config.Method != "vais" || ev.Temps != 20 {
		t.Errorf("evidence.json: config method %q, temperatures %d; want vais, 20", ev.Config.Method, ev.Temps)
	}

	cmfDir := filepath.Join(dir, "cmf")
	mustRun("cmf", "--dataset", "frey", "--iters", "3", "--fit-iters", "2", "--test", "20", "--ks", "1,2", "--draws", "2",
		"--ais-points", "2", "--ais-temps", "3", "--ais-runs", "2", "--hidden", "10", "--aux-hidden", "10", "--m", "5", "--latent-dim", "2",
		"--families", "cmf,meanfield", "--quiet", "--no-figures", "--out", cmfDir)
	var cm struct {
		made
		Options struct {
			Iters     int
			Families  []string
			WarmStart *bool `json:"warm_start"`
		} `json:"options"`
	}
	read(filepath.Join(cmfDir, "cmf.json"), &cm)
	checkMade("cmf.json", "cmf", cm.made)
	if cm.Options.Iters != 3 || len(cm.Options.Families) != 2 || cm.Options.WarmStart == nil || !*cm.Options.WarmStart {
		t.Errorf("cmf.json options %+v, want iters 3, two families and warm_start true (the default with cmf and meanfield)", cm.Options)
	}
}

// runPrinting runs the command with os.Stderr (where progress and "wrote" lines go) and run's own
// error writer captured, and returns the exit status and all that was printed there.
func runPrinting(t *testing.T, args []string) (int, string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = f
	code := run(args, f)
	os.Stderr = saved
	buf, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(buf)
}
