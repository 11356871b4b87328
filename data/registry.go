package data

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Builtin is one of the module's datasets and what the experiments' protocol does with it: the one
// place where a dataset's name decides its loader, the paper's settings for it (Table 4) and how it
// is evaluated. data.Load, package paper, the command's train, reproduce and bench read it here
// (Lookup). A new dataset is one loader and one Register call.
type Builtin struct {
	Name string
	// About says in a few words what the data is (its size, what a row is), for help texts.
	About string
	// Image: each row is an image with pixels on the unit or raw scale (Load's PixelScale); the paper's
	// missing-data protocol (Tables 2 and 3) hides pixels of image datasets, and they train on
	// mini-batches of 100.
	Image bool
	// Q is the latent dimensionality of the paper's Table 4.
	Q int
	// K is Table 4's K where it differs from model.DefaultConfig's 5 (the image datasets: 25);
	// 0 = the default.
	K int
	// SharedQSqrt gives q(u) one square root for all outputs (the image datasets, D = 560 and 784).
	SharedQSqrt bool
	// EvalDraws and ReconChains are the final evaluation's noise draws and reconstruction chains
	// when they differ from the caller's defaults (the image datasets: 2 and 4, since ~2000 images
	// with K = 25 chains dominate a run otherwise); 0 = the default.
	EvalDraws, ReconChains int

	load func(PixelScale) (*Dataset, error)
}

// Load reads the dataset; image datasets put their pixels on scale (Unit: [0, 1], Raw: 0-255),
// the others ignore it.
func (b Builtin) Load(scale PixelScale) (*Dataset, error) {
	if b.load == nil {
		return nil, fmt.Errorf("dataset %q has no loader", b.Name)
	}
	return b.load(scale)
}

var (
	builtinMu sync.RWMutex
	builtins  []Builtin // in registration order: the paper's four first
)

func init() {
	for _, b := range []struct {
		b    Builtin
		load func(PixelScale) (*Dataset, error)
	}{
		{Builtin{Name: "oilflow", About: "1000 x 12, 3 flow regimes", Q: 10}, func(PixelScale) (*Dataset, error) { return Oilflow() }},
		{Builtin{Name: "wine", About: "red wine, 1599 x 11, quality labels", Q: 9}, func(PixelScale) (*Dataset, error) { return Wine() }},
		{Builtin{Name: "frey", About: "1965 faces of 28 x 20 pixels", Image: true, Q: 20, K: 25, SharedQSqrt: true, EvalDraws: 2, ReconChains: 4}, Frey},
		{Builtin{Name: "mnist", About: "MNIST's 2163 test 1s and 7s, 28 x 28", Image: true, Q: 5, K: 25, SharedQSqrt: true, EvalDraws: 2, ReconChains: 4}, MNIST17},
		{Builtin{Name: "wine-white", About: "white wine, 4898 x 11, downloaded on first use", Q: 9}, func(PixelScale) (*Dataset, error) { return WineWhite() }},
	} {
		if err := Register(b.b, b.load); err != nil {
			panic(err)
		}
	}
}

// Register adds a built-in dataset with its loader. Errors: no name or loader, a name already
// registered. Unregister removes one (for tests).
func Register(b Builtin, load func(PixelScale) (*Dataset, error)) error {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	if b.Name == "" || load == nil {
		return fmt.Errorf("data: Register needs a name and a loader")
	}
	if slices.ContainsFunc(builtins, func(o Builtin) bool { return o.Name == b.Name }) {
		return fmt.Errorf("data: dataset %q is already registered", b.Name)
	}
	b.load = load
	builtins = append(builtins, b)
	return nil
}

// Unregister removes the dataset registered as name (nothing when there is none).
func Unregister(name string) {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	builtins = slices.DeleteFunc(builtins, func(b Builtin) bool { return b.Name == name })
}

// Lookup returns the built-in dataset name. Errors: an unknown name (the message lists the
// registered ones).
func Lookup(name string) (Builtin, error) {
	builtinMu.RLock()
	defer builtinMu.RUnlock()
	if i := slices.IndexFunc(builtins, func(b Builtin) bool { return b.Name == name }); i >= 0 {
		return builtins[i], nil
	}
	return Builtin{}, fmt.Errorf("unknown dataset %q (want one of %s)", name, strings.Join(namesLocked(), ", "))
}

// Names returns the registered datasets' names, the paper's four first, as they are when called.
func Names() []string {
	builtinMu.RLock()
	defer builtinMu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	out := make([]string, len(builtins))
	for i, b := range builtins {
		out[i] = b.Name
	}
	return out
}

// IsImage reports whether name is a registered image dataset.
func IsImage(name string) bool {
	b, err := Lookup(name)
	return err == nil && b.Image
}

// Describe lists the registered datasets with what each is, for help texts: "oilflow (1000 x 12,
// 3 flow regimes), wine (...), ...".
func Describe() string {
	builtinMu.RLock()
	defer builtinMu.RUnlock()
	out := make([]string, len(builtins))
	for i, b := range builtins {
		out[i] = b.Name
		if b.About != "" {
			out[i] += " (" + b.About + ")"
		}
	}
	return strings.Join(out, ", ")
}
