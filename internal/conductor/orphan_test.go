package conductor

import (
	"context"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// racingList is a store whose list of reserved nodes runs a hook after
// the rows were read, so the listing is stale by the time it is used.
type racingList struct {
	store.Store
	after func()
}

func (s racingList) ListNodes(ctx context.Context, f store.NodeFilter) ([]*baremetal.Node, error) {
	nodes, err := s.Store.ListNodes(ctx, f)
	if f.Reserved != nil && *f.Reserved && s.after != nil {
		s.after()
	}
	return nodes, err
}

// Issue 20: a conductor taken for dead (a starved machine) moves its node
// from manageable to inspecting just after the survivor listed its locks.
// The take-over must judge the node as read under the new lock: judged on
// the listing, the node was left in inspecting with no lock, and its
// task's next save failed on the fence ("cannot enter inspect wait").
func TestTakeOverOrphans_NodeEnteringTransientStateAfterTheListIsFailed(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	n := r.node(t, states.Manageable, map[string]string{"inspect": "waiting"})
	if _, err := r.store.ReserveNode(ctx, n.UUID, "starved-host"); err != nil {
		t.Fatal(err)
	}
	r.c.store = racingList{Store: r.store, after: func() {
		held, err := r.store.GetNode(ctx, n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		held.ProvisionState = states.Inspecting
		if err := r.store.UpdateNode(ctx, held); err != nil {
			t.Fatal(err)
		}
	}}
	r.c.TakeOverOrphans(ctx)
	got := r.waitState(t, n.UUID, states.InspectFailed)
	if !strings.Contains(got.LastError, "starved-host") || r.wait.aborts != 1 {
		t.Errorf("last_error %q, aborts %d; want the dead holder named and the inspection torn down", got.LastError, r.wait.aborts)
	}
}

// A node in a transient state with no lock lost its task, whoever ran it
// and whether its conductor is alive: its owner fails it. A node in a
// transient state under a live lock, and one in a wait state, are left.
func TestFailUnlockedTransient_FailsNodesWithoutTheirTask(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	if err := r.store.RegisterConductor(ctx, &store.Conductor{Hostname: "live-host", Online: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.c.refreshRing(ctx); err != nil {
		t.Fatal(err)
	}
	var orphan, verifying, locked, waiting *baremetal.Node
	// Nodes this conductor owns on the ring (two conductors share it).
	for orphan == nil || verifying == nil || locked == nil || waiting == nil {
		n := r.node(t, states.Inspecting, map[string]string{"inspect": "waiting"})
		if !r.c.owns(n.UUID, "") {
			continue
		}
		switch {
		case orphan == nil:
			orphan = n
		case verifying == nil:
			n.ProvisionState = states.Verifying
			if err := r.store.UpdateNode(ctx, n); err != nil {
				t.Fatal(err)
			}
			verifying = n
		case locked == nil:
			if _, err := r.store.ReserveNode(ctx, n.UUID, "live-host"); err != nil {
				t.Fatal(err)
			}
			locked = n
		default:
			n.ProvisionState = states.InspectWait
			if err := r.store.UpdateNode(ctx, n); err != nil {
				t.Fatal(err)
			}
			waiting = n
		}
	}
	r.c.failUnlockedTransient(ctx)
	if got := r.waitState(t, orphan.UUID, states.InspectFailed); !strings.Contains(got.LastError, "lost its lock") || r.wait.aborts != 1 {
		t.Errorf("orphan in inspecting: last_error %q, aborts %d", got.LastError, r.wait.aborts)
	}
	if got := r.waitState(t, verifying.UUID, states.Enroll); got.LastError == "" {
		t.Error("orphan in verifying has no last_error")
	}
	if got, _ := r.store.GetNode(ctx, locked.UUID); got.ProvisionState != states.Inspecting || got.Reservation != "live-host" {
		t.Errorf("a live task's node: %q reserved by %q, want untouched", got.ProvisionState, got.Reservation)
	}
	r.waitState(t, waiting.UUID, states.InspectWait)
}
