package experiment_test

import (
	"errors"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/experiment"
)

// TestNewSource: the data settings name a source, or are refused naming the setting at fault.
func TestNewSource(t *testing.T) {
	given := func(fields ...string) func(string) bool {
		return func(f string) bool {
			for _, g := range fields {
				if f == g {
					return true
				}
			}
			return false
		}
	}
	src, err := experiment.NewSource(experiment.SourceOptions{Dataset: "frey", Pixels: "unit", HidePixels: true, Seed: 3}, given())
	if err != nil || src.Dataset != "frey" || src.HiddenSeed != 3 || src.Pixels != "unit" {
		t.Errorf("frey with hidden pixels: %+v, %v", src, err)
	}
	if src, err := experiment.NewSource(experiment.SourceOptions{Dataset: "oilflow", Pixels: "unit", HidePixels: true, Seed: 3}, given()); err != nil || src.Pixels != "" || src.HiddenSeed != 0 {
		t.Errorf("oilflow with the image flags' defaults: %+v, %v", src, err)
	}
	for _, c := range []struct {
		o     experiment.SourceOptions
		given []string
		field string
	}{
		{experiment.SourceOptions{File: " "}, []string{"File"}, "File"},
		{experiment.SourceOptions{File: "a.csv", Dataset: "wine"}, []string{"File", "Dataset"}, "File"},
		{experiment.SourceOptions{Dataset: "oilflow", Labels: "kind"}, nil, "Labels"},
		{experiment.SourceOptions{Dataset: "nope"}, nil, "Dataset"},
		{experiment.SourceOptions{Dataset: "wine", Pixels: "raw"}, []string{"Pixels"}, "Pixels"},
		{experiment.SourceOptions{Dataset: "mnist", Pixels: "gray"}, nil, "Pixels"},
		{experiment.SourceOptions{File: "a.csv", HidePixels: true}, []string{"HidePixels"}, "Pixels"},
	} {
		_, err := experiment.NewSource(c.o, given(c.given...))
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field() != c.field {
			t.Errorf("%+v (given %v): %v; want an *option.Error about %s", c.o, c.given, err, c.field)
		}
	}
}
