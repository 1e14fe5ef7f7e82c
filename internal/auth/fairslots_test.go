package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// TestFairSlots_TakesTurnsByClient: freed slots go to the waiting clients
// in turn, first come first served within one; a full queue refuses; a
// waiter that gives up leaves no trace.
func TestFairSlots_TakesTurnsByClient(t *testing.T) {
	f := newFairSlots(1, 3, 5)
	if err := f.acquire(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	var order []string
	got := make(chan string)
	wait := func(client, name string) {
		go func() {
			if err := f.acquire(context.Background(), client); err != nil {
				got <- "error " + err.Error()
				return
			}
			got <- name
		}()
	}
	queued := func(n int) {
		t.Helper()
		for {
			if _, w := f.stats(); w == n {
				return
			}
			// The goroutines enqueue without an event to wait on: yield.
			runtime.Gosched()
		}
	}
	// a floods three, then b and c ask once each.
	for i, name := range []string{"a1", "a2", "a3"} {
		wait("a", name)
		queued(i + 1)
	}
	if err := f.acquire(t.Context(), "a"); !errors.Is(err, errSlotsBusy) {
		t.Errorf("a fourth waiter of a: %v, want errSlotsBusy", err)
	}
	wait("b", "b1")
	queued(4)
	wait("c", "c1")
	queued(5)
	if err := f.acquire(t.Context(), "d"); !errors.Is(err, errSlotsBusy) {
		t.Errorf("a waiter past the queue's bound: %v, want errSlotsBusy", err)
	}
	for range 5 {
		f.release()
		order = append(order, <-got)
	}
	want := []string{"a1", "b1", "c1", "a2", "a3"}
	if len(order) != len(want) {
		t.Fatalf("order %v", order)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("slots went %v, want %v", order, want)
		}
	}
	// A waiter whose request ends leaves the queue.
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error)
	go func() { errc <- f.acquire(ctx, "e") }()
	queued(1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v", err)
	}
	if free, w := f.stats(); free != 0 || w != 0 || len(f.queues) != 0 || len(f.turns) != 0 {
		t.Errorf("after the cancel: free %d, waiting %d, queues %v, turns %v", free, w, f.queues, f.turns)
	}
	f.release()
	if free, _ := f.stats(); free != 1 {
		t.Errorf("free slots %d after the last release, want 1", free)
	}
}

// TestBasic_DummyHashHasTheFilesCost counts the bcrypt work of each
// refusal: an unknown user is compared with a hash of the cost most
// entries have, as a known user's wrong password is.
func TestBasic_DummyHashHasTheFilesCost(t *testing.T) {
	// Two entries of cost 6, one of cost 4.
	path := ferrotest.Htpasswd(t, []string{"-B", "-C", "6"}, "admin", "s3cret", "ops", "pw")
	extra := ferrotest.Htpasswd(t, []string{"-B", "-C", "4"}, "low", "pw")
	appendFile(t, path, extra)
	b, err := NewBasic(path)
	if err != nil {
		t.Fatal(err)
	}
	var costs []int
	b.compare = func(hash, password []byte) error {
		c, err := bcrypt.Cost(hash)
		if err != nil {
			t.Fatal(err)
		}
		costs = append(costs, c)
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	for _, user := range []string{"admin", "nobody", "low"} {
		r := httptestRequest(user, "wrong")
		if _, err := b.Authenticate(t.Context(), r); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("%s: %v", user, err)
		}
	}
	if want := []int{6, 6, 4}; len(costs) != 3 || costs[0] != want[0] || costs[1] != want[1] || costs[2] != want[2] {
		t.Errorf("bcrypt costs of admin, an unknown user and low: %v, want %v", costs, want)
	}
}

func appendFile(t *testing.T, path, from string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func httptestRequest(user, password string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/nodes", nil)
	r.SetBasicAuth(user, password)
	return r
}

func TestClientOf(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1:1234":             "192.0.2.1",
		"[::ffff:192.0.2.1]:1234":    "192.0.2.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ff::1]:80":    "2001:db8:1:2::/64",
		"[fe80::1%eth0]:80":          "fe80::/64",
		"pipe":                       "pipe",
	} {
		if got := clientOf(in); got != want {
			t.Errorf("clientOf(%q) = %q, want %q", in, got, want)
		}
	}
}
