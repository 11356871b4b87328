package option

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestReword: every whole-word mention of a field becomes the caller's name for it, and nothing
// else changes (a field inside another word, or after a hyphen, stays).
func TestReword(t *testing.T) {
	flag := func(f string) string { return "--" + strings.ToLower(f) }
	for _, c := range []struct {
		err  *Error
		want string
	}{
		{Of("LR", "LR = -1: want a positive finite number").(*Error), "--lr = -1: want a positive finite number"},
		{Errorf([]string{"ESSK", "Points"}, "ESSK 8: needs >= 10 points, not 3; raise Points").(*Error), "--essk 8: needs >= 10 points, not 3; raise --points"},
		{Of("M", "M = 0: want > 0 (MSE, M2 and X-M stay)").(*Error), "--m = 0: want > 0 (MSE, M2 and X-M stay)"},
		{Memory("a step", 3<<30, 1<<30, "K", "Samples", "Batch").(*Error),
			"a step needs about 3 GiB of memory, more than this machine's 1 GiB; lower --k, --samples or --batch"},
	} {
		if got := c.err.Reword(flag); got != c.want {
			t.Errorf("Reword(%q) = %q, want %q", c.err.Msg, got, c.want)
		}
	}
	if e := Memory("x", 1, 0, "Temps").(*Error); e.Need != 1 || e.Field() != "Temps" || !strings.HasSuffix(e.Error(), "lower Temps") {
		t.Errorf("Memory: %+v", e)
	}
	if (&Error{Msg: "m"}).Field() != "" {
		t.Error("Field of an error without fields: want \"\"")
	}
}

// TestWithin: context keeps an *Error an *Error (and its fields); other errors are wrapped.
func TestWithin(t *testing.T) {
	var oe *Error
	err := Within("vais on frey", Of("K", "K = 0: want > 0"))
	if !errors.As(err, &oe) || err.Error() != "vais on frey: K = 0: want > 0" || oe.Field() != "K" {
		t.Errorf("Within an *Error: %v", err)
	}
	base := fmt.Errorf("disk full")
	if err := Within("writing", base); !errors.Is(err, base) || errors.As(err, &oe) || err.Error() != "writing: disk full" {
		t.Errorf("Within another error: %v", err)
	}
	if Within("x", nil) != nil {
		t.Error("Within(nil): want nil")
	}
}

// TestFailure: a failure keeps what %w wrapped, says its message in Go names, and rewords them.
func TestFailure(t *testing.T) {
	base := errors.New("no such file")
	err := Failf([]string{"LR", "Eta"}, "diverged at iteration 3: lower LR or Eta (%w)", base)
	var f *Failure
	var oe *Error
	if !errors.As(err, &f) || !errors.Is(err, base) || errors.As(err, &oe) {
		t.Fatalf("Failf: %#v", err)
	}
	if got := f.Reword(func(s string) string { return "--" + strings.ToLower(s) }); got != "diverged at iteration 3: lower --lr or --eta (no such file)" {
		t.Errorf("Reword: %q", got)
	}
	if e := Wrap("Out", base).(*Error); !errors.Is(e, base) || e.Field() != "Out" || e.Error() != "no such file" {
		t.Errorf("Wrap: %#v", e)
	}
	if oe := Of("M", "M 0"); Wrap("Out", oe) != oe || Wrap("Out", nil) != nil {
		t.Error("Wrap of an *Error or nil: want it unchanged")
	}
}
