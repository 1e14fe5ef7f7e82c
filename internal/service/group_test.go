package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// journal records what the parts did, in order.
type journal struct {
	mu  sync.Mutex
	log []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.log = append(j.log, s)
}

func (j *journal) get() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.log...)
}

// server is a part that serves until its context ends, then records its stop.
func server(j *journal, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		<-ctx.Done()
		j.add(name + " stopped")
		return nil
	}
}

func TestGroup_CancelDrainsInReverseOrder(t *testing.T) {
	j := &journal{}
	g := &Group{Log: quiet}
	for _, name := range []string{"conductor", "netboot", "api"} {
		g.Go(name, server(j, name))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	if diff := cmp.Diff([]string{"api stopped", "netboot stopped", "conductor stopped"}, j.get()); diff != "" {
		t.Errorf("stop order (-want +got):\n%s", diff)
	}
}

func TestGroup_AFailingPartStopsTheOthersAndIsReturned(t *testing.T) {
	j := &journal{}
	g := &Group{Log: quiet}
	g.Go("conductor", server(j, "conductor"))
	boom := errors.New("address already in use")
	g.Go("netboot", func(context.Context) error { return fmt.Errorf("dhcp: %w", boom) })
	g.Go("api", server(j, "api"))
	err := g.Run(context.Background())
	if !errors.Is(err, boom) || err.Error() != "netboot: dhcp: address already in use" {
		t.Fatalf("Run = %v, want the netboot's error named by its part", err)
	}
	if diff := cmp.Diff([]string{"api stopped", "conductor stopped"}, j.get()); diff != "" {
		t.Errorf("stops (-want +got):\n%s", diff)
	}
}

func TestGroup_StopRequestIsNoError(t *testing.T) {
	j := &journal{}
	g := &Group{Log: quiet}
	g.Go("conductor", server(j, "conductor"))
	g.Go("signals", func(context.Context) error { return fmt.Errorf("%w: received terminated", ErrStop) })
	if err := g.Run(context.Background()); err != nil {
		t.Fatalf("Run after a stop request: %v", err)
	}
	if diff := cmp.Diff([]string{"conductor stopped"}, j.get()); diff != "" {
		t.Errorf("stops (-want +got):\n%s", diff)
	}
}

// A failure while draining makes the stop an error too, with the part's name.
func TestGroup_DrainErrorsAreReturned(t *testing.T) {
	g := &Group{Log: quiet}
	g.Go("conductor", func(ctx context.Context) error {
		<-ctx.Done()
		return errors.New("release locks: database is closed")
	})
	g.Go("api", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }) // a clean stop
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := g.Run(ctx)
	if err == nil || err.Error() != "conductor: release locks: database is closed" {
		t.Fatalf("Run = %v", err)
	}
}

// The first failure comes first; what failed while the others drained
// follows it.
func TestGroup_FirstFailureFirst(t *testing.T) {
	g := &Group{Log: quiet}
	g.Go("conductor", func(ctx context.Context) error { <-ctx.Done(); return errors.New("tasks cancelled") })
	g.Go("api", func(context.Context) error { return errors.New("accept: too many open files") })
	err := g.Run(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "api: accept: too many open files\nconductor: tasks cancelled") {
		t.Fatalf("Run = %q", err)
	}
}

// A part that ends early without an error leaves the others running; when
// every part has ended, Run returns.
func TestGroup_PartEndingEarlyIsNotAStop(t *testing.T) {
	j := &journal{}
	g := &Group{Log: quiet}
	release := make(chan struct{})
	g.Go("conductor", func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			j.add("conductor cancelled")
		case <-release:
			j.add("conductor ended")
		}
		return nil
	})
	g.Go("recovery", func(context.Context) error { j.add("recovery ended"); close(release); return nil })
	if err := g.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"recovery ended", "conductor ended"}, j.get()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Grace bounds the whole drain, not each part's: a part that stops after
// a slow one has only what is left of it.
func TestGroup_GraceBoundsTheWholeDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &Group{Log: quiet, Grace: 10 * time.Second}
		var mu sync.Mutex
		ended := map[string]time.Duration{}
		var start time.Time
		slow := func(name string) func(context.Context) error {
			return func(ctx context.Context) error {
				<-ctx.Done()
				dctx, cancel := DrainContext(ctx)
				defer cancel()
				<-dctx.Done() // tasks that never finish
				mu.Lock()
				ended[name] = time.Since(start)
				mu.Unlock()
				return nil
			}
		}
		g.Go("conductor", slow("conductor"))
		g.Go("api", slow("api"))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- g.Run(ctx) }()
		synctest.Wait()
		start = time.Now()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]time.Duration{"api": 10 * time.Second, "conductor": 10 * time.Second}, ended); diff != "" {
			t.Errorf("drain ended after (-want +got):\n%s", diff)
		}
	})
}

func TestDrainContext_OutsideAGroupHasNoDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dctx, dcancel := DrainContext(ctx)
	defer dcancel()
	if _, ok := dctx.Deadline(); ok || dctx.Err() != nil {
		t.Errorf("DrainContext of a cancelled plain context: deadline %v, err %v", ok, dctx.Err())
	}
}

// The HTTP part lets a request in flight finish when the group stops, and
// the port is closed afterwards.
func TestHTTPServer_ShutdownFinishesRequestsInFlight(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inHandler, finish := make(chan struct{}), make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(inHandler)
		<-finish
		io.WriteString(w, "done")
	}), ReadHeaderTimeout: 5 * time.Second}
	g := &Group{Log: quiet, Grace: time.Minute}
	g.Go("api", HTTPServer{Server: srv, Listener: ln}.Run)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()

	url := "http://" + ln.Addr().String() + "/"
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	type result struct {
		body string
		err  error
	}
	got := make(chan result)
	go func() {
		resp, err := client.Get(url)
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{string(b), err}
	}()
	<-inHandler
	cancel()
	// Shutdown closed the listener before it waits for the request.
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	close(finish)
	if r := <-got; r.err != nil || r.body != "done" {
		t.Errorf("the request in flight: %q, %v", r.body, r.err)
	}
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// A listener that fails makes the HTTP part fail, which stops the group.
func TestHTTPServer_ServeFailureStopsTheGroup(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	j := &journal{}
	g := &Group{Log: quiet}
	g.Go("conductor", server(j, "conductor"))
	g.Go("api", HTTPServer{Server: &http.Server{ReadHeaderTimeout: time.Second}, Listener: failingListener{ln}}.Run)
	err = g.Run(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "api: http server on "+ln.Addr().String()+": ") {
		t.Fatalf("Run = %v", err)
	}
	if diff := cmp.Diff([]string{"conductor stopped"}, j.get()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// failingListener fails Accept as a listener whose socket broke does.
type failingListener struct{ net.Listener }

func (l failingListener) Accept() (net.Conn, error) {
	l.Listener.Close()
	return nil, errors.New("accept: too many open files")
}
