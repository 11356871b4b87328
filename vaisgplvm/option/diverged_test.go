package option

import (
	"errors"
	"fmt"
	"testing"
)

// TestDiverged: Divergedf keeps the iteration and the message, wraps a %w argument so that
// errors.As finds an *Error under it, and AsDiverged finds the *Diverged through further wrapping
// and returns nil for other errors and nil.
func TestDiverged(t *testing.T) {
	setting := Of("LR", "LR 0.5 is too large: lower it")
	err := fmt.Errorf("training oilflow: %w", Divergedf(120, "diverged at iteration %d: %w", 120, setting))
	d := AsDiverged(err)
	if d == nil || d.Iteration != 120 {
		t.Fatalf("AsDiverged(%v) = %+v, want iteration 120", err, d)
	}
	if want := "diverged at iteration 120: LR 0.5 is too large: lower it"; d.Error() != want {
		t.Errorf("message %q, want %q", d.Error(), want)
	}
	var oe *Error
	if !errors.As(err, &oe) || oe.Field() != "LR" {
		t.Errorf("errors.As found %v under the divergence, want the LR setting", oe)
	}
	if AsDiverged(errors.New("disk full")) != nil || AsDiverged(nil) != nil {
		t.Error("AsDiverged found a divergence in an error that is none")
	}
}
