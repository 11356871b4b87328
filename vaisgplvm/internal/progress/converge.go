package progress

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
)

// Converge returns a progress callback of a fit to convergence, for converge.Options.Observe and
// converge.AdamOptions.Observe alike, that prints lines to w, each after "name: " when name is not
// empty (the training, when several fits share w). An L-BFGS line comes every 50 iterations and
// every 15 s: the bound per point and its rise over the rule's window against rule's limit. An
// Adam line comes at every window's end: the window's mean, its fall from the window before and
// the step-size halvings so far (against halvings, the rule's number, when it is not 0).
func Converge(w io.Writer, name string, rule converge.Rule, halvings int) func(converge.Progress) {
	last := time.Now()
	prefix := ""
	if name != "" {
		prefix = name + ": "
	}
	return func(p converge.Progress) {
		if p.Stage == "Adam" {
			limit := ""
			if halvings > 0 {
				limit = fmt.Sprintf(" (converged at a plateau after %d)", halvings)
			}
			fmt.Fprintf(w, "%sAdam iteration %d: -ELBO per point %.6g (window mean), fall from the window before %.3g, %d step-size halvings%s, %.0f s\n",
				prefix, p.Iter, p.NegELBO, p.Change, p.Halvings, limit, p.Seconds)
			return
		}
		if p.Iter%50 != 0 && time.Since(last) < 15*time.Second {
			return
		}
		last = time.Now()
		change := "not yet measured"
		if !math.IsNaN(p.Change) {
			change = fmt.Sprintf("%.3g", p.Change)
		}
		fmt.Fprintf(w, "%sL-BFGS iteration %d: -ELBO per point %.6g, rise over %d iterations %s (converged at <= %g), %.0f s\n",
			prefix, p.Iter, p.NegELBO, rule.Window, change, rule.Tol, p.Seconds)
	}
}
