package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var reservationTests = []test{
	{"ReserveAndRelease", testReserveRelease},
	{"ReleaseAll", testReleaseAll},
	{"ExactlyOneOf50ConcurrentReservationsWins", testReserveRace},
	{"50ConcurrentWritersAllSucceed", testConcurrentWriters},
	{"ConcurrentConflictsFailAlone", testConcurrentConflicts},
}

func testReserveRelease(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("r1"))

	got, err := s.ReserveNode(ctx, n.UUID, "h1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Reservation != "h1" || got.UUID != n.UUID || got.Name != "r1" {
		t.Errorf("ReserveNode returned %s/%s reserved by %q", got.UUID, got.Name, got.Reservation)
	}
	if got, _ := s.GetNode(ctx, n.UUID); got.Reservation != "h1" {
		t.Errorf("GetNode shows reservation %q, want h1", got.Reservation)
	}
	// The holder may reserve again, by name too.
	if _, err := s.ReserveNode(ctx, "r1", "h1"); err != nil {
		t.Errorf("holder reserving again: %v", err)
	}
	_, err = s.ReserveNode(ctx, "r1", "h2")
	wantErr(t, err, store.ErrNodeLocked,
		fmt.Sprintf("node %s is locked by host h1, please retry after the current operation is completed", n.UUID))

	_, err = s.ReserveNode(ctx, "nope", "h1")
	wantErr(t, err, store.ErrNotFound, "nope")

	wantErr(t, s.ReleaseNode(ctx, n.UUID, "h2"), store.ErrNodeLocked, "h1")
	if got, _ := s.GetNode(ctx, n.UUID); got.Reservation != "h1" {
		t.Errorf("a release by another holder cleared the reservation")
	}
	if err := s.ReleaseNode(ctx, n.UUID, "h1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetNode(ctx, n.UUID); got.Reservation != "" {
		t.Errorf("reservation %q after release", got.Reservation)
	}
	if err := s.ReleaseNode(ctx, n.UUID, "h1"); err != nil {
		t.Errorf("releasing a free node: %v, want nil", err)
	}
	wantErr(t, s.ReleaseNode(ctx, "00000000-0000-0000-0000-000000000000", "h1"), store.ErrNotFound)

	if _, err := s.ReserveNode(ctx, n.UUID, "h2"); err != nil {
		t.Errorf("reserving a released node: %v", err)
	}
}

func testReleaseAll(t *testing.T, s store.Store) {
	ctx := t.Context()
	holders := []string{"h1", "h1", "h2", "h1", ""}
	for i, h := range holders {
		n := createNode(t, s, newNode(fmt.Sprintf("n%d", i)))
		if h != "" {
			if _, err := s.ReserveNode(ctx, n.UUID, h); err != nil {
				t.Fatal(err)
			}
		}
	}
	count, err := s.ReleaseAllReservations(ctx, "h1")
	if err != nil || count != 3 {
		t.Errorf("ReleaseAllReservations(h1) = %d, %v; want 3", count, err)
	}
	reserved, err := s.ListNodes(ctx, store.NodeFilter{Reserved: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(reserved) != 1 || reserved[0].Reservation != "h2" {
		t.Errorf("still reserved: %v, want only the h2 node", names(reserved))
	}
	if count, err := s.ReleaseAllReservations(ctx, "h1"); err != nil || count != 0 {
		t.Errorf("second ReleaseAllReservations(h1) = %d, %v; want 0", count, err)
	}
}

func testReserveRace(t *testing.T, s store.Store) {
	ctx := t.Context()
	n := createNode(t, s, newNode("contended"))
	const workers = 50
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		errs    = make([]error, workers)
		winners = make([]*baremetal.Node, workers)
	)
	for i := range workers {
		wg.Go(func() {
			<-start
			ident := n.UUID
			if i%2 == 1 {
				ident = n.Name
			}
			winners[i], errs[i] = s.ReserveNode(ctx, ident, fmt.Sprintf("conductor-%d", i))
		})
	}
	close(start)
	wg.Wait()

	winner := ""
	for i, err := range errs {
		switch {
		case err == nil:
			if winner != "" {
				t.Errorf("both %s and conductor-%d reserved the node", winner, i)
			}
			winner = winners[i].Reservation
		case !errors.Is(err, store.ErrNodeLocked):
			t.Errorf("conductor-%d: %v, want ErrNodeLocked", i, err)
		}
	}
	if winner == "" {
		t.Fatal("no conductor reserved the node")
	}
	got, err := s.GetNode(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Reservation != winner {
		t.Errorf("node reserved by %q, but %q won", got.Reservation, winner)
	}
}

func testConcurrentWriters(t *testing.T, s store.Store) {
	ctx := t.Context()
	const workers = 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := range workers {
		wg.Go(func() {
			err := func() error {
				n := newNode(fmt.Sprintf("w%02d", i))
				if err := s.CreateNode(ctx, n); err != nil {
					return err
				}
				if err := s.CreatePort(ctx, newPort(n.UUID, fmt.Sprintf("52:54:00:00:01:%02x", i))); err != nil {
					return err
				}
				n, err := s.ReserveNode(ctx, n.UUID, "h")
				if err != nil {
					return err
				}
				n.ProvisionState = "manageable"
				if err := s.UpdateNode(ctx, n); err != nil {
					return err
				}
				if err := s.InTx(ctx, func(tx store.Store) error {
					return tx.AddHistory(ctx, &baremetal.HistoryEvent{NodeUUID: n.UUID, Event: "managed"})
				}); err != nil {
					return err
				}
				if _, err := s.ListNodes(ctx, store.NodeFilter{Page: store.Page{Limit: 10}}); err != nil {
					return err
				}
				return s.ReleaseNode(ctx, n.UUID, "h")
			}()
			if err != nil {
				errs <- fmt.Errorf("writer %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	nodes, err := s.ListNodes(ctx, store.NodeFilter{ProvisionState: []string{"manageable"}, Reserved: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != workers {
		t.Errorf("%d managed, released nodes, want %d", len(nodes), workers)
	}
}

// testConcurrentConflicts makes writes that fail run alongside writes that
// succeed: each failure must be reported to its caller alone.
func testConcurrentConflicts(t *testing.T, s store.Store) {
	ctx := t.Context()
	const workers = 50
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i := range workers {
		wg.Go(func() {
			errs[i] = s.CreateNode(ctx, newNode(fmt.Sprintf("pair-%02d", i/2)))
		})
	}
	wg.Wait()
	conflicts := 0
	for i, err := range errs {
		switch {
		case errors.Is(err, store.ErrConflict):
			conflicts++
		case err != nil:
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if conflicts != workers/2 {
		t.Errorf("%d conflicts, want %d (one per pair)", conflicts, workers/2)
	}
	nodes, err := s.ListNodes(ctx, store.NodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != workers/2 {
		t.Errorf("%d nodes stored, want %d", len(nodes), workers/2)
	}
}
