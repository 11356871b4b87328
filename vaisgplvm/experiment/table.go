package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/rundir"
)

// Table is a paper table's result (paper.Result, paper.Table5Result, paper.Table6Result): its
// Markdown, and its JSON by encoding/json.
type Table interface{ Markdown() string }

// TableOutputs names the files WriteTable writes for paper table t (patterns for the figures).
func TableOutputs(t int) []string {
	name := fmt.Sprintf("table%d", t)
	return append([]string{name + ".md", name + ".json"}, "curves_*.png", "latent_*.png", "ard_*.png", "images_*.png", "ess_*.png")
}

// WriteTable writes paper table t's result into dir, which it commits: tableT.md, tableT.json
// and, for tables 1-3 with figures, their figures (paper.Result.WriteFigures). It returns the
// figures' final paths.
func WriteTable(dir *rundir.Dir, t int, res Table, figures bool) ([]string, error) {
	if dir == nil || res == nil {
		return nil, fmt.Errorf("WriteTable: nil directory or result")
	}
	name := fmt.Sprintf("table%d", t)
	if err := dir.Check(name + ".json"); err != nil {
		return nil, fmt.Errorf("WriteTable: %w (open the directory with TableOutputs(%d))", err, t)
	}
	var files []string
	if r, ok := res.(*paper.Result); ok && figures {
		var err error
		if files, err = r.WriteFigures(dir.Stage); err != nil {
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

// RunTable runs paper table t (1, 2, 3, 5 or 6) with options o and returns its result and its
// settings (for table 6 an empty map, which the caller may fill with the provenance).
func RunTable(ctx context.Context, t int, o paper.Options) (Table, map[string]any, error) {
	switch t {
	case 1, 2, 3:
		run := map[int]func(context.Context, paper.Options) (*paper.Result, error){1: paper.Table1, 2: paper.Table2, 3: paper.Table3}[t]
		r, err := run(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		return r, r.Settings, nil
	case 5:
		r, err := paper.Table5(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		return r, r.Settings, nil
	case 6:
		r, err := paper.Table6(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		if r.Settings == nil {
			r.Settings = map[string]any{}
		}
		return r, r.Settings, nil
	}
	return nil, nil, optionErrorf("--table %d: the paper has tables 1, 2, 3, 5 and 6 (4 lists settings)", t)
}
