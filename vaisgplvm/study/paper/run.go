package paper

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/rundir"
)

// TableOutputs names the files WriteTable writes for table t (patterns for the figures): nil for
// a table that is not registered.
func TableOutputs(t int) []string {
	spec, err := Lookup(t)
	if err != nil {
		return nil
	}
	name := fmt.Sprintf("table%d", t)
	return append([]string{name + ".md", name + ".json"}, spec.Figures...)
}

// WriteTable writes table t's result into dir, which it commits: tableT.md, tableT.json and,
// with figures, the figures of a FigureWriter. It returns the figures' final paths.
func WriteTable(dir *rundir.Dir, t int, res Output, figures bool) ([]string, error) {
	if dir == nil || res == nil {
		return nil, fmt.Errorf("WriteTable: nil directory or result")
	}
	name := fmt.Sprintf("table%d", t)
	if err := dir.Check(name + ".json"); err != nil {
		return nil, fmt.Errorf("WriteTable: %w (open the directory with TableOutputs(%d))", err, t)
	}
	var files []string
	if fw, ok := res.(FigureWriter); ok && figures {
		var err error
		if files, err = fw.WriteFigures(dir.Stage); err != nil {
			return nil, fmt.Errorf("figures: %w", err)
		}
		for i, f := range files {
			files[i] = dir.Final(filepath.Base(f))
		}
	}
	buf, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%s JSON: %w", name, err)
	}
	if err := dir.WriteFile(name+".json", buf); err != nil {
		return nil, err
	}
	if err := dir.WriteFile(name+".md", []byte(res.Markdown())); err != nil {
		return nil, err
	}
	return files, dir.Commit()
}

// RunTable checks o for table t (Check) and runs the table's registered function with a copy of o
// whose defaults are filled in from the table's Spec (datasets, methods, iterations, the paper's
// protocol). o is a pointer to the table's options type (Spec.Options; nil: its defaults).
// Errors: an *option.Error for an unknown table, another table's options or bad options, else the
// table's.
func RunTable(ctx context.Context, t int, o TableOptions) (Output, error) {
	spec, err := Lookup(t)
	if err != nil {
		return nil, err
	}
	s, err := optsFor(t, o)
	if err != nil {
		return nil, err
	}
	if err := s.check(t); err != nil {
		return nil, err
	}
	if s, err = s.withDefaults(t); err != nil {
		return nil, err
	}
	filled := spec.NewOptions()
	if o != nil && !reflect.ValueOf(o).IsNil() {
		filled = Copy(o)
	}
	setOpts(filled, s)
	return spec.Run(ctx, filled)
}

// CheckReplace refuses to replace the table at path, when there is one, that another command made
// (its settings' "command", or none recorded) unless overwrite, as a training refuses to replace
// another run: an *option.Error naming Overwrite and Out. A rerun of the same command replaces its
// own table. An unreadable file is left to the run directory (package rundir) to judge.
func CheckReplace(path, command string, overwrite bool) error {
	buf, err := os.ReadFile(path)
	if err != nil || overwrite {
		return nil
	}
	var t struct {
		Settings map[string]any `json:"settings"`
	}
	_ = json.Unmarshal(buf, &t)
	if made, _ := t.Settings["command"].(string); made != command {
		if made == "" {
			made = "a command that did not record itself"
		} else {
			made = "`" + made + "`"
		}
		return option.Errorf([]string{"Overwrite", "Out"}, "%s holds a table made by %s, not by this command: set Overwrite to replace it, or choose another Out", path, made)
	}
	return nil
}
