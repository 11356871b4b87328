package main

import (
	"reflect"
	"strings"
	"unicode"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// fieldFlags are the flags of library settings (option.Error's fields) whose flag is not their
// name in kebab case.
var fieldFlags = map[string]string{"DType": "dtype", "ESSK": "ess", "File": "data", "Family": "families", "LRs": "lr-sweep"}

// flagFor returns the command's flag for a library setting's Go name: "--" and fieldFlags' entry,
// model.Config's flag tag, or the name in kebab case ("ReconIters" -> "--recon-iters", "LR" ->
// "--lr"); a name that is a flag already ("--data") is kept.
func flagFor(field string) string {
	if strings.HasPrefix(field, "-") {
		return field
	}
	if f, ok := fieldFlags[field]; ok {
		return "--" + f
	}
	if sf, ok := reflect.TypeFor[model.Config]().FieldByName(field); ok && sf.Tag.Get("flag") != "" {
		return "--" + sf.Tag.Get("flag")
	}
	return "--" + kebab(field)
}

// kebab writes a Go name in lower case with hyphens between its words, a run of capitals being
// one word ("AISPoints" -> "ais-points", "AdamBeta2" -> "adam-beta2").
func kebab(name string) string {
	r := []rune(name)
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
