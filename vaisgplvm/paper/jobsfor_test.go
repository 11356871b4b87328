package paper

import (
	"bytes"
	"strings"
	"testing"

	backends "github.com/gomlx/compute"
)

// cudaNamed answers Name and PluginName as go-xla's backend on JAX's CUDA plugin does.
type cudaNamed struct{ backends.Backend }

func (cudaNamed) Name() string       { return "xla" }
func (cudaNamed) PluginName() string { return "cuda" }

// TestJobsForCUDA: a table run on a CUDA plugin trains one at a time whatever Jobs asks, and says
// so; Jobs 1 is left as it is, silently.
func TestJobsForCUDA(t *testing.T) {
	var log bytes.Buffer
	o := Options{Jobs: 8, Log: &log}.jobsFor(cudaNamed{})
	if o.Jobs != 1 || !strings.Contains(log.String(), "xla:cuda: 1 training at a time instead of 8 (Jobs)") {
		t.Errorf("Jobs %d, log %q: want 1 and the reason", o.Jobs, log.String())
	}
	log.Reset()
	if o = (Options{Jobs: 1, Log: &log}).jobsFor(cudaNamed{}); o.Jobs != 1 || log.Len() != 0 {
		t.Errorf("Jobs %d, log %q: want 1 and nothing said", o.Jobs, log.String())
	}
}
