package experiment

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// TestKeepGoing: a candidate bound that fails at run time becomes one warning naming it and its
// error, and the call goes on; a refused setting (an *option.Error, bare or wrapped) is returned
// with no warning; success leaves the warnings alone.
func TestKeepGoing(t *testing.T) {
	sum := &EvidenceSummary{Warnings: []string{"earlier"}}
	diverged := option.Failf([]string{"LearnBackward"}, "diverged at iteration 300: gave back 40%% of the progress")
	if err := keepGoing(sum, "the learned backward kernel", func() error { return diverged }); err != nil {
		t.Fatalf("a failed run: got %v, want nil (a warning)", err)
	}
	if len(sum.Warnings) != 2 || sum.Warnings[0] != "earlier" ||
		!strings.Contains(sum.Warnings[1], "the learned backward kernel failed and is left out") ||
		!strings.Contains(sum.Warnings[1], "diverged at iteration 300") {
		t.Fatalf("warnings %q: want the earlier one, then one naming the candidate and its error", sum.Warnings)
	}
	refused := option.Of("Chains", "Chains 1000000: needs more memory")
	for _, e := range []error{refused, fmt.Errorf("chain variants: %w", refused)} {
		err := keepGoing(sum, "the chain variants", func() error { return e })
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field() != "Chains" {
			t.Errorf("a refused setting %v: got %v, want it returned", e, err)
		}
	}
	if err := keepGoing(sum, "IWVI", func() error { return nil }); err != nil || len(sum.Warnings) != 2 {
		t.Errorf("success: err %v, warnings %q; want nil and the two warnings as they were", err, sum.Warnings)
	}
}
