package auth

import (
	"context"
	"errors"
	"net/netip"
	"sync"
)

// errSlotsBusy is a client that already has as many checks waiting as it
// may, or a full queue: its request is refused without a check.
var errSlotsBusy = errors.New("too many credential checks waiting")

// fairSlots bounds the expensive checks running at once and hands a freed
// slot to the waiting clients in turn: round robin over client addresses,
// first come first served within one. A flood from one address therefore
// delays another address's check by at most one check per address that
// is waiting, however long the flood's own queue is. It treats every
// request alike — it never looks at the user name — so waiting tells
// nothing about which names exist.
type fairSlots struct {
	mu   sync.Mutex
	free int
	// perClient bounds one client's waiting checks, maxWaiting everyone's.
	perClient, maxWaiting int
	waiting               int
	queues                map[string][]chan struct{}
	// turns lists the clients with waiting checks, the next one first.
	turns []string
}

func newFairSlots(slots, perClient, maxWaiting int) *fairSlots {
	return &fairSlots{free: slots, perClient: perClient, maxWaiting: maxWaiting, queues: map[string][]chan struct{}{}}
}

// acquire waits for a slot for client; release it with release. It fails
// with errSlotsBusy when client's queue or the whole queue is full, and
// with ctx's error when ctx ends first.
func (f *fairSlots) acquire(ctx context.Context, client string) error {
	f.mu.Lock()
	if f.free > 0 && f.waiting == 0 {
		f.free--
		f.mu.Unlock()
		return nil
	}
	q := f.queues[client]
	if len(q) >= f.perClient || f.waiting >= f.maxWaiting {
		f.mu.Unlock()
		return errSlotsBusy
	}
	granted := make(chan struct{})
	if len(q) == 0 {
		f.turns = append(f.turns, client)
	}
	f.queues[client] = append(q, granted)
	f.waiting++
	f.mu.Unlock()

	select {
	case <-granted:
		return nil
	case <-ctx.Done():
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-granted:
		// Granted as ctx ended: pass the slot on.
		f.releaseLocked()
	default:
		f.dropLocked(client, granted)
	}
	return ctx.Err()
}

// release frees a slot: the next client in turn gets it.
func (f *fairSlots) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releaseLocked()
}

func (f *fairSlots) releaseLocked() {
	if f.waiting == 0 {
		f.free++
		return
	}
	client := f.turns[0]
	f.turns = f.turns[1:]
	q := f.queues[client]
	next := q[0]
	if q = q[1:]; len(q) > 0 {
		f.queues[client] = q
		f.turns = append(f.turns, client)
	} else {
		delete(f.queues, client)
	}
	f.waiting--
	close(next)
}

// dropLocked removes a waiter that gave up.
func (f *fairSlots) dropLocked(client string, w chan struct{}) {
	q := f.queues[client]
	for i, c := range q {
		if c != w {
			continue
		}
		q = append(q[:i:i], q[i+1:]...)
		f.waiting--
		break
	}
	if len(q) > 0 {
		f.queues[client] = q
		return
	}
	delete(f.queues, client)
	for i, c := range f.turns {
		if c == client {
			f.turns = append(f.turns[:i:i], f.turns[i+1:]...)
			break
		}
	}
}

// stats returns the slots free and the checks waiting.
func (f *fairSlots) stats() (free, waiting int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.free, f.waiting
}

// clientOf is the client a request's remote address counts as: its IPv4
// address, or its IPv6 /64 (one host's usual allocation), else the
// address as given.
func clientOf(remoteAddr string) string {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
