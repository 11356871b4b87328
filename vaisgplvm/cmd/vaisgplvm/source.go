package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/paper"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// dataSource is what train trains on, and what its checkpoint records so that infer can rebuild the
// model: a built-in dataset (data.Names) or your own delimited file (data.ReadTable), standardised
// or not, and for the image datasets the pixel scale and the seed of Table 2's hidden pixels.
type dataSource struct {
	Dataset     string `json:"dataset,omitempty"` // a built-in dataset (data.Names)
	File        string `json:"file,omitempty"`    // absolute path of your own file
	SHA256      string `json:"sha256,omitempty"`  // of File when the model was trained
	Labels      string `json:"labels,omitempty"`  // label column of File
	Standardize bool   `json:"standardized,omitempty"`
	Pixels      string `json:"pixels,omitempty"` // frey, mnist: "unit" ([0, 1]) or "raw" (0-255)
	// HiddenSeed, when not 0, hides Table 2's pixels (5% of the images lose 75% of their pixels)
	// drawn with this seed: the model never sees them, and train scores them.
	HiddenSeed uint64 `json:"hidden_pixels_seed,omitempty"`
}

// trainingData is the loaded data, and the column means and standard deviations that standardised
// it (nil when it is in the file's units). With hidden pixels, Truth holds the full data [N, D] in
// the model's units and Damaged the indices of the images that lost pixels.
type trainingData struct {
	*data.Dataset
	Mean, Std []float64
	Truth     [][]float64
	Damaged   []int
}

// tag names the source in checkpoints: "oilflow", "wine+standardized" for the tabular built-in
// datasets (the format of earlier versions), a JSON object for a file or an image dataset.
func (s dataSource) tag() string {
	if s.File == "" && s.Pixels == "" && s.HiddenSeed == 0 {
		if s.Standardize {
			return s.Dataset + "+standardized"
		}
		return s.Dataset
	}
	buf, _ := json.Marshal(s)
	return string(buf)
}

// describe names the source in words: a built-in dataset, or a file with its sha256 prefix.
func (s dataSource) describe() string {
	var b strings.Builder
	if s.File != "" {
		fmt.Fprintf(&b, "%s (sha256 %.12s)", s.File, s.SHA256)
	} else {
		fmt.Fprintf(&b, "the built-in dataset %s", s.Dataset)
	}
	if s.Standardize {
		b.WriteString(", standardised")
	}
	if s.Pixels != "" {
		fmt.Fprintf(&b, ", pixels %s", s.Pixels)
	}
	if s.HiddenSeed != 0 {
		fmt.Fprintf(&b, ", pixels hidden with seed %d", s.HiddenSeed)
	}
	return b.String()
}

// mismatchError rewrites a checkpoint's *train.DataMismatchError in words; other errors pass.
func mismatchError(err error) error {
	var dm *train.DataMismatchError
	if !errors.As(err, &dm) {
		return err
	}
	saved, err1 := parseSource(dm.Saved)
	now, err2 := parseSource(dm.Now)
	if err1 != nil || err2 != nil {
		return err
	}
	if saved.File != "" && saved.File == now.File && saved.SHA256 != now.SHA256 {
		return fmt.Errorf("checkpoint %s was trained on %s, which has changed since (sha256 %.12s now): resume with the file as it was, or start a new run without --resume",
			dm.Path, saved.describe(), now.SHA256)
	}
	return fmt.Errorf("checkpoint %s was trained on %s, not on %s: resume with the data it was trained on, or start a new run without --resume",
		dm.Path, saved.describe(), now.describe())
}

// parseSource inverts tag.
func parseSource(tag string) (dataSource, error) {
	if strings.HasPrefix(tag, "{") {
		var s dataSource
		if err := json.Unmarshal([]byte(tag), &s); err != nil {
			return s, fmt.Errorf("reading the checkpoint's data record %q: %w", tag, err)
		}
		return s, nil
	}
	name, std := strings.CutSuffix(tag, "+standardized")
	return dataSource{Dataset: name, Standardize: std}, nil
}

// load reads the source. A file whose sha256 differs from the recorded one (SHA256 set) is an
// error: the model was trained on other data. load fills in SHA256 and makes File absolute.
func (s *dataSource) load() (*trainingData, error) {
	var ds *data.Dataset
	var err error
	if s.File == "" {
		if ds, err = loadBuiltin(s.Dataset, s.Pixels); err != nil {
			return nil, err
		}
	} else {
		if s.File, err = filepath.Abs(s.File); err != nil {
			return nil, err
		}
		if st, err := os.Stat(s.File); err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		} else if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("--data %s is not a regular file; give a delimited text file", s.File)
		}
		sum, err := data.SHA256(s.File)
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		if s.SHA256 != "" && s.SHA256 != sum {
			return nil, fmt.Errorf("%s has changed since the model was trained on it (sha256 %s, recorded %s)", s.File, sum, s.SHA256)
		}
		s.SHA256 = sum
		if ds, err = data.ReadTable(s.File, data.TableOptions{LabelColumn: s.Labels}); err != nil {
			return nil, err
		}
	}
	td := &trainingData{Dataset: ds}
	truth := ds.X
	if s.HiddenSeed != 0 {
		if ds.X, ds.Mask, td.Damaged, err = paper.HidePixels(ds.X, s.HiddenSeed); err != nil {
			return nil, err
		}
	}
	if s.Standardize {
		if ds.X, td.Mean, td.Std, err = data.Standardize(ds.X); err != nil {
			return nil, err
		}
	}
	if s.HiddenSeed != 0 {
		td.Truth = td.toModelUnits(truth)
	}
	return td, nil
}

// loadBuiltin loads a built-in dataset: frey and mnist with pixels on the unit ("" too) or raw
// scale, the others with data.Load.
func loadBuiltin(name, pixels string) (*data.Dataset, error) {
	if paper.IsImage(name) {
		ds, err := paper.LoadImages(name, pixels)
		var oe *paper.OptionError
		if errors.As(err, &oe) {
			return nil, usagef("--%v", err)
		}
		return ds, err
	}
	if pixels != "" {
		return nil, usagef("--pixels applies to frey and mnist, not %s", name)
	}
	ds, err := data.Load(name)
	if err != nil && !slices.Contains(data.Names(), name) {
		return nil, usagef("--dataset: %v", err)
	}
	return ds, err
}

// toModelUnits standardises new points x [N, D] like the training data (NaN stays NaN).
func (td *trainingData) toModelUnits(x [][]float64) [][]float64 {
	return td.perColumn(x, func(v float64, j int) float64 { return (v - td.Mean[j]) / td.Std[j] })
}

// toDataUnits maps predictions y [N, D] of a standardised model back to the file's units.
func (td *trainingData) toDataUnits(y [][]float64) [][]float64 {
	return td.perColumn(y, func(v float64, j int) float64 { return v*td.Std[j] + td.Mean[j] })
}

// perColumn returns f applied to every entry of x (and its column), or x itself when the data is
// not standardised.
func (td *trainingData) perColumn(x [][]float64, f func(v float64, j int) float64) [][]float64 {
	if td.Mean == nil {
		return x
	}
	out := make([][]float64, len(x))
	for i, r := range x {
		out[i] = make([]float64, len(r))
		for j, v := range r {
			out[i][j] = f(v, j)
		}
	}
	return out
}

// loadOwn loads --data file (labels: its --labels column) for reproduce, standardised with
// --standardize, and gives --q its default for the file (ownDataQ). The returned source has the
// file's absolute path and sha256.
func (f *modelFlags) loadOwn(file, labels string) (dataSource, *trainingData, error) {
	src := dataSource{File: file, Labels: labels, Standardize: f.standardize}
	td, err := src.load()
	if err != nil {
		return src, nil, err
	}
	f.ownDataQ(td.Dims())
	return src, td, nil
}

// ownDataQ gives --q, when not set, its default for your own data of n points and d columns
// (paper.OwnDataQ).
func (f *modelFlags) ownDataQ(n, d int) {
	if f.q == 0 {
		f.q = paper.OwnDataQ(n, d)
	}
}
