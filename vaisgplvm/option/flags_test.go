package option

import (
	"errors"
	"flag"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestListValues: the list flags parse what they should, refuse each bad entry by name, and print
// their value back in the form they parse.
func TestListValues(t *testing.T) {
	var ks Ints
	if err := ks.Set("5, 10,25"); err != nil || !reflect.DeepEqual([]int(ks), []int{5, 10, 25}) || ks.String() != "5,10,25" {
		t.Errorf("Ints: %v %v %q", ks, err, ks.String())
	}
	for _, bad := range []string{"5,0", "x", "1,,2", "-3"} {
		if err := new(Ints).Set(bad); err == nil {
			t.Errorf("Ints.Set(%q): no error", bad)
		}
	}
	var xs []float64
	f := Floats{List: &xs}
	if err := f.Set("0,-0.5,2e-3"); err != nil || !reflect.DeepEqual(xs, []float64{0, -0.5, 0.002}) || f.String() != "0,-0.5,0.002" {
		t.Errorf("Floats: %v %v %q", xs, err, f.String())
	}
	for _, bad := range []string{"NaN", "1,Inf", "a"} {
		if err := f.Set(bad); err == nil {
			t.Errorf("Floats.Set(%q): no error", bad)
		}
	}
	if err := (Floats{List: &xs, Positive: true}).Set("1,0"); err == nil || !strings.Contains(err.Error(), "0 is not a positive") {
		t.Errorf("positive Floats given 0: %v", err)
	}
}

// TestBindAndCopy: Bind makes a flag per tagged field with the field's value as default, and
// CopyTagged copies exactly the flags given.
func TestBindAndCopy(t *testing.T) {
	type cfg struct {
		K      int     `flag:"k" usage:"samples"`
		Rate   float64 `flag:"rate" usage:"a rate"`
		On     bool    `flag:"on" usage:"switch"`
		Name   string  `flag:"name" usage:"name"`
		Hidden int
	}
	v := cfg{K: 5, Rate: 0.1, Name: "a", Hidden: 7}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	Bind(fs, &v, map[string]string{"name": ": a or b"})
	if fs.Lookup("hidden") != nil || fs.Lookup("k").DefValue != "5" || fs.Lookup("name").Usage != "name: a or b" {
		t.Fatalf("Bind registered the wrong flags")
	}
	if err := fs.Parse([]string{"--k", "9", "--on"}); err != nil {
		t.Fatal(err)
	}
	given := map[string]bool{"k": true, "on": true}
	dst := cfg{K: 1, Rate: 3, Name: "preset", Hidden: 2}
	CopyTagged(&dst, v, func(f string) bool { return given[f] })
	if want := (cfg{K: 9, Rate: 3, On: true, Name: "preset", Hidden: 2}); dst != want {
		t.Errorf("CopyTagged: %+v, want %+v", dst, want)
	}
	if Tag[cfg]("Rate") != "rate" || Tag[cfg]("Hidden") != "" || Tag[cfg]("None") != "" {
		t.Error("Tag: wrong flag names")
	}
}

// TestSetGiven: two structs sharing a flag bind it once (the first one's default); SetGiven copies
// the flags given, and only those, into a third value of either type, []int included; a value
// below a min tag and a flag that the set lacks are errors.
func TestSetGiven(t *testing.T) {
	type a struct {
		Reps int   `flag:"reps" usage:"repetitions" min:"1"`
		Ks   []int `flag:"ks" usage:"values of K"`
	}
	type b struct {
		Reps  int    `flag:"reps" usage:"another"`
		Pixel string `flag:"pixels" usage:"scale"`
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	Bind(fs, &a{Reps: 5, Ks: []int{5, 10}}, nil)
	Bind(fs, &b{Reps: 9, Pixel: "unit"}, nil)
	if fs.Lookup("reps").DefValue != "5" || fs.Lookup("reps").Usage != "repetitions" || fs.Lookup("ks").DefValue != "5,10" {
		t.Fatalf("shared flag: default %s, usage %q; ks default %s", fs.Lookup("reps").DefValue, fs.Lookup("reps").Usage, fs.Lookup("ks").DefValue)
	}
	if err := fs.Parse([]string{"--reps", "3", "--ks", "2,4", "--pixels", "raw"}); err != nil {
		t.Fatal(err)
	}
	given := map[string]bool{"reps": true, "ks": true, "pixels": true}
	gotA := a{Reps: 1}
	if err := SetGiven(fs, &gotA, func(n string) bool { return given[n] }); err != nil || gotA.Reps != 3 || !slices.Equal(gotA.Ks, []int{2, 4}) {
		t.Errorf("SetGiven into a: %+v, %v; want Reps 3, Ks [2 4]", gotA, err)
	}
	gotB := b{Reps: 7}
	if err := SetGiven(fs, &gotB, func(n string) bool { return n == "pixels" }); err != nil || gotB != (b{Reps: 7, Pixel: "raw"}) {
		t.Errorf("SetGiven into b, pixels only: %+v, %v", gotB, err)
	}
	if err := fs.Parse([]string{"--reps", "0"}); err != nil {
		t.Fatal(err)
	}
	if err := SetGiven(fs, &a{}, func(n string) bool { return n == "reps" }); err == nil || err.Error() != "--reps 0: want >= 1" {
		t.Errorf("reps 0 under min 1: %v", err)
	}
	if err := SetGiven(flag.NewFlagSet("empty", flag.ContinueOnError), &a{}, func(string) bool { return true }); err == nil {
		t.Error("a flag set without the flags: want an error")
	}
}

// TestKebabAndCheck: Go names become flag names; Check names the first failing rule.
func TestKebabAndCheck(t *testing.T) {
	for in, want := range map[string]string{"AISPoints": "ais-points", "AdamBeta2": "adam-beta2", "LR": "lr",
		"ReconIters": "recon-iters", "AIS.Temps": "ais-temps", "M": "m", "ESSK": "essk"} {
		if got := Kebab(in); got != want {
			t.Errorf("Kebab(%q) = %q, want %q", in, got, want)
		}
	}
	err := Check(Rule{"A", 1, true, "x"}, Rule{"Draws", 1, false, ">= 2"}, Rule{"C", 0, false, "y"})
	var oe *Error
	if !errors.As(err, &oe) || oe.Field() != "Draws" || err.Error() != "Draws 1: want >= 2" {
		t.Errorf("Check: %v", err)
	}
	if Check(Rule{"A", 1, true, "x"}) != nil {
		t.Error("Check of passing rules: want nil")
	}
}
