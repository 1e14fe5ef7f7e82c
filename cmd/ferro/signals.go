package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ferrometal/ferro/internal/service"
)

// signals is how a ferro process answers signals: SIGTERM and SIGINT stop
// it gracefully, SIGHUP reloads the certificate and the http_basic user
// file. It subscribes when made, before anything starts, so that no signal
// takes its default action (exit) once ferro is up, and stays subscribed
// until stop: a second SIGTERM while the process drains is absorbed.
type signals struct{ ch chan os.Signal }

func subscribeSignals() *signals {
	s := &signals{ch: make(chan os.Signal, 4)}
	signal.Notify(s.ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	return s
}

// stop unsubscribes.
func (s *signals) stop() { signal.Stop(s.ch) }

// part is the service.Group part: it calls reload on every SIGHUP and ends
// the group (service.ErrStop) on SIGTERM or SIGINT.
func (s *signals) part(reload func()) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case sig := <-s.ch:
				if sig == syscall.SIGHUP {
					reload()
					continue
				}
				return fmt.Errorf("%w: received %v", service.ErrStop, sig)
			}
		}
	}
}

// duringStart watches for SIGTERM and SIGINT while start-up waits (for the
// database): one cancels the returned context. started ends the watch and
// returns the signal that arrived, nil if none; from then on the signals
// go to part. A SIGHUP meanwhile is dropped: nothing is loaded to reload.
func (s *signals) duringStart(ctx context.Context) (context.Context, func() os.Signal) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop, done := make(chan struct{}), make(chan struct{})
	var got os.Signal
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case sig := <-s.ch:
				if sig == syscall.SIGHUP {
					continue
				}
				got = sig
				cancel(fmt.Errorf("received %v", sig))
				return
			}
		}
	}()
	return ctx, func() os.Signal {
		close(stop)
		<-done
		cancel(nil)
		return got
	}
}
