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
	o := opts{Jobs: 8, Log: &log}.jobsFor(cudaNamed{})
	if o.Jobs != 1 || !strings.Contains(log.String(), "xla:cuda: 1 training at a time instead of 8 (Jobs)") {
		t.Errorf("Jobs %d, log %q: want 1 and the reason", o.Jobs, log.String())
	}
	log.Reset()
	if o = (opts{Jobs: 1, Log: &log}).jobsFor(cudaNamed{}); o.Jobs != 1 || log.Len() != 0 {
		t.Errorf("Jobs %d, log %q: want 1 and nothing said", o.Jobs, log.String())
	}
}

// TestObserverFollowsJobs: the Observer is planned with the Jobs the table runs with (8, or 1
// once the CUDA plugin lowered it), so that it can pick the display that fits; each training's
// observer gets the table's total iterations in its events.
func TestObserverFollowsJobs(t *testing.T) {
	var jobs, total int
	o := opts{Jobs: 8, Observer: ObserverFuncs{PlanFunc: func(_, j int) { jobs = j },
		TrainingFunc: func(string) func(train.Event) { return func(e train.Event) { total = e.Total } }}}
	o.plan(3)
	o.observer("frey", "vais", 1, 10)(train.Event{Total: 4})
	if jobs != 8 || total != 10 {
		t.Fatalf("Jobs 8: planned with %d jobs, event total %d; want 8 and 10", jobs, total)
	}
	o.jobsFor(cudaNamed{}).plan(3)
	if jobs != 1 {
		t.Errorf("Jobs lowered to 1: planned with %d jobs", jobs)
	}
	if (opts{Observer: ObserverFuncs{}}).observer("frey", "vais", 1, 10) != nil {
		t.Error("an Observer without TrainingFunc gave a step observer")
	}
}
