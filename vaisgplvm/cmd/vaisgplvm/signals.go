package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// stopper turns the first SIGINT or SIGTERM into a closed channel (train.Trainer.Stop): the run
// finishes its step, writes a checkpoint and says how to resume. A second signal kills the
// process as usual.
type stopper struct {
	ch    chan struct{}
	sigs  chan os.Signal
	done  chan struct{}
	phase atomic.Value // string: what the run does on a signal now (see setPhase)
}

// setPhase sets what the message on a signal says the run does, e.g. "finishing the final
// evaluation and writing the outputs" once training is over.
func (s *stopper) setPhase(what string) { s.phase.Store(what) }

// notifyStop starts catching SIGINT and SIGTERM; release stops it.
func notifyStop() *stopper {
	s := &stopper{ch: make(chan struct{}), sigs: make(chan os.Signal, 1), done: make(chan struct{})}
	s.setPhase("stopping after this iteration and writing a checkpoint")
	signal.Notify(s.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-s.sigs:
			signal.Stop(s.sigs) // a second signal ends the process
			os.Stderr.WriteString("\nvaisgplvm: " + sig.String() + ": " + s.phase.Load().(string) + " (signal again to quit at once)\n")
			close(s.ch)
		case <-s.done:
		}
	}()
	return s
}

func (s *stopper) release() {
	signal.Stop(s.sigs)
	close(s.done)
}

// interruptedError is a run stopped by a signal after writing what resumes it: exit status 130,
// the shell's status for SIGINT.
type interruptedError struct{ msg string }

func (e interruptedError) Error() string { return e.msg }

// exitWhenStuck ends the process with status 130 and msg on stderr when ctx is done (the first
// SIGINT or SIGTERM) and the run has not returned within grace: a graph being built cannot stop
// between steps, so the signal would otherwise wait for it (minutes for K = 1000). Nothing is lost
// that the run would have kept: outputs are staged until the run finishes. release stops it.
func exitWhenStuck(ctx context.Context, grace time.Duration, msg string) (release func()) {
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

// exitOnSignal makes the first SIGINT or SIGTERM end a run that cannot stop between steps (its
// library call is not interruptible): it says so on stderr, naming out, where nothing is written
// (the run's staged outputs are removed by the next run there), and exits 130. release stops it.
func exitOnSignal(command, out string) (release func()) {
	sigs := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-sigs:
			os.Stderr.WriteString("vaisgplvm: " + command + " interrupted by " + sig.String() + ": nothing written to " + out + "\n")
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}
