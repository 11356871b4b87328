package protocol

import (
	"fmt"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// Training returns the configuration of one training of method on a dataset of n points of d
// columns, and the adjustments it made, in words: what the command's train and bench and the
// notebooks start from.
//
//   - A built-in dataset starts from Config (Table 4: its Q, K and presets; mini-batches of
//     DefaultBatch); your own data (dataset "") from model.DefaultConfig with Q = OwnDataQ(n, d)
//     and mini-batches of DefaultBatch.
//   - configure, when not nil, applies the caller's own settings (a command's flags).
//   - A mini-batch the caller did not set (explicit("Batch") false) of n or more becomes full
//     batch (Batch 0). Fit then fits the sizes to the data: one the caller did not set that does
//     not fit is lowered, with a note; one it set is an *option.Error naming it.
//
// n = 0 means the data's size is not known yet (a command checking its settings before it reads
// the data): nothing is fitted, and your own data's Q is 1 unless configure sets it.
// Errors: configure's, Fit's, and model.Config.Validate's (*option.Error).
func Training(method, dataset string, seed uint64, n, d int, configure func(*model.Config) error, explicit func(field string) bool) (model.Config, []Adjustment, error) {
	c := Config(method, dataset, seed)
	if dataset == "" {
		c.Q = 1
		if n > 0 {
			c.Q = OwnDataQ(n, d)
		}
	}
	if configure != nil {
		if err := configure(&c); err != nil {
			return c, nil, err
		}
	}
	var notes []Adjustment
	if n > 0 {
		if c.Batch >= n && (explicit == nil || !explicit("Batch")) {
			c.Batch = 0 // the protocol's mini-batch holds all the data: full batch
		}
		var err error
		if notes, err = Fit(&c, n, d, explicit); err != nil {
			return c, nil, err
		}
	}
	return c, notes, c.Validate()
}

// Fit fits c's sizes to data of n points and d columns: M <= n inducing points, Q <= min(n, d)
// latent dimensions (the latents start at the data's principal components), Batch <= n. A size the caller set (explicit(field); nil: none) that
// does not fit is an *option.Error naming the field and the largest value that fits; one it did
// not set is lowered, and the change is returned as a note.
func Fit(c *model.Config, n, d int, explicit func(field string) bool) ([]Adjustment, error) {
	if n < 1 || d < 1 {
		return nil, fmt.Errorf("protocol: Fit to %d points of %d columns: want both >= 1", n, d)
	}
	var notes []Adjustment
	for _, l := range []struct {
		field string
		value *int
		max   int
		fix   string
	}{
		{"M", &c.M, n, fmt.Sprintf("more inducing points than the %d data points", n)},
		{"Q", &c.Q, min(n, d), fmt.Sprintf("more latent dimensions than min(N, D) = %d (the latents start at the data's principal components)", min(n, d))},
		{"Batch", &c.Batch, n, fmt.Sprintf("a mini-batch larger than the %d data points (0 = full batch)", n)},
	} {
		if *l.value <= l.max {
			continue
		}
		if explicit != nil && explicit(l.field) {
			return notes, option.Of(l.field, "%s %d: %s; use %s %d or less", l.field, *l.value, l.fix, l.field, l.max)
		}
		notes = append(notes, Adjustment{Field: l.field, From: *l.value, To: l.max, Why: l.fix})
		*l.value = l.max
	}
	return notes, nil
}

// Adjustment is a size Fit lowered to fit the data: Field (a model.Config field) from From to To,
// because From would be Why.
type Adjustment struct {
	Field    string
	From, To int
	Why      string
}

// String says the adjustment in words, naming the field by name(Field) (nil: its Go name).
func (a Adjustment) String() string { return a.Say(nil) }

// Say says the adjustment in words, naming the field by name(Field) (nil: its Go name), e.g. a
// command's flag for it.
func (a Adjustment) Say(name func(field string) string) string {
	f := a.Field
	if name != nil {
		f = name(f)
	}
	return fmt.Sprintf("%s defaults to %d here (%d would be %s)", f, a.To, a.From, a.Why)
}
