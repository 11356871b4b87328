package main

import (
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/experiment"
)

// loadOwn loads --data file (labels: its --labels column) for reproduce, standardised with
// --standardize, and gives --q its default for the file (ownDataQ). The returned source has the
// file's absolute path and sha256.
func (f *modelFlags) loadOwn(file, labels string) (experiment.Source, *experiment.Data, error) {
	src := experiment.Source{File: file, Labels: labels, Standardize: f.standardize}
	td, err := src.Load()
	if err != nil {
		return src, nil, err
	}
	f.ownDataQ(td.Dims())
	return src, td, nil
}
