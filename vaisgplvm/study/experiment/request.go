package experiment

import (
	"slices"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/data"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// SourceOptions are a training's data settings as a caller gives them (a command's flags).
type SourceOptions struct {
	Dataset     string // a built-in dataset (data.Names); unused with File
	File        string // your own delimited file instead of Dataset
	Labels      string // with File: the header name of a class-label column
	Pixels      string // frey, mnist: "unit" or "raw"
	HidePixels  bool   // frey, mnist: hide Table 2's pixels, drawn with Seed
	Standardize bool   // standardise every column
	Seed        uint64 // the training's seed (>= 1), which draws the hidden pixels
}

// NewSource checks o (explicit reports which settings the caller gave, by Go name) and returns the
// Source it names, before anything is read. Errors are *option.Error: an empty File, File with
// Dataset, Labels without File, an unknown Dataset, Pixels or HidePixels given for data that is not
// an image set, a Pixels scale other than unit or raw.
func NewSource(o SourceOptions, explicit func(field string) bool) (Source, error) {
	images := explicit("Pixels") || explicit("HidePixels")
	switch {
	case explicit("File") && strings.TrimSpace(o.File) == "":
		return Source{}, option.Of("File", "File is empty: give the path of your data file, or leave File out for Dataset")
	case o.File != "" && explicit("Dataset"):
		return Source{}, option.Errorf([]string{"File", "Dataset"}, "File and Dataset exclude each other")
	case o.Labels != "" && o.File == "":
		return Source{}, option.Errorf([]string{"Labels", "File"}, "Labels names a column of File")
	case o.File != "" && images:
		return Source{}, option.Errorf([]string{"Pixels", "HidePixels", "Dataset", "File"}, "Pixels and HidePixels apply to Dataset frey or mnist, not File")
	case o.File != "":
		return Source{File: o.File, Labels: o.Labels, Standardize: o.Standardize}, nil
	case !slices.Contains(data.Names(), o.Dataset):
		return Source{}, option.Of("Dataset", "Dataset %q: want one of %s", o.Dataset, strings.Join(data.Names(), ", "))
	case !protocol.IsImage(o.Dataset) && images:
		return Source{}, option.Errorf([]string{"Pixels", "HidePixels", "Dataset"}, "Pixels and HidePixels apply to Dataset frey or mnist, not %s", o.Dataset)
	case !protocol.IsImage(o.Dataset):
		return Source{Dataset: o.Dataset, Standardize: o.Standardize}, nil
	case o.Pixels != "unit" && o.Pixels != "raw":
		return Source{}, option.Of("Pixels", "Pixels %q: want unit or raw", o.Pixels)
	}
	src := Source{Dataset: o.Dataset, Standardize: o.Standardize, Pixels: o.Pixels}
	if o.HidePixels {
		src.HiddenSeed = o.Seed
	}
	return src, nil
}

// ResumeRequest is what a caller asks of a resumed training besides the checkpoint: each setting
// only when the caller gave it, so that a resumed run needs none of them.
type ResumeRequest struct {
	// Source returns the data the caller names (NewSource). When SourceGiven it must be the
	// data the checkpoint trained on; a checkpoint that records no data (older versions) takes it.
	Source      func() (Source, error)
	SourceGiven bool
	Method      string // "" when not given
	Seed        uint64 // 0 when not given
	// Configure, when not nil, applies the model settings given to a configuration: each must
	// leave the checkpoint's configuration as it is.
	Configure func(*model.Config) error
}

// ResumeSettings returns the data source and configuration of the checkpoint at path, refusing
// with an *option.Error any setting of r that disagrees with them (Source, Method, Seed, or a
// model.Config field by its Go name).
func ResumeSettings(path string, r ResumeRequest) (Source, model.Config, error) {
	ck, tag, err := train.ReadCheckpointInfo(path)
	if err != nil {
		return Source{}, ck, err
	}
	var src Source
	if tag == "" { // an older checkpoint: the data as the caller names it
		if r.Source == nil {
			return src, ck, option.Errorf([]string{"Dataset", "File"}, "Resume %s records no data: give its Dataset or File", path)
		}
		src, err = r.Source()
		return src, ck, err
	}
	if src, err = ParseSource(tag); err != nil {
		return src, ck, err
	}
	if r.SourceGiven {
		given, err := r.Source()
		if err != nil {
			return src, ck, err
		}
		if !given.Same(src) {
			return src, ck, option.Errorf([]string{"Dataset", "File", "Resume"}, "Resume %s was trained on %s, the data settings give %s: leave them out to resume on its data",
				path, src.Describe(), given.Describe())
		}
	}
	switch {
	case r.Method != "" && r.Method != ck.Method:
		return src, ck, option.Errorf([]string{"Method", "Resume"}, "Method %s: %s was trained with Method %s; leave Method out to resume it", r.Method, path, ck.Method)
	case r.Seed != 0 && r.Seed != ck.Seed:
		return src, ck, option.Errorf([]string{"Seed", "Resume"}, "Seed %d: %s was trained with Seed %d; leave Seed out to resume it", r.Seed, path, ck.Seed)
	}
	if r.Configure != nil {
		c := ck
		if err := r.Configure(&c); err != nil {
			return src, ck, err
		}
		if d := ck.Diff(c); len(d) > 0 && d[0] == "BoundSettings" {
			return src, ck, option.Of("Resume", "the bound's own settings %v differ from those %s was trained with (%v): leave them out to resume with the checkpoint's", c.BoundSettings, path, ck.BoundSettings)
		} else if len(d) > 0 {
			return src, ck, option.Errorf([]string{d[0], "Resume"}, "%s differs from the setting %s was trained with: leave it out to resume with the checkpoint's settings", d[0], path)
		}
	}
	return src, ck, nil
}
