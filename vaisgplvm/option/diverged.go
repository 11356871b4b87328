package option

import (
	"errors"
	"fmt"
)

// Diverged is the error of a fit that diverged after it had started well: a non-finite bound or
// update, a bound below what the model can reach, a run that gave back its progress, or an
// evaluation that is not finite. It is the one divergence error of every fitting package (train,
// converge, standard, cmf). Iteration is where it was found (0 when an evaluation found it outside
// the iterations); Err says how and, where one can, which setting to change (an *Error, which
// errors.As finds through Unwrap). A failure at the first iteration is a setting, not a divergence
// (train.ErrNotFiniteAtStart), and is not one.
//
// A table of many fits (package paper) records a Diverged fit as a result and goes on with the
// others; any other error stops it.
type Diverged struct {
	Iteration int
	Err       error
}

// Error returns Err's message.
func (d *Diverged) Error() string { return d.Err.Error() }

// Unwrap returns Err.
func (d *Diverged) Unwrap() error { return d.Err }

// Divergedf returns a *Diverged at iteration iter whose Err is the formatted message (a %w verb
// wraps its argument).
func Divergedf(iter int, format string, args ...any) error {
	return &Diverged{Iteration: iter, Err: fmt.Errorf(format, args...)}
}

// AsDiverged returns the *Diverged in err's chain, nil when there is none.
func AsDiverged(err error) *Diverged {
	var d *Diverged
	if errors.As(err, &d) {
		return d
	}
	return nil
}
