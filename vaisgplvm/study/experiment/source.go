package experiment

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// Source is what a model trains on, and what its checkpoint records (Tag) so that LoadCheckpoint
// can rebuild the model: a built-in dataset (data.Names) or your own delimited file
// (data.ReadTable), standardised or not, and for the image datasets the pixel scale and the seed of
// Table 2's hidden pixels.
type Source struct {
	Dataset     string `json:"dataset,omitempty"` // a built-in dataset (data.Names)
	File        string `json:"file,omitempty"`    // absolute path of your own file
	SHA256      string `json:"sha256,omitempty"`  // of File when the model was trained
	Labels      string `json:"labels,omitempty"`  // label column of File
	Standardize bool   `json:"standardized,omitempty"`
	Pixels      string `json:"pixels,omitempty"` // frey, mnist: "unit" ([0, 1]) or "raw" (0-255)
	// HiddenSeed, when not 0, hides Table 2's pixels (5% of the images lose 75% of their pixels)
	// drawn with this seed: the model never sees them, and Train scores them.
	HiddenSeed uint64 `json:"hidden_pixels_seed,omitempty"`
}

// Data is a loaded Source: the dataset in the model's units, and the column means and standard
// deviations that standardised it (nil when it is in the file's units). With hidden pixels, Truth
// holds the full data [N, D] in the model's units and Damaged the indices of the images that lost
// pixels.
type Data struct {
	*data.Dataset
	Mean, Std []float64
	Truth     [][]float64
	Damaged   []int
}

// Tag names the source in checkpoints (train.Trainer.DataTag): "oilflow", "wine+standardized" for
// the tabular built-in datasets (the format of earlier versions), a JSON object for a file or an
// image dataset. ParseSource inverts it.
func (s Source) Tag() string {
	if s.File == "" && s.Pixels == "" && s.HiddenSeed == 0 {
		if s.Standardize {
			return s.Dataset + "+standardized"
		}
		return s.Dataset
	}
	buf, _ := json.Marshal(s)
	return string(buf)
}

// ParseSource inverts Source.Tag.
func ParseSource(tag string) (Source, error) {
	if strings.HasPrefix(tag, "{") {
		var s Source
		if err := json.Unmarshal([]byte(tag), &s); err != nil {
			return s, fmt.Errorf("reading the checkpoint's data record %q: %w", tag, err)
		}
		return s, nil
	}
	name, std := strings.CutSuffix(tag, "+standardized")
	return Source{Dataset: name, Standardize: std}, nil
}

// Describe names the source in words: a built-in dataset, or a file with its sha256 prefix.
func (s Source) Describe() string {
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

// MismatchError rewrites a checkpoint's *train.DataMismatchError in words (which data the
// checkpoint was trained on, and which it was given); other errors pass unchanged.
func MismatchError(err error) error {
	var dm *train.DataMismatchError
	if !errors.As(err, &dm) {
		return err
	}
	saved, err1 := ParseSource(dm.Saved)
	now, err2 := ParseSource(dm.Now)
	if err1 != nil || err2 != nil {
		return err
	}
	if saved.File != "" && saved.File == now.File && saved.SHA256 != now.SHA256 {
		return option.Failf([]string{"Resume"}, "checkpoint %s was trained on %s, which has changed since (sha256 %.12s now): resume with the file as it was, or start a new run without Resume",
			dm.Path, saved.Describe(), now.SHA256)
	}
	return option.Failf([]string{"Resume"}, "checkpoint %s was trained on %s, not on %s: resume with the data it was trained on, or start a new run without Resume",
		dm.Path, saved.Describe(), now.Describe())
}

// Load reads the source. A file whose sha256 differs from the recorded one (SHA256 set) is an
// error: the model was trained on other data. Load fills in SHA256 and makes File absolute. An
// unknown dataset or pixel scale is an *option.Error.
func (s *Source) Load() (*Data, error) {
	ds, err := s.read()
	if err != nil {
		return nil, err
	}
	td := &Data{Dataset: ds}
	truth := ds.X
	if s.HiddenSeed != 0 {
		if ds.X, ds.Mask, td.Damaged, err = protocol.HidePixels(ds.X, s.HiddenSeed); err != nil {
			return nil, err
		}
	}
	if s.Standardize {
		if ds.X, td.Mean, td.Std, err = data.Standardize(ds.X); err != nil {
			return nil, err
		}
	}
	if s.HiddenSeed != 0 {
		td.Truth = td.ToModelUnits(truth)
	}
	return td, nil
}

// read loads the dataset or the file as it is.
func (s *Source) read() (*data.Dataset, error) {
	if s.File == "" {
		return loadBuiltin(s.Dataset, s.Pixels)
	}
	var err error
	if s.File, err = filepath.Abs(s.File); err != nil {
		return nil, err
	}
	if st, err := os.Stat(s.File); err != nil {
		return nil, option.Failf([]string{"File"}, "File: %w", err)
	} else if !st.Mode().IsRegular() {
		return nil, option.Failf([]string{"File"}, "File %s is not a regular file; give a delimited text file", s.File)
	}
	sum, err := data.SHA256(s.File)
	if err != nil {
		return nil, option.Failf([]string{"File"}, "File: %w", err)
	}
	if s.SHA256 != "" && s.SHA256 != sum {
		return nil, fmt.Errorf("%s has changed since the model was trained on it (sha256 %s, recorded %s)", s.File, sum, s.SHA256)
	}
	s.SHA256 = sum
	return data.ReadTable(s.File, data.TableOptions{LabelColumn: s.Labels})
}

// loadBuiltin loads a built-in dataset: frey and mnist with pixels on the unit ("" too) or raw
// scale, the others with data.Load.
func loadBuiltin(name, pixels string) (*data.Dataset, error) {
	if data.IsImage(name) {
		return protocol.LoadImages(name, pixels)
	}
	if pixels != "" {
		return nil, option.Of("Pixels", "Pixels applies to frey and mnist, not %s", name)
	}
	ds, err := data.Load(name)
	if err != nil && !slices.Contains(data.Names(), name) {
		return nil, option.Of("Dataset", "Dataset: %v", err)
	}
	return ds, err
}

// ToModelUnits standardises new points x [N, D] like the training data (NaN stays NaN); x itself
// when the data is not standardised.
func (td *Data) ToModelUnits(x [][]float64) [][]float64 {
	return td.perColumn(x, func(v float64, j int) float64 { return (v - td.Mean[j]) / td.Std[j] })
}

// ToDataUnits maps predictions y [N, D] of a standardised model back to the file's units; y
// itself when the data is not standardised.
func (td *Data) ToDataUnits(y [][]float64) [][]float64 {
	return td.perColumn(y, func(v float64, j int) float64 { return v*td.Std[j] + td.Mean[j] })
}

// perColumn returns f applied to every entry of x (and its column), or x itself when the data is
// not standardised.
func (td *Data) perColumn(x [][]float64, f func(v float64, j int) float64) [][]float64 {
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

// Same reports whether s and o name the same data: the same built-in dataset or file (by path),
// label column, scaling, pixel scale and hidden pixels.
func (s Source) Same(o Source) bool {
	if (s.File == "") != (o.File == "") || (s.File != "" && !SameFile(s.File, o.File)) {
		return false
	}
	return s.Dataset == o.Dataset && s.Labels == o.Labels && s.Standardize == o.Standardize &&
		cmp.Or(s.Pixels, "unit") == cmp.Or(o.Pixels, "unit") && s.HiddenSeed == o.HiddenSeed
}
