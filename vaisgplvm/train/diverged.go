package train

import "github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"

// diverged wraps err as an *option.Diverged at iteration iter (nil for nil): the training's
// divergence, which a table records as a result (option.Diverged).
func diverged(iter int, err error) error {
	if err == nil {
		return nil
	}
	return &option.Diverged{Iteration: iter, Err: err}
}
