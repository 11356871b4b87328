package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/anneal"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/bounds"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
)

// TestImageDefaults: the image preset of protocol.Training (K 25, shared q(u) root, VAIS's
// stop-gradient chain) fills only the flags not given, so --stop-grad=false restores the paper's
// gradient and --k wins over 25.
func TestImageDefaults(t *testing.T) {
	for _, c := range []struct {
		method   string
		args     []string
		k        int
		stopGrad bool
	}{{"vais", nil, 25, true}, {"vais", []string{"--stop-grad=false"}, 25, false}, {"vais", []string{"--k", "7"}, 7, true},
		{"iwvi", nil, 25, false}, {"mf", []string{"--stop-grad"}, 25, true}} {
		mf, set, _ := parsedFlags(t, c.args...)
		cfg, _, err := protocol.Training(c.method, "frey", 1, 1965, 560, mf.configure(set), mf.explicit(set))
		if err != nil {
			t.Fatalf("%s %v: %v", c.method, c.args, err)
		}
		if cfg.K != c.k || cfg.StopGrad != c.stopGrad || !cfg.SharedQSqrt || cfg.Batch != 100 || cfg.Q != 20 {
			t.Errorf("%s %v: K %d, stop-grad %v, shared root %v; want K %d, stop-grad %v, shared root", c.method, c.args,
				cfg.K, cfg.StopGrad, cfg.SharedQSqrt, c.k, c.stopGrad)
		}
	}
}

// damped is a bound with one setting, registered by the test: what the command sees of a bound
// with settings of its own.
type damped struct{ bounds.Base }

func (damped) Name() string { return "damped-test" }
func (damped) Evaluate(b *bounds.Batch, in bounds.Inputs) (*bounds.Result, *anneal.Chain) {
	return bounds.MF(b, in.Eps0, false), nil
}
func (damped) Settings() []bounds.Setting {
	return []bounds.Setting{{Name: "damping", Default: 0.9, Usage: "momentum damping",
		Check: func(v float64) error {
			if !(v >= 0 && v < 1) {
				return fmt.Errorf("want a damping in [0, 1)")
			}
			return nil
		}}}
}

// TestBoundSettingFlags: a registered bound's setting is the flag --BOUND-SETTING with the bound's
// default, reaches model.Config.BoundSettings when given, is refused with another --method, and a
// value the bound's check refuses is a usage error naming the flag.
func TestBoundSettingFlags(t *testing.T) {
	if err := bounds.Register(damped{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bounds.Unregister("damped-test") })
	parseFlags := func(args ...string) (*modelFlags, map[string]bool) {
		mf, set, fs := parsedFlags(t, args...)
		if f := fs.Lookup("damped-test-damping"); f == nil || f.DefValue != "0.9" {
			t.Fatalf("flag --damped-test-damping: %+v, want one with default 0.9", f)
		}
		return mf, set
	}
	mf, set := parseFlags("--damped-test-damping", "0.5")
	c := model.DefaultConfig("damped-test", 2)
	if err := mf.apply(&c, set); err != nil {
		t.Fatal(err)
	}
	if got := c.BoundSettings["damping"]; got != 0.5 {
		t.Errorf("BoundSettings %v, want damping 0.5", c.BoundSettings)
	}
	c = model.DefaultConfig("vais", 2)
	err := mf.apply(&c, set)
	var ue *option.Error
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--damped-test-damping is a setting of --method damped-test, not of vais") {
		t.Errorf("setting of another bound: %v, want a usage error naming the flag and its bound", err)
	}
	mf, set = parseFlags("--damped-test-damping", "1.5")
	c = model.DefaultConfig("damped-test", 2)
	var oe *option.Error
	if err := mf.apply(&c, set); !errors.As(err, &oe) || !strings.Contains(oe.Reword(flagFor), "damped-test-damping = 1.5: want a damping in [0, 1)") {
		t.Errorf("bad value: %v, want an *option.Error naming the setting", err)
	}
}

// TestBoundChainDefaults: a bound's own chain defaults (bounds.Defaulted: uha's stop-gradient
// chain) reach its configuration (protocol.Training) unless a flag says otherwise; VAIS keeps the
// full gradient.
func TestBoundChainDefaults(t *testing.T) {
	for _, c := range []struct {
		method   string
		args     []string
		stopGrad bool
	}{{"uha", nil, true}, {"uha", []string{"--stop-grad=false"}, false}, {"vais", nil, false}} {
		mf, set, _ := parsedFlags(t, c.args...)
		cfg, _, err := protocol.Training(c.method, "oilflow", 1, 1000, 12, mf.configure(set), mf.explicit(set))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.StopGrad != c.stopGrad || !cfg.AdaptEta {
			t.Errorf("%s %v: stop-grad %v adapt-eta %v, want %v and true", c.method, c.args, cfg.StopGrad, cfg.AdaptEta, c.stopGrad)
		}
	}
}

// parsedFlags registers the model flags on a new flag set and parses args: the flags, the names
// given, and the set.
func parsedFlags(t *testing.T, args ...string) (*modelFlags, map[string]bool, *flag.FlagSet) {
	t.Helper()
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var mf modelFlags
	mf.register(fs)
	set, err := parseSet(fs, args)
	if err != nil {
		t.Fatal(err)
	}
	return &mf, set, fs
}

// TestConfigFlagsFromTags: every model.Config field with a flag tag is a flag whose default is
// model.DefaultConfig's value; given, it reaches the configuration; not given, the configuration
// keeps its own value (so presets survive).
func TestConfigFlagsFromTags(t *testing.T) {
	def := model.DefaultConfig("vais", 3)
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	var args []string
	want := def
	w := reflect.ValueOf(&want).Elem()
	n := 0
	for _, sf := range reflect.VisibleFields(w.Type()) {
		name := sf.Tag.Get("flag")
		if name == "" {
			continue
		}
		n++
		fl := fs.Lookup(name)
		if fl == nil {
			t.Errorf("model.Config.%s: no flag --%s", sf.Name, name)
			continue
		}
		if got := fmt.Sprint(w.FieldByIndex(sf.Index).Interface()); fl.DefValue != got {
			t.Errorf("--%s defaults to %s; model.DefaultConfig has %s", name, fl.DefValue, got)
		}
		f := w.FieldByIndex(sf.Index)
		switch f.Kind() { // a value other than the default, valid for the configuration
		case reflect.Int:
			f.SetInt(f.Int() + 2)
		case reflect.Float64:
			f.SetFloat(f.Float()/2 + 0.125)
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.String:
			f.SetString(map[string]string{"kernel": "matern32", "schedule": "sigmoid"}[name])
		}
		args = append(args, "--"+name+"="+fmt.Sprint(f.Interface()))
	}
	if n < 15 {
		t.Fatalf("only %d tagged fields", n)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	got := def
	option.CopyTagged(&got, mf.v, func(name string) bool { return set[name] })
	if !reflect.DeepEqual(got, want) {
		t.Errorf("given every tagged flag:\n got %+v\nwant %+v", got, want)
	}
	kept := def
	kept.K = 25
	option.CopyTagged(&kept, mf.v, func(string) bool { return false })
	if kept.K != 25 {
		t.Errorf("no flag given: K %d; want the configuration's 25", kept.K)
	}
}
