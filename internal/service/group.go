// Package service runs the long-running parts of a ferro process (API
// servers, conductor, inspector, netboot, signal handling) as one: each
// part is a Run(ctx) error that serves until ctx ends, then drains and
// returns. The parts run under one errgroup, so one part failing stops the
// others and the process exits with that part's error; they stop in the
// reverse order of their start, as deferred calls do, so the API stops
// taking requests before the conductor stops taking work.
//
// What can refuse to start (a busy port, a bad certificate, a missing
// interface) is done before the group runs: the group only serves.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// ErrStop ends the group without an error: a part returns it (wrapped, to
// say why) to ask for a graceful stop, as the signal handler does on
// SIGTERM.
var ErrStop = errors.New("stop requested")

// Group runs parts together. The zero value is ready to use.
type Group struct {
	// Grace bounds the whole drain: DrainContext of every part ends Grace
	// after the stop began, however long the parts stopped before it took.
	// 0 means no bound.
	Grace time.Duration
	// Log receives which part ended the group and why; nil is slog.Default.
	Log   *slog.Logger
	parts []part
}

type part struct {
	name string
	run  func(ctx context.Context) error
}

// Go adds a part. Parts start together when Run is called and stop in the
// reverse order of Go: a part's context is cancelled once every part added
// after it has returned.
func (g *Group) Go(name string, run func(ctx context.Context) error) {
	g.parts = append(g.parts, part{name: name, run: run})
}

// drain is the deadline the parts drain by, set when the stop begins.
type drain struct {
	mu       sync.Mutex
	deadline time.Time // zero: no bound
}

type drainKey struct{}

// DrainContext is the context a part drains on once its Run context has
// ended (an HTTP server's Shutdown, the conductor waiting for its tasks):
// it keeps ctx's values, is not cancelled with it, and ends at the group's
// drain deadline (Group.Grace after the stop began). Outside a group it
// has no deadline. Call cancel when done.
func DrainContext(ctx context.Context) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(ctx)
	d, _ := ctx.Value(drainKey{}).(*drain)
	if d == nil {
		return context.WithCancel(base)
	}
	d.mu.Lock()
	deadline := d.deadline
	d.mu.Unlock()
	if deadline.IsZero() {
		return context.WithCancel(base)
	}
	return context.WithDeadline(base, deadline)
}

// Run runs the parts until ctx ends, a part fails or a part returns
// ErrStop, then stops them in reverse order and waits for all of them. It
// returns nil after a stop by ctx or ErrStop; otherwise the first failure,
// named by its part ("api: …"), joined with any error a part returned
// while draining. A part that returns nil early simply ends; the others go
// on.
func (g *Group) Run(ctx context.Context) error {
	log := g.Log
	if log == nil {
		log = slog.Default()
	}
	d := &drain{}
	eg, gctx := errgroup.WithContext(ctx)

	var (
		mu   sync.Mutex
		errs []error // failures, in the order they happened
	)
	n := len(g.parts)
	cancels := make([]context.CancelFunc, n)
	dones := make([]chan struct{}, n)
	allDone := make(chan struct{})
	var running sync.WaitGroup
	running.Add(n)
	go func() { running.Wait(); close(allDone) }()

	for i, p := range g.parts {
		// A part's context is cancelled by the stopper below, in order,
		// not by ctx directly; it keeps ctx's values.
		pctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), drainKey{}, d))
		cancels[i], dones[i] = cancel, make(chan struct{})
		eg.Go(func() error {
			defer running.Done()
			defer close(dones[i])
			err := p.run(pctx)
			switch {
			case err == nil:
				if pctx.Err() == nil {
					log.Info("part ended", "part", p.name)
				}
				return nil
			case errors.Is(err, ErrStop):
				log.Info("stopping", "part", p.name, "reason", err.Error())
				return err
			case pctx.Err() != nil && errors.Is(err, context.Canceled):
				return nil // its way of saying it stopped
			}
			err = fmt.Errorf("%s: %w", p.name, err)
			mu.Lock()
			errs = append(errs, err)
			first := len(errs) == 1
			mu.Unlock()
			if first && pctx.Err() == nil {
				log.Error("part failed; stopping the others", "part", p.name, "error", err)
			}
			return err
		})
	}
	eg.Go(func() error {
		select {
		case <-gctx.Done():
		case <-allDone:
			return nil
		}
		log.Info("shutting down")
		d.mu.Lock()
		if g.Grace > 0 {
			d.deadline = time.Now().Add(g.Grace)
		}
		d.mu.Unlock()
		for i := n - 1; i >= 0; i-- {
			cancels[i]()
			<-dones[i]
		}
		return nil
	})
	eg.Wait()
	for _, c := range cancels {
		c()
	}
	mu.Lock()
	defer mu.Unlock()
	return errors.Join(errs...)
}
