package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/paper"
)

// ownFile writes the header and the first n rows of the embedded oil-flow CSV to dir/name.
func ownFile(t *testing.T, dir, name string, n int) string {
	t.Helper()
	buf, err := data.Read(data.OilflowData)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(buf), "\n", n+2)[:n+1]
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunRefuses checks the request before any training: From naming Out itself (an *option.Error
// about From and Out), a From without trainings (an *option.Failure about From), an unknown
// table, and a Checkpoints that is a file (an *option.Error about Checkpoints). Nothing is written.
func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name   string
		r      Request
		fields []string // of the *option.Error, or of the *option.Failure when failure
		fail   bool
	}{
		{"from is out", Request{Table: 1, Out: out, From: out}, []string{"From", "Out"}, false},
		{"from without jobs", Request{Table: 1, Out: out, From: dir}, []string{"From"}, true},
		{"checkpoints a file", Request{Table: 1, Out: out, Checkpoints: file, Options: &paper.Table1Options{Options: paper.Options{Runs: 1}, Trainings: paper.Trainings{Jobs: 1}}}, []string{"Checkpoints"}, false},
	} {
		_, d, err := Run(context.Background(), c.r)
		var oe *option.Error
		var of *option.Failure
		switch {
		case d != nil:
			t.Errorf("%s: opened the output directory before refusing", c.name)
		case !c.fail && (!errors.As(err, &oe) || strings.Join(oe.Fields, ",") != strings.Join(c.fields, ",")):
			t.Errorf("%s: error %v (%T), want an *option.Error about %v", c.name, err, err, c.fields)
		case c.fail && (!errors.As(err, &of) || strings.Join(of.Fields, ",") != strings.Join(c.fields, ",")):
			t.Errorf("%s: error %v (%T), want an *option.Failure about %v", c.name, err, err, c.fields)
		}
	}
	if _, _, err := Run(context.Background(), Request{Table: 4, Out: out}); err == nil {
		t.Error("table 4 (not a registered table) ran")
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused request left %s behind (%v)", out, err)
	}
}

// TestRunOwnData runs table 1 on a 40-row file for 3 iterations of MF: tableN.md and tableN.json
// are written and committed in Out, the table records the command and the data file, FitData sees
// the file's N and D, and the trainings are stored under Out/jobs; a second run of the same
// request reads them back (the store) and gives the same -ELBO; a cancelled context returns the
// interrupted error that names the store.
func TestRunOwnData(t *testing.T) {
	dir := t.TempDir()
	path := ownFile(t, dir, "mine.csv", 40)
	out := filepath.Join(dir, "t1")
	var n, d int
	req := Request{Table: 1, Out: out, Data: &experiment.Source{File: path},
		FitData: func(rows, cols int) error { n, d = rows, cols; return nil },
		Options: &paper.Table1Options{Options: paper.Options{Runs: 1, Iters: 3, Methods: []string{"mf"}, Log: io.Discard,
			Configure: func(c *model.Config) error { c.M, c.Q, c.Batch = 5, 2, 0; return nil }}, Trainings: paper.Trainings{Jobs: 1}},
		Command: []string{"reproduce", "--table", "1", "--data", path}}
	res, written, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if n != 40 || d != 12 {
		t.Errorf("FitData saw N %d, D %d; want 40, 12", n, d)
	}
	for _, f := range []string{"table1.md", "table1.json"} {
		if !strings.Contains(strings.Join(written.Written(), " "), f) {
			t.Errorf("%s not among the files written: %v", f, written.Written())
		}
	}
	var stored struct {
		Settings map[string]any `json:"settings"`
	}
	buf, err := os.ReadFile(filepath.Join(out, "table1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf, &stored); err != nil {
		t.Fatal(err)
	}
	if cmd, _ := stored.Settings["command"].(string); !strings.Contains(cmd, "reproduce --table 1 --data") {
		t.Errorf("table1.json's command %q, want the request's", cmd)
	}
	if f, _ := stored.Settings["data_file"].(string); f != path {
		t.Errorf("table1.json's data_file %q, want %q", f, path)
	}
	if _, err := os.Stat(filepath.Join(out, "jobs")); err != nil {
		t.Errorf("no store of trainings in Out: %v", err)
	}
	again, _, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := withoutMade(res.Markdown()), withoutMade(again.Markdown()); a != b {
		t.Errorf("the rerun from the store made another table:\n%s\n%s", a, b)
	}
	if !strings.Contains(again.Markdown(), "1 of 1 read back") {
		t.Errorf("the rerun did not read its training from the store:\n%s", again.Markdown())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req.Fresh = true
	_, _, err = Run(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "interrupted: no table written to "+out) || !strings.Contains(err.Error(), filepath.Join(out, "jobs")) {
		t.Errorf("a cancelled run returned %v; want the interrupted error naming %s and its store", err, out)
	}
}

// withoutMade drops the lines that say how a table was made (its timings and store).
func withoutMade(md string) string {
	var keep []string
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "Made with") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
