package train

import "errors"

// Diverged is the error of a training that diverged after it had started well: a non-finite bound
// or update, a bound below what the model can reach, a run that gave back its progress
// (CheckRunaway), or an evaluation that is not finite. Iteration is where it was found; Err says how
// and which setting to change (an *option.Error, which errors.As finds through Unwrap). A failure
// at the first iteration (ErrNotFiniteAtStart) is a setting, not a divergence, and is not one.
//
// A table of many trainings (package paper) records a Diverged training as a result and goes on
// with the others; any other error stops it.
type Diverged struct {
	Iteration int
	Err       error
}

func (d *Diverged) Error() string { return d.Err.Error() }
func (d *Diverged) Unwrap() error { return d.Err }

// diverged wraps err as a Diverged at iteration iter (nil for nil).
func diverged(iter int, err error) error {
	if err == nil {
		return nil
	}
	return &Diverged{Iteration: iter, Err: err}
}

// AsDiverged returns the Diverged in err's chain, nil when there is none.
func AsDiverged(err error) *Diverged {
	var d *Diverged
	if errors.As(err, &d) {
		return d
	}
	return nil
}
