package paper

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/model"
)

// TestTable5Converge: with Converge, Table 5 fits the standard GPLVM by L-BFGS on its MAP
// objective, MF by L-BFGS on the collapsed bound and VAIS by L-BFGS then Adam (oil flow full batch
// though the configuration asks for batches of 20); each run records how its fit ended, the rows
// count the runs converged, the table says "to convergence" (its claims too: standard against
// VAIS with MF's row between them), and the store files such fits under other keys than fits for
// a number of iterations; each training's progress (ConvergeProgress) comes under its own name
// from each of its stages.
func TestTable5Converge(t *testing.T) {
	o := small[Table5Options](5, 20)
	o.Datasets, o.Methods, o.Subset, o.ReconIters = []string{"oilflow"}, []string{"standard", "mf", "vais"}, 40, 3
	o.Converge = &converge.Options{Rule: converge.Rule{Window: 20, Tol: 1e-4}, MaxSeconds: 60}
	o.ConvergeAdam = converge.AdamRule{Window: 50, Halvings: 1}
	o.Store = t.TempDir()
	var mu sync.Mutex
	seen := map[string]map[string]int{} // training -> stage -> progress calls
	o.ConvergeProgress = func(training string) func(converge.Progress) {
		return func(p converge.Progress) {
			mu.Lock()
			defer mu.Unlock()
			if seen[training] == nil {
				seen[training] = map[string]int{}
			}
			seen[training][p.Stage]++
		}
	}
	res, err := Table5(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for training, want := range map[string][]string{"oilflow standard seed 1": {"L-BFGS"}, "oilflow mf seed 1": {"L-BFGS"}, "oilflow vais seed 1": {"L-BFGS", "Adam"}} {
		if len(seen[training]) != len(want) {
			t.Errorf("%s: progress by stage %v, want stages %v", training, seen[training], want)
		}
		for _, stage := range want {
			if seen[training][stage] == 0 {
				t.Errorf("%s: no progress from its %s stage (%v)", training, stage, seen[training])
			}
		}
	}
	stages := map[string]string{"standard": "L-BFGS", "mf": "L-BFGS", "vais": "L-BFGS, then Adam"}
	if len(res.Rows) != 3 {
		t.Fatalf("rows %+v, want standard, mf and vais", res.Rows)
	}
	for _, r := range res.Rows {
		c := r.PerRun[0].Convergence
		if c == nil || c.Stages != stages[r.Method] || c.Iterations == 0 || !(c.Seconds > 0) || c.StoppedBy == "converged" && !c.Converged {
			t.Errorf("%s: convergence %+v, want stages %q", r.Method, c, stages[r.Method])
			continue
		}
		if r.ConvergedRuns == nil || *r.ConvergedRuns != map[bool]int{true: 1, false: 0}[c.Converged] || r.ConvergeSeconds == nil || r.ConvergeSeconds[0] != c.Seconds {
			t.Errorf("%s: row's converged runs %v, seconds %v; the run's %+v", r.Method, r.ConvergedRuns, r.ConvergeSeconds, c)
		}
		if want := c.Seconds / float64(c.Iterations); math.Abs(r.SecPerIter-want) > 1e-12*want {
			t.Errorf("%s: s/iter %g, want the converging fit's %g", r.Method, r.SecPerIter, want)
		}
		if !(r.MSE[0] > 0) || !strings.HasPrefix(r.itersCell(), "to convergence: ") {
			t.Errorf("%s: MSE %v, iterations cell %q", r.Method, r.MSE, r.itersCell())
		}
	}
	if res.Settings["iters"] != "to convergence" || !strings.Contains(res.Settings["converge"].(string), "at most 0.0001 nats over the last 20 L-BFGS iterations") {
		t.Errorf("settings %v", res.Settings)
	}
	if md := res.Markdown(); !strings.Contains(md, "to convergence: 1/1 converged") && !strings.Contains(md, "to convergence: 0/1 converged") {
		t.Errorf("the table does not say how its fits ended:\n%s", md)
	}
	if len(res.Claims) != 2 {
		t.Errorf("%d claims: want the paper's two orderings of standard and vais checked, though mf's row lies between them", len(res.Claims))
	}
	for _, c := range res.Claims {
		if !strings.Contains(c.Ours, "at the end of fits to convergence (") {
			t.Errorf("claim %+v does not say it compares converged fits", c)
		}
	}
	o.Converge, o.Runs = nil, 1
	o.Methods = []string{"standard"}
	again, err := Table5(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if again.Rows[0].PerRun[0].Convergence != nil || again.Rows[0].ConvergedRuns != nil || again.Settings["trainings_stored"] != "0 of 1 read back from an earlier run's store" {
		t.Errorf("without Converge: convergence %+v, stored %v; want a fit for Iters, not the converged one read back", again.Rows[0].PerRun[0].Convergence, again.Settings["trainings_stored"])
	}
}

// TestTable5ContinuationHoldsEta: fitted to convergence, a Table 5 bound that continues from the
// collapsed MF fit (VAIS on oil flow) holds eta_k fixed, as train --converge does; a fit that is not
// continued keeps the protocol's adaptation (VAIS without Converge, VAIS on Frey's mini-batches,
// the standard GPLVM's VAIS configuration), and Configure still overrides it.
func TestTable5ContinuationHoldsEta(t *testing.T) {
	conv := opts{Converge: &converge.Options{}}
	adapt := func(o opts, method, dataset string) bool {
		bound := method
		if method == "standard" {
			bound = "vais"
		}
		c, err := o.configWith(5, bound, dataset, 1, o.continuation(method, dataset))
		if err != nil {
			t.Fatal(err)
		}
		return c.AdaptEta
	}
	if adapt(conv, "vais", "oilflow") {
		t.Error("VAIS on oil flow, converging: eta_k adapted, want it held")
	}
	if !adapt(opts{}, "vais", "oilflow") || !adapt(conv, "vais", "frey") || !adapt(conv, "standard", "oilflow") {
		t.Error("a fit that does not continue from the MF optimum lost the protocol's eta_k adaptation")
	}
	conv.Configure = func(c *model.Config) error { c.AdaptEta = true; return nil }
	if !adapt(conv, "vais", "oilflow") {
		t.Error("Configure's eta_k adaptation was overridden")
	}
}
