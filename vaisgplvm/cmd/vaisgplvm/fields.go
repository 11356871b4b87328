package main

import (
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
)

// fieldFlags are the flags of library settings (option.Error's fields) whose flag is not their
// name in kebab case.
var fieldFlags = map[string]string{"DType": "dtype", "ESSK": "ess", "File": "data", "Family": "families", "LRs": "lr-sweep", "Whitened": "unwhitened"}

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
	if tag := option.Tag[model.Config](field); tag != "" {
		return "--" + tag
	}
	return "--" + option.Kebab(field)
}
