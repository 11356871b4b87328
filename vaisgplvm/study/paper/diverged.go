package paper

import (
	"fmt"
	"time"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/option"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// DivergedRun is a training of Tables 1-3 or a fit of Table 5 that diverged (option.Diverged): a result of the table,
// not a failure of it. The table goes on with the other trainings; this one is left out of every
// row from the first snapshot it did not reach (its rows before that keep it), and the store keeps
// it, so a rerun of the same command does not train it again (training is deterministic by seed).
type DivergedRun struct {
	Dataset   string `json:"dataset"`
	Method    string `json:"method"`
	Seed      uint64 `json:"seed"`
	Iteration int    `json:"iteration"` // where the divergence was found
	Reason    string `json:"reason"`    // option.Diverged's message, with the setting to change
}

// divergedRuns lists the jobs that diverged, in the table's order.
func divergedRuns(jobs []job) []DivergedRun {
	var out []DivergedRun
	for _, j := range jobs {
		if j.diverged != nil {
			out = append(out, *j.diverged)
		}
	}
	return out
}

// divergedTable renders the diverged trainings, nil when none diverged.
func divergedTable(runs []DivergedRun) *report.Table {
	if len(runs) == 0 {
		return nil
	}
	t := &report.Table{Title: "Trainings that diverged: results of the table, left out of the rows from the first snapshot " +
		"they did not reach (those rows' method says how many seeds remain). The same command reads them back instead of " +
		"training them again.",
		Header: []string{"dataset", "method", "seed", "iteration", "reason"}}
	for _, r := range runs {
		t.Rows = append(t.Rows, []string{r.Dataset, r.Method, fmt.Sprint(r.Seed), fmt.Sprint(r.Iteration), r.Reason})
	}
	return t
}

// methodCell is a row's method with its runs, saying how many seeds are left when some diverged
// before the row's iterations: "vais (2 of 3 seeds; 1 diverged)".
func methodCell(method string, runs int, diverged []uint64) string {
	if len(diverged) == 0 {
		return method
	}
	return fmt.Sprintf("%s (%d of %d seeds; %d diverged)", method, runs, runs+len(diverged), len(diverged))
}

// divergedFrom returns the DivergedRun of a training whose error is err, nil when err is not a
// divergence (option.Diverged).
func divergedFrom(err error, dataset, method string, seed uint64) *DivergedRun {
	d := option.AsDiverged(err)
	if d == nil {
		return nil
	}
	return &DivergedRun{Dataset: dataset, Method: method, Seed: seed, Iteration: d.Iteration, Reason: d.Error()}
}

// logFinished writes a training's end to the log (when set): done, or diverged and recorded.
func (o opts) logFinished(dataset, method string, seed uint64, diverged *DivergedRun, start time.Time) {
	switch {
	case o.Log == nil:
	case diverged != nil:
		fmt.Fprintf(o.Log, "%s %s seed %d diverged at iteration %d; recorded in the table, which goes on (%.0f s elapsed): %s\n",
			dataset, method, seed, diverged.Iteration, time.Since(start).Seconds(), diverged.Reason)
	default:
		fmt.Fprintf(o.Log, "%s %s seed %d done (%.0f s elapsed)\n", dataset, method, seed, time.Since(start).Seconds())
	}
}
