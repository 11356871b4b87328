// Package option holds how the library names, checks and binds the settings a caller chooses. Its
// one error type for a setting the library cannot use is Error: a dataset it does not have, a size
// that does not fit the data or the machine's memory, an output directory that holds another run;
// Failure is a run that failed with advice on settings (a diverging training: "lower LR"). Both
// name each setting by its Go name (a Config or Options field, "LR", "Pixels"); a command maps
// those names to its flags (Reword), so that no library message has to know the command line.
// The flag helpers (Ints, Floats, Bind, CopyTagged, Tag, Kebab) and the rule check (Rule, Check)
// are the small pieces a command needs to map flags to the library's options.
package option

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// Error is a setting the caller can change to make the call work.
//
// Fields are the settings the message names, the one at fault first, each written in Msg as its
// Go name. For a refusal on memory, Need and Have are bytes (Have: the machine's memory) and
// Fields are the settings that lower the need.
type Error struct {
	Fields     []string
	Msg        string
	Need, Have float64
	// Cause is the error that made the setting unusable, when there is one (Wrap; errors.Is and
	// errors.As see it through Unwrap).
	Cause error
}

// Unwrap returns Cause.
func (e *Error) Unwrap() error { return e.Cause }

// Wrap returns err as an *Error about field: err itself when it is one already (or wraps one),
// else an *Error with err's message and err as its Cause; nil for nil. For a failure that only a
// different setting can fix, e.g. an output directory that cannot be created or is in use.
func Wrap(field string, err error) error {
	var oe *Error
	if err == nil || errors.As(err, &oe) {
		return err
	}
	return &Error{Fields: []string{field}, Msg: err.Error(), Cause: err}
}

// Error returns the message in the library's words.
func (e *Error) Error() string { return e.Msg }

// Field returns the setting at fault (the first of Fields), "" when there is none.
func (e *Error) Field() string {
	if len(e.Fields) == 0 {
		return ""
	}
	return e.Fields[0]
}

// Reword returns the message with every whole-word occurrence of a setting of Fields replaced by
// name(setting), e.g. a command's flag for it ("LR" -> "--lr").
func (e *Error) Reword(name func(field string) string) string { return reword(e.Msg, e.Fields, name) }

func reword(msg string, fields []string, name func(field string) string) string {
	for _, f := range fields {
		re := regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(f) + `\b`)
		msg = re.ReplaceAllStringFunc(msg, func(m string) string {
			i := strings.Index(m, f)
			return m[:i] + name(f)
		})
	}
	return msg
}

// Failure is a run that failed (not a setting refused before it: that is an Error) with advice
// on the settings that may make it work, e.g. a diverging training and a lower LR. Fields and Msg
// are as in Error; Cause is the error wrapped, when there is one.
type Failure struct {
	Fields []string
	Msg    string
	Cause  error
}

// Failf returns a *Failure about the settings fields with the formatted message (a %w verb
// wraps its argument as Cause).
func Failf(fields []string, format string, args ...any) error {
	e := fmt.Errorf(format, args...)
	return &Failure{Fields: fields, Msg: e.Error(), Cause: errors.Unwrap(e)}
}

// Error returns the message in the library's words.
func (f *Failure) Error() string { return f.Msg }

// Unwrap returns Cause.
func (f *Failure) Unwrap() error { return f.Cause }

// Reword is Error.Reword for a failure.
func (f *Failure) Reword(name func(field string) string) string { return reword(f.Msg, f.Fields, name) }

// Errorf returns an *Error about the settings fields (the one at fault first) with the formatted
// message, which names each setting by its Go name: Errorf([]string{"Pixels"}, "Pixels %q: want
// unit or raw", p). The one-field form is Of.
func Errorf(fields []string, format string, args ...any) error {
	return &Error{Fields: fields, Msg: fmt.Sprintf(format, args...)}
}

// Of returns an *Error about one setting with the formatted message, which begins with the
// setting's Go name: Of("Pixels", "Pixels %q: want unit or raw", p).
func Of(field, format string, args ...any) error {
	return &Error{Fields: []string{field}, Msg: fmt.Sprintf(format, args...)}
}

// Memory returns the refusal of work (e.g. "a training step on 1000 points") that needs need
// bytes where the machine has have, naming the settings that lower the need.
func Memory(work string, need, have float64, lower ...string) error {
	fix := strings.Join(lower, ", ")
	if n := len(lower); n > 1 {
		fix = strings.Join(lower[:n-1], ", ") + " or " + lower[n-1]
	}
	return &Error{Fields: lower, Need: need, Have: have,
		Msg: fmt.Sprintf("%s needs about %s of memory, more than this machine's %.3g GiB; lower %s", work, GiB(need), have/(1<<30), fix)}
}

// GiB writes b bytes in GiB with 3 significant digits ("more than a million GiB" beyond that or
// for a non-finite b).
func GiB(b float64) string {
	if b > 1e6*(1<<30) || math.IsInf(b, 0) || math.IsNaN(b) {
		return "more than a million GiB"
	}
	return fmt.Sprintf("%.3g GiB", b/(1<<30))
}

// Within returns err with context before its message: for an *Error a copy of it (still an
// *Error, so a command can reword it), for other errors fmt.Errorf("context: %w", err); nil for
// nil.
func Within(context string, err error) error {
	if err == nil {
		return nil
	}
	var oe *Error
	if errors.As(err, &oe) {
		c := *oe
		c.Msg = context + ": " + oe.Msg
		return &c
	}
	return fmt.Errorf("%s: %w", context, err)
}
