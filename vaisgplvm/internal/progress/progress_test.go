package progress

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/converge"
	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/train"
)

// TestTrainings: one observer draws a bar per run (a new bound, a new total, or a count that goes
// back starts one), describing each with its bound and -ELBO per point; a nil writer draws nothing.
func TestTrainings(t *testing.T) {
	var buf bytes.Buffer
	obs := Trainings(&buf)
	for _, e := range []train.Event{{Method: "vais", Iter: 1, Total: 2, NegELBO: 3.5}, {Method: "vais", Iter: 2, Total: 2, NegELBO: 3.25},
		{Method: "mf", Iter: 1, Total: 3, NegELBO: 9}, {Method: "mf", Iter: 1, Total: 3, NegELBO: 8}} {
		obs(e)
	}
	out := buf.String()
	for _, want := range []string{"vais -ELBO/N 3.5000 (1/2", "vais -ELBO/N 3.2500 (2/2", "mf -ELBO/N 9.0000 (1/3", "mf -ELBO/N 8.0000 (1/3"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress output lacks %q:\n%q", want, out)
		}
	}
	// Not a terminal (a buffer, a redirected stderr): plain lines, no carriage returns (issue 55:
	// 69 KB of redraws for 3000 iterations).
	if strings.ContainsRune(out, '\r') || strings.Count(out, "\n") != 4 {
		t.Errorf("plain output has carriage returns or not one line per run's first and last step:\n%q", out)
	}
	New(nil, 3, "x").Set(1, "nothing") // must not panic
}

// TestJobs: concurrent trainings each report under their own name; the status lists the running
// ones with their iteration, total and time left, and counts the finished ones.
func TestJobs(t *testing.T) {
	var buf bytes.Buffer
	obs := NewJobs(&buf, 0)
	a, b := obs.Job("oilflow vais seed 1"), obs.Job("wine mf seed 1")
	a(train.Event{Method: "vais", Iter: 10, Total: 100, NegELBO: 2.5, Seconds: 0.5})
	b(train.Event{Method: "mf", Iter: 5, Total: 5, NegELBO: 1})
	out := buf.String()
	for _, want := range []string{"oilflow vais seed 1", "10/100", "about 45s left", "1 trainings finished, 1 running"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	NewJobs(nil, 0).Job("x")(train.Event{Iter: 1, Total: 2}) // must not panic
}

// TestJobsPlanEstimate: with a plan, the header counts the waiting trainings and estimates the time
// left for all: here one running (90 iterations left at 0.5 s), one finished (100 at 0.3 s), two
// waiting (each at the mean 100 iterations and (50 + 30) / 200 = 0.4 s per iteration), two at a
// time: (45 + 2 * 40) / 2 = 62.5 s.
func TestJobsPlanEstimate(t *testing.T) {
	var buf bytes.Buffer
	s := NewJobs(&buf, 0)
	s.Plan(4)
	a, b := s.Job("a"), s.Job("b")
	b(train.Event{Iter: 50, Total: 100, Seconds: 0.3})
	a(train.Event{Iter: 10, Total: 100, Seconds: 0.5})
	buf.Reset()
	b(train.Event{Iter: 100, Total: 100, Seconds: 0.3})
	out := buf.String()
	for _, want := range []string{"1 of 4 trainings finished, 1 running, 2 waiting", "about 1m3s left in all"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

// TestConverge: an L-BFGS line every 50 iterations (not between, within 15 s) with the rise against
// the rule's limit, an Adam line at every window's end with the halvings against the rule's, each
// after the training's name when there is one.
func TestConverge(t *testing.T) {
	var buf bytes.Buffer
	obs := Converge(&buf, "wine mf seed 2", converge.Rule{Window: 50, Tol: 1e-4}, 4)
	obs(converge.Progress{Stage: "L-BFGS", Iter: 49, NegELBO: 8, Change: math.NaN()})
	obs(converge.Progress{Stage: "L-BFGS", Iter: 50, NegELBO: 7.5, Change: math.NaN(), Seconds: 12})
	obs(converge.Progress{Stage: "L-BFGS", Iter: 100, NegELBO: 7.25, Change: 0.25, Seconds: 24})
	obs(converge.Progress{Stage: "Adam", Iter: 400, NegELBO: 6.5, Change: 0.125, Halvings: 1, Seconds: 30})
	want := "wine mf seed 2: L-BFGS iteration 50: -ELBO per point 7.5, rise over 50 iterations not yet measured (converged at <= 0.0001), 12 s\n" +
		"wine mf seed 2: L-BFGS iteration 100: -ELBO per point 7.25, rise over 50 iterations 0.25 (converged at <= 0.0001), 24 s\n" +
		"wine mf seed 2: Adam iteration 400: -ELBO per point 6.5 (window mean), fall from the window before 0.125, 1 step-size halvings (converged at a plateau after 4), 30 s\n"
	if got := buf.String(); got != want {
		t.Errorf("lines:\n%s\nwant:\n%s", got, want)
	}
	buf.Reset()
	Converge(&buf, "", converge.Rule{Window: 20, Tol: 1e-3}, 0)(converge.Progress{Stage: "Adam", Iter: 200, NegELBO: 1, Change: 0.5})
	if got := buf.String(); !strings.HasPrefix(got, "Adam iteration 200:") || strings.Contains(got, "plateau after") {
		t.Errorf("unnamed Adam line without a rule's halvings: %q", got)
	}
}
