package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/data"
)

// dataSource is what train trains on, and what its checkpoint records so that infer can rebuild the
// model: a built-in dataset or your own delimited file (data.ReadTable), standardised or not.
type dataSource struct {
	Dataset     string `json:"dataset,omitempty"` // oilflow or wine
	File        string `json:"file,omitempty"`    // absolute path of your own file
	SHA256      string `json:"sha256,omitempty"`  // of File when the model was trained
	Labels      string `json:"labels,omitempty"`  // label column of File
	Standardize bool   `json:"standardized,omitempty"`
}

// trainingData is the loaded data, and the column means and standard deviations that standardised
// it (nil when it is in the file's units).
type trainingData struct {
	*data.Dataset
	Mean, Std []float64
}

// tag names the source in checkpoints: "oilflow", "wine+standardized" for the built-in datasets
// (the format of earlier versions), a JSON object for a file.
func (s dataSource) tag() string {
	if s.File == "" {
		if s.Standardize {
			return s.Dataset + "+standardized"
		}
		return s.Dataset
	}
	buf, _ := json.Marshal(s)
	return string(buf)
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
		if ds, err = loadData(s.Dataset, false); err != nil {
			return nil, err
		}
	} else {
		if s.File, err = filepath.Abs(s.File); err != nil {
			return nil, err
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
	if s.Standardize {
		ds.X, td.Mean, td.Std = data.Standardize(ds.X)
	}
	return td, nil
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

// loadOwn loads --data file (labels: its --labels column) for train and reproduce, standardised
// with --standardize, and gives --q, when not set, its default for your own data: 10 (ARD switches
// off unneeded dimensions), or D when the data has fewer columns. The returned source has the
// file's absolute path and sha256.
func (f *modelFlags) loadOwn(file, labels string) (dataSource, *trainingData, error) {
	src := dataSource{File: file, Labels: labels, Standardize: f.standardize}
	td, err := src.load()
	if err != nil {
		return src, nil, err
	}
	if f.q == 0 {
		f.q = min(10, len(td.X[0]))
	}
	return src, td, nil
}
