package conductor

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/hardware"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// recordingObserver keeps what the conductor told it.
type recordingObserver struct {
	mu          sync.Mutex
	transitions []string // "from → to"
	changes     [][]hardware.Change
}

func (o *recordingObserver) ProvisionStateChanged(n *baremetal.Node, from string) {
	o.mu.Lock()
	o.transitions = append(o.transitions, from+" → "+n.ProvisionState)
	o.mu.Unlock()
}

func (o *recordingObserver) HardwareChanged(_ *baremetal.Node, c []hardware.Change) {
	o.mu.Lock()
	o.changes = append(o.changes, c)
	o.mu.Unlock()
}

// storingInspect inspects out of band, as the redfish interface does: it
// stores the next inventory at once and finishes.
type storingInspect struct {
	store store.Store
	mu    sync.Mutex
	next  baremetal.JSON
}

func (s *storingInspect) Validate(context.Context, *driver.Task) error { return nil }
func (s *storingInspect) InspectHardware(ctx context.Context, t *driver.Task) (string, error) {
	s.mu.Lock()
	inv := s.next
	s.mu.Unlock()
	return states.Manageable, s.store.SaveInventory(ctx, &baremetal.Inventory{NodeUUID: t.Node.UUID, Inventory: inv})
}
func (s *storingInspect) Abort(context.Context, *driver.Task) error { return nil }
func (s *storingInspect) Status(context.Context, *driver.Task) (driver.InspectStatus, error) {
	return driver.InspectStatus{}, nil
}
func (s *storingInspect) Finish(context.Context, *driver.Task, driver.InspectStatus) error {
	return nil
}

func inventoryWith(disks ...string) baremetal.JSON {
	var list []any
	for _, serial := range disks {
		list = append(list, map[string]any{"name": "/dev/sd" + strings.ToLower(serial[len(serial)-1:]), "size": 10 << 30, "serial": serial})
	}
	return baremetal.JSON{"disks": list, "memory": map[string]any{"physical_mb": 4096}}
}

func TestInspect_ReinspectionRecordsHardwareChanges(t *testing.T) {
	r := newRig(t)
	n := r.node(t, states.Manageable, map[string]string{"inspect": "storing"})
	inspect := func(inv baremetal.JSON) {
		t.Helper()
		r.oob.mu.Lock()
		r.oob.next = inv
		r.oob.mu.Unlock()
		if err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbInspect); err != nil {
			t.Fatal(err)
		}
		r.waitState(t, n.UUID, states.Manageable)
	}
	changeEvents := func() []*baremetal.HistoryEvent {
		t.Helper()
		events, err := r.store.ListHistory(context.Background(), n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		var out []*baremetal.HistoryEvent
		for _, e := range events {
			if e.EventType == HardwareChangesEventType {
				out = append(out, e)
			}
		}
		return out
	}

	inspect(inventoryWith("DA", "DB"))
	if ev := changeEvents(); len(ev) != 0 {
		t.Fatalf("first inspection recorded hardware changes: %+v", ev[0])
	}
	inspect(inventoryWith("DA", "DB"))
	inspect(inventoryWith("DA"))

	ev := changeEvents()
	if len(ev) != 2 {
		t.Fatalf("hardware change events = %d, want 2 (one per re-inspection)", len(ev))
	}
	if !strings.HasPrefix(ev[0].Event, "no hardware changes (since the inspection of ") || ev[0].Severity != baremetal.SeverityInfo {
		t.Errorf("unchanged re-inspection recorded %q (%s)", ev[0].Event, ev[0].Severity)
	}
	if !strings.HasPrefix(ev[1].Event, "1 hardware change: disk DB removed (/dev/sdb, 10 GiB, serial DB) (since the inspection of ") || ev[1].Severity != "WARNING" {
		t.Errorf("disk removal recorded %q (%s)", ev[1].Event, ev[1].Severity)
	}

	r.obs.mu.Lock()
	defer r.obs.mu.Unlock()
	want := [][]hardware.Change{nil, {{Component: "disk", ID: "DB", Change: "removed", Old: "/dev/sdb, 10 GiB, serial DB"}}}
	if diff := cmp.Diff(want, r.obs.changes); diff != "" {
		t.Errorf("observer's hardware changes (-want +got):\n%s", diff)
	}
	wantTransitions := []string{"manageable → inspecting", "inspecting → manageable"}
	if diff := cmp.Diff(wantTransitions, r.obs.transitions[:2]); diff != "" {
		t.Errorf("observer's transitions (-want +got):\n%s", diff)
	}
}

func TestStats_CountsBusyWorkersRefusalsAndLockConflicts(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	if st := r.c.Stats(); st != (Stats{Workers: 4}) {
		t.Fatalf("idle stats = %+v", st)
	}
	var held []*baremetal.Node
	for range r.opts.Workers {
		busy := r.node(t, states.Manageable, map[string]string{"power": "blocking"})
		if err := r.c.ChangePowerState(ctx, busy.UUID, baremetal.PowerOn, 0); err != nil {
			t.Fatal(err)
		}
		held = append(held, busy)
	}
	n := r.node(t, states.Manageable, nil)
	if err := r.c.ChangePowerState(ctx, n.UUID, baremetal.PowerOn, 0); !errors.Is(err, ErrNoFreeWorker) {
		t.Fatalf("power on with every worker busy: err = %v", err)
	}
	// A node a running task holds: the request waits, then is refused.
	if err := r.c.ChangePowerState(ctx, held[0].UUID, baremetal.PowerOff, 0); !errors.Is(err, ErrNodeLocked) {
		t.Fatalf("power change of a locked node: err = %v", err)
	}
	st := r.c.Stats()
	if st.Busy != 4 || st.WorkerRefusals != 1 || st.LockWaits != 1 || st.LockConflicts != 1 || st.LockWaiters != 0 {
		t.Errorf("stats with the pool full = %+v; want 4 busy, 1 refusal, 1 lock wait that ended in a conflict", st)
	}
	close(r.block.release)
	for _, b := range held {
		r.waitState(t, b.UUID, states.Manageable)
	}
	for deadline := time.Now().Add(10 * time.Second); r.c.Stats().Busy != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stats after the tasks ended = %+v, want no busy worker", r.c.Stats())
		}
	}
}
