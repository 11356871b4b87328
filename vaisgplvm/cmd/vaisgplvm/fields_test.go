package main

import (
	"os"
	"regexp"
	"testing"
)

// TestFlagForLibraryFields: every setting name the library's *option.Error messages use maps to a
// flag that one of the commands defines (their -h output), so no refusal names a flag that does
// not exist.
func TestFlagForLibraryFields(t *testing.T) {
	flags := map[string]bool{}
	re := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	for _, cmd := range []string{"train", "reproduce", "bench", "infer", "evidence", "cmf"} {
		f, err := os.CreateTemp(t.TempDir(), "help")
		if err != nil {
			t.Fatal(err)
		}
		stdout := os.Stdout
		os.Stdout = f
		code := run([]string{cmd, "-h"}, f)
		os.Stdout = stdout
		buf, _ := os.ReadFile(f.Name())
		if code != 0 {
			t.Fatalf("%s -h: exit %d", cmd, code)
		}
		for _, m := range re.FindAllStringSubmatch(string(buf), -1) {
			flags["--"+m[1]] = true
		}
	}
	for _, field := range []string{
		// model.Config
		"LR", "Q", "M", "K", "Samples", "Batch", "DType", "Scale0", "Noise0", "Kernel", "Method", "Schedule",
		"Eta", "AcceptTarget", "AdaptRate", "AdamBeta2", "ClipGrad", "STL",
		// the paper tables' options, rundir
		"Iters", "Runs", "Jobs", "ReconIters", "Subset", "Reps", "Ks", "Datasets", "Pixels", "Data", "Table", "Methods",
		"Out", "Overwrite",
		// experiment
		"Dataset", "TrainData", "Observed", "Damaged", "ESSK", "Points", "Chains", "Temps", "File",
		// cmf.Config, cmf.Options
		"Test", "AISPoints", "LatentDim", "InputDim", "Hidden", "AuxHidden", "Family", "TermB", "Bound",
		"MarginalKs", "FitIters", "SweepIters", "Validation", "Draws", "LRs", "WarmStart", "FreezeDecoder",
		"AIS.Temps", "AIS.Runs",
		// experiment.SourceOptions, ResumeRequest, EvidenceOptions
		"Labels", "HidePixels", "Standardize", "Resume", "Seed", "EtaScales", "Dampings",
		// model.Config fields a resumed run can disagree on
		"Whitened", "PointEta", "AdaptEta", "Q", "Resample", "ResampleESS", "LearnBackward",
	} {
		if f := flagFor(field); !flags[f] {
			t.Errorf("flagFor(%s) = %s, which no command defines", field, f)
		}
	}
	if flagFor("--data") != "--data" {
		t.Error("flagFor of a flag name: want it unchanged")
	}
}
