package progress

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
)

// Converge returns a converge.Options.Observe that prints a line to w every 50 L-BFGS iterations
// and every 15 s: the bound, its rise over the rule's window against the rule's limit.
func Converge(w io.Writer, rule converge.Rule) func(converge.Progress) {
	last := time.Now()
	return func(p converge.Progress) {
		if p.Iter%50 != 0 && time.Since(last) < 15*time.Second {
			return
		}
		last = time.Now()
		change := "not yet measured"
		if !math.IsNaN(p.Change) {
			change = fmt.Sprintf("%.3g", p.Change)
		}
		fmt.Fprintf(w, "L-BFGS iteration %d: -ELBO per point %.6g, rise over %d iterations %s (converged at <= %g), %.0f s\n",
			p.Iter, p.NegELBO, rule.Window, change, rule.Tol, p.Seconds)
	}
}
