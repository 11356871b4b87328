package main

import (
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/experiment"
)

// loadOwn loads --data file (labels: its --labels column) for reproduce, standardised with
// --standardize (paper.Options.config gives Q its default for the file). The returned source has
// the file's absolute path and sha256.
func (f *modelFlags) loadOwn(file, labels string) (experiment.Source, *experiment.Data, error) {
	src := experiment.Source{File: file, Labels: labels, Standardize: f.standardize}
	td, err := src.Load()
	if err != nil {
		return src, nil, err
	}
	return src, td, nil
}
