package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/study/protocol"
)

// fitToData fits the size flags (--m, --q, --batch) to the data's N points and D columns
// (protocol.Fit; set: the flags given): a flag given that cannot fit is a usage error naming it, a
// default that does not fit is lowered, and the change is printed. A lowered flag counts as given
// from then on, so that it overrides the presets of every training of the run (reproduce).
func (f *modelFlags) fitToData(set map[string]bool, n, d int) error {
	var c model.Config
	c.M, c.Q, c.Batch = f.v.M, f.q, f.v.Batch
	notes, err := protocol.Fit(&c, n, d, func(field string) bool { return set[flagName(field)] })
	if err != nil {
		return err
	}
	f.v.M, f.q, f.v.Batch = c.M, c.Q, c.Batch
	for _, a := range notes {
		fmt.Fprintln(os.Stderr, "vaisgplvm: "+a.Say(flagFor))
		set[flagName(a.Field)] = true
	}
	return nil
}

// flagName is flagFor without the leading "--": the name flag.FlagSet knows.
func flagName(field string) string { return strings.TrimPrefix(flagFor(field), "--") }
