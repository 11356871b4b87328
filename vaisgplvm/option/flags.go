package option

import (
	"flag"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode"
)

// Ints is a comma-separated list of positive integers as a flag.Value ("5,10,25"), e.g. the K
// values of Table 6: flag.Var((*option.Ints)(&opts.Ks), "ks", usage).
type Ints []int

// String returns the list comma-separated.
func (v *Ints) String() string { return join(*v, func(k int) string { return strconv.Itoa(k) }) }

// Get returns the list as a []int (flag.Getter).
func (v *Ints) Get() any { return []int(*v) }

// Set parses s; an entry that is not an integer >= 1 is an error naming it.
func (v *Ints) Set(s string) error {
	var out []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, k)
	}
	*v = out
	return nil
}

// Floats is a comma-separated list of finite numbers as a flag.Value ("0,0.5,0.9"); with Positive
// set, of numbers > 0 (rates, scale factors).
type Floats struct {
	List     *[]float64
	Positive bool
}

// String returns the list comma-separated.
func (v Floats) String() string {
	if v.List == nil {
		return ""
	}
	return join(*v.List, func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) })
}

// Set parses s; an entry that is not a finite number (> 0 with Positive) is an error naming it.
func (v Floats) Set(s string) error {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		switch {
		case err != nil || math.IsNaN(x) || math.IsInf(x, 0):
			return fmt.Errorf("%q is not a number", f)
		case v.Positive && !(x > 0):
			return fmt.Errorf("%g is not a positive number", x)
		}
		out = append(out, x)
	}
	*v.List = out
	return nil
}

func join[T any](xs []T, s func(T) string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = s(x)
	}
	return strings.Join(parts, ",")
}

// Bind registers on fs a flag for every field of the struct *ptr with a `flag:"name"` tag, bound
// to the field: its usage is the field's `usage` tag (plus extra[name]) and its default the
// field's current value. A name that fs already has is left as it is (several structs may share a
// flag: SetGiven copies its value into the one chosen). Fields must be int, float64, bool, string
// or []int (Ints); another type panics (a programming error, found by any test that binds the
// struct).
func Bind(fs *flag.FlagSet, ptr any, extra map[string]string) {
	v := reflect.ValueOf(ptr).Elem()
	for _, sf := range reflect.VisibleFields(v.Type()) {
		name := sf.Tag.Get("flag")
		if name == "" || fs.Lookup(name) != nil {
			continue
		}
		usage := sf.Tag.Get("usage") + extra[name]
		switch p := v.FieldByIndex(sf.Index).Addr().Interface().(type) {
		case *int:
			fs.IntVar(p, name, *p, usage)
		case *float64:
			fs.Float64Var(p, name, *p, usage)
		case *bool:
			fs.BoolVar(p, name, *p, usage)
		case *string:
			fs.StringVar(p, name, *p, usage)
		case *[]int:
			fs.Var((*Ints)(p), name, usage)
		default:
			panic(fmt.Sprintf("option.Bind: %s.%s: a flag tag on a %s field", v.Type(), sf.Name, sf.Type))
		}
	}
}

// SetGiven sets every field of the struct *ptr with a `flag:"name"` tag for which given(name) is
// true to the value of fs's flag of that name (flag.Getter), which Bind may have bound to another
// struct: the flags a command line gave, copied into the options it chose after parsing. A `min`
// tag bounds an int field. Errors: a value below its min ("--name V: want >= MIN"), a flag that fs
// lacks or whose value's type is not the field's.
func SetGiven(fs *flag.FlagSet, ptr any, given func(name string) bool) error {
	v := reflect.ValueOf(ptr).Elem()
	for _, sf := range reflect.VisibleFields(v.Type()) {
		name := sf.Tag.Get("flag")
		if name == "" || !given(name) {
			continue
		}
		var g flag.Getter
		if f := fs.Lookup(name); f != nil {
			g, _ = f.Value.(flag.Getter)
		}
		if g == nil {
			return fmt.Errorf("option.SetGiven: no flag --%s with a value to get", name)
		}
		val := reflect.ValueOf(g.Get())
		if val.Type() != sf.Type {
			return fmt.Errorf("option.SetGiven: --%s holds a %s, %s.%s is a %s", name, val.Type(), v.Type(), sf.Name, sf.Type)
		}
		if m := sf.Tag.Get("min"); m != "" && val.Kind() == reflect.Int {
			if lo, err := strconv.Atoi(m); err == nil && val.Int() < int64(lo) {
				return fmt.Errorf("--%s %d: want >= %d", name, val.Int(), lo)
			}
		}
		v.FieldByIndex(sf.Index).Set(val)
	}
	return nil
}

// CopyTagged copies into *dst, from src (a struct of the same type), every field with a flag tag
// for which given(tag) is true: the settings a caller gave, on top of a preset.
func CopyTagged[T any](dst *T, src T, given func(flag string) bool) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for _, sf := range reflect.VisibleFields(d.Type()) {
		if name := sf.Tag.Get("flag"); name != "" && given(name) {
			d.FieldByIndex(sf.Index).Set(s.FieldByIndex(sf.Index))
		}
	}
}

// Tag returns the flag tag of T's field named field ("" when it has none).
func Tag[T any](field string) string {
	if sf, ok := reflect.TypeFor[T]().FieldByName(field); ok {
		return sf.Tag.Get("flag")
	}
	return ""
}

// Kebab writes a Go name in lower case with hyphens between its words, a run of capitals being
// one word and a dot a hyphen ("AISPoints" -> "ais-points", "AdamBeta2" -> "adam-beta2",
// "AIS.Temps" -> "ais-temps"): the usual flag for a setting.
func Kebab(name string) string {
	r := []rune(strings.ReplaceAll(name, ".", ""))
	var b strings.Builder
	for i, c := range r {
		upper := unicode.IsUpper(c)
		nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
		if i > 0 && upper && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]) || nextLower) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// Rule is one setting's value and whether it is acceptable, with what is wanted (Check).
type Rule struct {
	Field string
	Value float64
	OK    bool
	Want  string
}

// Check returns an *Error "Field Value: want Want" for the first rule that is not OK, nil when
// every rule is.
func Check(rules ...Rule) error {
	for _, r := range rules {
		if !r.OK {
			return Of(r.Field, "%s %g: want %s", r.Field, r.Value, r.Want)
		}
	}
	return nil
}
