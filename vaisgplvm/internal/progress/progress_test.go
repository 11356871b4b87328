package progress

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestTrainings: one observer draws a bar per run (a new bound, a new total, or a count that goes
// back starts one), describing each with its bound and -ELBO per point; a nil writer draws nothing.
func TestTrainings(t *testing.T) {
	var buf bytes.Buffer
	obs := Trainings(&buf)
	for _, e := range []train.Event{{Method: "vais", Iter: 1, Total: 2, NegELBO: 3.5}, {Method: "vais", Iter: 2, Total: 2, NegELBO: 3.25},
		{Method: "mf", Iter: 1, Total: 3, NegELBO: 9}, {Method: "mf", Iter: 1, Total: 3, NegELBO: 8}} {
		obs(e)
	}
	out := buf.String()
	for _, want := range []string{"vais -ELBO/N 3.5000", "(0/2)", "mf -ELBO/N 9.0000", "(0/3)", "mf -ELBO/N 8.0000"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress output lacks %q:\n%q", want, out)
		}
	}
	New(nil, 3, "x").Set(1, "nothing") // must not panic
}
