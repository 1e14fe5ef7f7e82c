package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

var txTests = []test{
	{"CommitKeepsEveryWrite", testTxCommit},
	{"ErrorRollsEverythingBack", testTxRollback},
	{"NestedInTxSharesTheTransaction", testTxNested},
	{"PanicRollsBackAndStoreStaysUsable", testTxPanic},
}

var errBoom = errors.New("boom")

func testTxCommit(t *testing.T, s store.Store) {
	ctx := t.Context()
	var n *baremetal.Node
	err := s.InTx(ctx, func(tx store.Store) error {
		n = newNode("in-tx")
		if err := tx.CreateNode(ctx, n); err != nil {
			return err
		}
		if err := tx.CreatePort(ctx, newPort(n.UUID, "52:54:00:aa:00:01")); err != nil {
			return err
		}
		// The transaction reads its own writes.
		got, err := tx.GetNode(ctx, "in-tx")
		if err != nil {
			return err
		}
		if _, err := tx.ReserveNode(ctx, got.UUID, "h1"); err != nil {
			return err
		}
		ports, err := tx.ListPorts(ctx, store.PortFilter{NodeUUID: n.UUID})
		if err != nil {
			return err
		}
		if len(ports) != 1 {
			t.Errorf("inside the transaction the node has %d ports, want 1", len(ports))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetNode(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Reservation != "h1" {
		t.Errorf("reservation %q after commit, want h1", got.Reservation)
	}
	if _, err := s.GetPortByAddress(ctx, "52:54:00:AA:00:01"); err != nil {
		t.Errorf("port after commit: %v", err)
	}
}

func testTxRollback(t *testing.T, s store.Store) {
	ctx := t.Context()
	kept := createNode(t, s, newNode("kept"))
	createPort(t, s, newPort(kept.UUID, "52:54:00:bb:00:01"))
	rule := &store.Rule{Body: []byte(`{"actions":[]}`)}
	if err := s.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}

	err := s.InTx(ctx, func(tx store.Store) error {
		n := *kept
		n.ProvisionState = "manageable"
		if err := tx.UpdateNode(ctx, &n); err != nil {
			return err
		}
		if _, err := tx.ReserveNode(ctx, kept.UUID, "h1"); err != nil {
			return err
		}
		extra := newNode("extra")
		if err := tx.CreateNode(ctx, extra); err != nil {
			return err
		}
		if err := tx.CreatePort(ctx, newPort(extra.UUID, "52:54:00:bb:00:02")); err != nil {
			return err
		}
		if err := tx.DeleteRule(ctx, rule.UUID); err != nil {
			return err
		}
		if err := tx.SaveIntrospection(ctx, &store.Introspection{NodeUUID: kept.UUID, State: "waiting"}); err != nil {
			return err
		}
		// A conflict inside the transaction is reported as such…
		err := tx.CreatePort(ctx, newPort(extra.UUID, "52:54:00:BB:00:01"))
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("conflicting port inside a transaction: %v, want ErrConflict", err)
		}
		// …and the caller decides to give up.
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("InTx returned %v, want fn's error", err)
	}

	got, err := s.GetNode(ctx, kept.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ProvisionState != "enroll" || got.Reservation != "" || got.UpdatedAt != nil {
		t.Errorf("rolled-back update is visible: state %q, reservation %q, updated_at %v",
			got.ProvisionState, got.Reservation, got.UpdatedAt)
	}
	nodes, err := s.ListNodes(ctx, store.NodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(nodes), []string{"kept"}) {
		t.Errorf("nodes after rollback: %q, want only kept", names(nodes))
	}
	if _, err := s.GetPortByAddress(ctx, "52:54:00:bb:00:02"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rolled-back port: %v, want not found", err)
	}
	if _, err := s.GetRule(ctx, rule.UUID); err != nil {
		t.Errorf("rolled-back rule deletion: %v", err)
	}
	if _, err := s.GetIntrospection(ctx, kept.UUID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rolled-back introspection: %v, want not found", err)
	}
}

func testTxNested(t *testing.T, s store.Store) {
	ctx := t.Context()
	err := s.InTx(ctx, func(tx store.Store) error {
		err := tx.InTx(ctx, func(inner store.Store) error {
			return inner.CreateNode(ctx, newNode("inner"))
		})
		if err != nil {
			return err
		}
		// The outer transaction sees the inner one's write…
		if _, err := tx.GetNode(ctx, "inner"); err != nil {
			t.Errorf("outer transaction does not see the nested write: %v", err)
		}
		// …and an inner error reaches the outer function.
		err = tx.InTx(ctx, func(store.Store) error { return errBoom })
		if !errors.Is(err, errBoom) {
			t.Errorf("nested InTx returned %v, want fn's error", err)
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("InTx returned %v, want fn's error", err)
	}
	// Nested InTx is the same transaction: the outer rollback undoes it.
	if _, err := s.GetNode(ctx, "inner"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("nested write survived the outer rollback: %v", err)
	}
}

func testTxPanic(t *testing.T, s store.Store) {
	ctx := t.Context()
	func() {
		defer func() {
			if r := recover(); r != errBoom {
				t.Errorf("recovered %v, want the panic to propagate", r)
			}
		}()
		s.InTx(ctx, func(tx store.Store) error {
			if err := tx.CreateNode(ctx, newNode("panicked")); err != nil {
				t.Error(err)
			}
			panic(errBoom)
		})
	}()
	if _, err := s.GetNode(ctx, "panicked"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("write of a panicked transaction: %v, want not found", err)
	}
	// The connection the transaction used went back to the pool.
	for range 3 {
		createNode(t, s, newNode(""))
		if err := s.InTx(ctx, func(tx store.Store) error { return tx.CreateNode(ctx, newNode("")) }); err != nil {
			t.Fatal(err)
		}
	}
}
