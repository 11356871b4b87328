package bounds

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Setting is a number that belongs to one bound (a momentum damping, a mass, a Renyi alpha): its
// name (the key in model.Config.BoundSettings and, after the bound's name, the command's flag
// --BOUND-NAME), its default, a one-line usage and a check. A bound declares its settings by
// implementing Configurable; Inputs.Settings hands their values to Evaluate.
type Setting struct {
	Name    string
	Default float64
	Usage   string
	// Check returns an error naming what is wrong with v (nil: any finite value is accepted).
	Check func(v float64) error
}

// Configurable is a Method with settings of its own.
type Configurable interface {
	Method
	Settings() []Setting
}

// SettingsOf returns m's settings (none unless m is Configurable).
func SettingsOf(m Method) []Setting {
	if c, ok := m.(Configurable); ok {
		return c.Settings()
	}
	return nil
}

// ResolveSettings returns every setting of m with given's value, or its default where given has
// none. Errors: a name m does not declare (the message lists those it does), a value that is not
// finite or that the setting's Check refuses.
func ResolveSettings(m Method, given map[string]float64) (map[string]float64, error) {
	if m == nil {
		return nil, fmt.Errorf("bound settings: nil Method: look one up with bounds.Lookup")
	}
	decl := SettingsOf(m)
	out := make(map[string]float64, len(decl))
	for _, s := range decl {
		out[s.Name] = s.Default
	}
	for _, name := range slices.Sorted(maps.Keys(given)) {
		v := given[name]
		i := slices.IndexFunc(decl, func(s Setting) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("bound setting %q: method %s has %s", name, m.Name(), settingNames(decl))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("bound setting %s-%s = %g: want a finite number", m.Name(), name, v)
		}
		if c := decl[i].Check; c != nil {
			if err := c(v); err != nil {
				return nil, fmt.Errorf("bound setting %s-%s = %g: %w", m.Name(), name, v, err)
			}
		}
		out[name] = v
	}
	return out, nil
}

func settingNames(decl []Setting) string {
	if len(decl) == 0 {
		return "no settings"
	}
	names := make([]string, len(decl))
	for i, s := range decl {
		names[i] = s.Name
	}
	return "the settings " + strings.Join(names, ", ")
}
