package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadmeCommands runs the README's command lines in the order it gives them, in a fresh
// directory with an empty HOME, as a new user following it literally would (with its cells.csv
// and new.csv made by the test): the two main commands, the three "your own data" lines and the
// resume it describes in words. Only the length is cut (--iters, and --runs for Table 1) so that
// the test takes seconds; every other flag is the README's. Each must exit 0.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("long (tens of seconds to minutes on 2 cores): skipped under -short; the README's test command runs it")
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]string
	const prog = "go run ./vaisgplvm/cmd/vaisgplvm "
	inBlock := false
	for _, l := range strings.Split(string(readme), "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			inBlock = !inBlock
		case inBlock && strings.HasPrefix(l, prog):
			cmd, _, _ := strings.Cut(strings.TrimPrefix(l, prog), "#")
			lines = append(lines, strings.Fields(cmd))
		}
	}
	// The resume the README gives in its text, after the lines above.
	_, after, ok := strings.Cut(string(readme), "`train --resume ")
	resume, _, ok2 := strings.Cut(after, "`")
	if !ok || !ok2 {
		t.Fatal("README.md no longer shows `train --resume ...`: update this test")
	}
	lines = append(lines, append([]string{"train", "--resume"}, strings.Fields(resume)...))
	if len(lines) < 6 {
		t.Fatalf("README.md has %d command lines, want the two main commands, the three on your own data and the resume: %v", len(lines), lines)
	}

	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", t.TempDir())
	cells, _ := ownData(t, dir, 60)
	buf, err := os.ReadFile(cells)
	if err != nil {
		t.Fatal(err)
	}
	var newRows []string // new.csv: cells.csv's first rows without the label column
	for _, l := range strings.Split(strings.TrimSpace(string(buf)), "\n")[:6] {
		f := strings.Split(l, ",")
		newRows = append(newRows, strings.Join(slices.Delete(f, 2, 3), ","))
	}
	if err := os.WriteFile(filepath.Join(dir, "new.csv"), []byte(strings.Join(newRows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range lines {
		short := slices.Clone(args)
		if i := slices.Index(short, "--iters"); i >= 0 {
			short = slices.Delete(short, i, i+2)
		}
		switch {
		case args[0] == "reproduce":
			short = append(short, "--iters", "6", "--no-figures")
		case slices.Contains(args, "--resume"):
			short = append(short, "--iters", "8") // continues the 4 iterations below
		case args[0] == "train":
			short = append(short, "--iters", "4", "--no-figures")
		case args[0] == "infer":
			short = append(short, "--iters", "3")
		}
		code, printed := runPrinting(t, short)
		if code != 0 {
			t.Fatalf("README's `%s` (run as %v) exited %d:\n%s", strings.Join(args, " "), short, code, printed)
		}
	}
}
