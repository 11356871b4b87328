package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// commands lists the commands whose flags docs/flags.md documents, in the order of the usage line.
var commands = map[string]func([]string) error{
	"train": runTrain, "reproduce": runReproduce, "bench": runBench, "infer": runInfer,
	"evidence": runEvidence, "cmf": runCMF, "pair": runPair,
}

var commandOrder = []string{"train", "reproduce", "bench", "infer", "evidence", "cmf", "pair"}

// flagsReference renders every command's flags, as COMMAND -h prints them, as Markdown tables.
// Machine-dependent defaults (reproduce --jobs: the number of CPUs) are written as such.
func flagsReference(t *testing.T) string {
	var b strings.Builder
	b.WriteString("# Every flag of every command\n\n")
	b.WriteString("Generated from the commands' flag sets by `VAISGPLVM_UPDATE_DOCS=1 go test ./vaisgplvm/cmd/vaisgplvm -run TestFlagsReference`;\n")
	b.WriteString("the test fails when this page differs from what the flags say. What the commands do and write:\n[options.md](options.md). A boolean flag is set by `--name` and cleared by `--name=false`.\n")
	for _, name := range commandOrder {
		var out bytes.Buffer
		helpOut = &out
		err := commands[name]([]string{"-h"})
		helpOut = nil
		if !errors.Is(err, errHelp) {
			t.Fatalf("%s -h: %v, want the help", name, err)
		}
		fmt.Fprintf(&b, "\n## vaisgplvm %s\n\n| flag | value | default | meaning |\n|---|---|---|---|\n", name)
		for _, f := range parseDefaults(t, out.String()) {
			if name == "reproduce" && f.name == "jobs" {
				f.def = "the number of CPUs"
			}
			fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n", f.name, f.kind, cell(f.def), cell(f.usage))
		}
	}
	return b.String()
}

type flagDoc struct{ name, kind, def, usage string }

var (
	flagLine = regexp.MustCompile(`^  -(\S+)(?: (\S+))?$`)
	defTail  = regexp.MustCompile(` \(default (.*)\)$`)
)

// parseDefaults reads flag.PrintDefaults's output: "  -name type" lines, each followed by usage
// lines indented by a tab, the last ending in "(default VALUE)" when the default is not the zero
// value.
func parseDefaults(t *testing.T, s string) []flagDoc {
	var fs []flagDoc
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n")[1:] {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			kind := m[2]
			if kind == "" {
				kind = "bool"
			}
			fs = append(fs, flagDoc{name: m[1], kind: kind})
			continue
		}
		if len(fs) == 0 || !strings.HasPrefix(line, "    \t") {
			t.Fatalf("unexpected line in the flags' help: %q", line)
		}
		f := &fs[len(fs)-1]
		f.usage = strings.TrimSpace(f.usage + " " + strings.TrimSpace(line))
	}
	for i := range fs {
		if m := defTail.FindStringSubmatch(fs[i].usage); m != nil {
			fs[i].def, fs[i].usage = m[1], strings.TrimSuffix(fs[i].usage, m[0])
		}
	}
	return fs
}

func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// TestFlagsReference fails when docs/flags.md is not what the flag sets generate, naming the
// command that rewrites it.
func TestFlagsReference(t *testing.T) {
	want := flagsReference(t)
	path := filepath.Join("..", "..", "..", "docs", "flags.md")
	if os.Getenv("VAISGPLVM_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("docs/flags.md is stale: rewrite it with VAISGPLVM_UPDATE_DOCS=1 go test ./vaisgplvm/cmd/vaisgplvm -run TestFlagsReference")
	}
	for _, name := range commandOrder {
		if !strings.Contains(want, "## vaisgplvm "+name+"\n") {
			t.Fatalf("no section for %s", name)
		}
	}
}
