package paper

import (
	"bytes"
	"strings"
	"testing"

	backends "github.com/gomlx/compute"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
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

// TestObserverFollowsJobs: with both observers set, a table whose Jobs the CUDA plugin lowered to
// 1 reports to Observe (the one-training display), one that runs several at once to ObserveJob.
func TestObserverFollowsJobs(t *testing.T) {
	var single, named int
	o := Options{Jobs: 8,
		Observe:    func(train.Event) { single++ },
		ObserveJob: func(string) func(train.Event) { return func(train.Event) { named++ } }}
	o.observer("frey", "vais", 1, 10)(train.Event{})
	if single != 0 || named != 1 {
		t.Fatalf("Jobs 8: Observe got %d events, ObserveJob's %d; want 0 and 1", single, named)
	}
	o.jobsFor(cudaNamed{}).observer("frey", "vais", 1, 10)(train.Event{})
	if single != 1 || named != 1 {
		t.Errorf("Jobs lowered to 1: Observe got %d events, ObserveJob's %d; want 1 and 1", single, named)
	}
	o.ObserveJob, o.Jobs = func(string) func(train.Event) { return func(train.Event) { named++ } }, 1
	o.Observe = nil
	o.observer("frey", "vais", 1, 10)(train.Event{})
	if named != 2 {
		t.Errorf("Jobs 1 with ObserveJob alone: it got %d events in all, want 2", named)
	}
}
