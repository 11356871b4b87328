package main

import (
	"os"
	"os/signal"
	"syscall"
)

// stopper turns the first SIGINT or SIGTERM into a closed channel (train.Trainer.Stop): the run
// finishes its step, writes a checkpoint and says how to resume. A second signal kills the
// process as usual.
type stopper struct {
	ch   chan struct{}
	sigs chan os.Signal
	done chan struct{}
}

// notifyStop starts catching SIGINT and SIGTERM; release stops it.
func notifyStop() *stopper {
	s := &stopper{ch: make(chan struct{}), sigs: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(s.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-s.sigs:
			signal.Stop(s.sigs) // a second signal ends the process
			os.Stderr.WriteString("\nvaisgplvm: " + sig.String() + ": stopping after this iteration and writing a checkpoint (signal again to quit at once)\n")
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
