// Package interrupt turns SIGINT and SIGTERM into what a run of the command does with them: the
// run's context is cancelled (Stopper), so a training stops after its step and writes a
// checkpoint, and an evidence or inference run stops at its next temperature or iteration; a
// table run that cannot stop while a graph is being built ends the process with status 130 and
// says what was kept (WhenStuck). A second signal ends the process as usual.
package interrupt

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// Stopper turns the first SIGINT or SIGTERM into the end of its context (Context), which a
// training's run takes: the run finishes its step, writes a checkpoint and says how to resume. A
// second signal kills the process as usual.
type Stopper struct {
	ctx    context.Context
	cancel context.CancelFunc
	sigs   chan os.Signal
	done   chan struct{}
	phase  atomic.Value // string: what the run does on a signal now (see SetPhase)
}

// SetPhase sets what the message on a signal says the run does, e.g. "finishing the final
// evaluation and writing the outputs" once training is over.
func (s *Stopper) SetPhase(what string) { s.phase.Store(what) }

// Notify starts catching SIGINT and SIGTERM; Release stops it.
func Notify() *Stopper {
	s := &Stopper{sigs: make(chan os.Signal, 1), done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.SetPhase("stopping after this iteration and writing a checkpoint")
	signal.Notify(s.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-s.sigs:
			signal.Stop(s.sigs) // a second signal ends the process
			os.Stderr.WriteString("\nvaisgplvm: " + sig.String() + ": " + s.phase.Load().(string) + " (signal again to quit at once)\n")
			s.cancel()
		case <-s.done:
		}
	}()
	return s
}

// Context is done on the first signal (and after Release).
func (s *Stopper) Context() context.Context { return s.ctx }

// Release stops catching the signals and ends the context.
func (s *Stopper) Release() {
	signal.Stop(s.sigs)
	close(s.done)
	s.cancel()
}

// WhenStuck ends the process with status 130 and msg on stderr when ctx is done (the first
// SIGINT or SIGTERM) and the run has not returned within grace: a graph being built cannot stop
// between steps, so the signal would otherwise wait for it (minutes for K = 1000). Nothing is lost
// that the run would have kept: outputs are staged until the run finishes. release stops it.
func WhenStuck(ctx context.Context, grace time.Duration, msg string) (release func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		select {
		case <-time.After(grace):
			os.Stderr.WriteString("\nvaisgplvm: " + msg + "\n")
			os.Exit(130)
		case <-done:
		}
	}()
	return func() { close(done) }
}

// Error is a run stopped by a signal, after writing what resumes it where it can: the command
// exits with status 130, the shell's status for SIGINT.
type Error struct{ Msg string }

func (e Error) Error() string { return e.Msg }

// ForRun returns a context that the first SIGINT or SIGTERM cancels, so that command's run stops
// at its next step (a temperature, an iteration) with nothing written to out; a second signal
// ends the process at once. release stops listening.
func ForRun(command, out string) (ctx context.Context, release func()) {
	s := Notify()
	s.SetPhase(command + " stops at its next step; nothing is written to " + out)
	return s.Context(), s.Release
}

// Stopped returns err as an Error saying that command wrote nothing to out when ctx was cancelled
// (by ForRun's signal), else err itself.
func Stopped(ctx context.Context, command, out string, err error) error {
	if ctx.Err() != nil {
		return Error{fmt.Sprintf("%s interrupted (%v): nothing written to %s", command, err, out)}
	}
	return err
}
