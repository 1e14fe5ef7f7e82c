package conductor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/hardware"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// recordingObserver keeps what the conductor told it.
type recordingObserver struct {
	mu          sync.Mutex
	transitions []string // "from → to"
	changes     [][]hardware.Change
	ran         map[string]int // periodic task → runs
	skipped     map[string]int
	periodic    chan struct{} // signalled (without blocking) at each periodic report
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

func (o *recordingObserver) PeriodicTaskRan(task string, _ time.Duration) {
	o.countPeriodic(&o.ran, task)
}

func (o *recordingObserver) PeriodicTaskSkipped(task string) {
	o.countPeriodic(&o.skipped, task)
}

func (o *recordingObserver) countPeriodic(counts *map[string]int, task string) {
	o.mu.Lock()
	if *counts == nil {
		*counts = map[string]int{}
	}
	(*counts)[task]++
	ch := o.periodic
	o.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// waitPeriodic waits until cond holds over the runs and skips reported.
func (o *recordingObserver) waitPeriodic(t *testing.T, what string, cond func(ran, skipped map[string]int) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		o.mu.Lock()
		ok := cond(o.ran, o.skipped)
		ran, skipped := fmt.Sprint(o.ran), fmt.Sprint(o.skipped)
		o.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-o.periodic:
		case <-deadline:
			t.Fatalf("periodic tasks: %s never happened (ran %s, skipped %s)", what, ran, skipped)
		}
	}
}

// slowPower answers a power-state read only once release is closed, and
// tells entered when a read starts.
type slowPower struct {
	fake.Power
	entered chan struct{}
	release chan struct{}
}

func (p *slowPower) PowerState(ctx context.Context, t *driver.Task) (string, error) {
	select {
	case p.entered <- struct{}{}:
	default:
	}
	select {
	case <-p.release:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return p.Power.PowerState(ctx, t)
}

// Every periodic task reports its runs; a power sync still reading a slow
// BMC when the next is due is reported skipped, not started twice, and
// reported run once it ends.
func TestPeriodicTasks_ReportRunsAndSkippedPowerSyncs(t *testing.T) {
	r := newRig(t)
	slow := &slowPower{entered: make(chan struct{}, 1), release: make(chan struct{})}
	r.c.reg.RegisterPower("slow", slow)
	n := r.node(t, states.Manageable, map[string]string{"power": "slow"})
	n.PowerState = baremetal.PowerOff
	if err := r.store.UpdateNode(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	// The rig's conductor runs no periodic task: replace it by one that
	// runs them all, often.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	o := r.opts
	o.Now = nil
	o.HeartbeatInterval, o.StatusCheckPeriod, o.CheckProvisionStateInterval = 10*time.Millisecond, 10*time.Millisecond, 10*time.Millisecond
	o.PowerSync = PowerSync{Interval: 10 * time.Millisecond, Workers: 1, MaxRetries: 3}
	o.PXEFilter = PXEFilter{Dir: t.TempDir(), Period: 10 * time.Millisecond}
	r.obs.mu.Lock()
	r.obs.periodic = make(chan struct{}, 1)
	r.obs.mu.Unlock()
	r.c = New(o)
	if err := r.c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}

	<-slow.entered
	r.obs.waitPeriodic(t, "every task but the power sync run twice, and a power sync skipped", func(ran, skipped map[string]int) bool {
		for _, task := range []string{TaskHeartbeat, TaskTakeOver, TaskInspectionStatus, TaskProvisionTimeouts, TaskPXEFilter} {
			if ran[task] < 2 {
				return false
			}
		}
		return skipped[TaskPowerSync] > 0
	})
	r.obs.mu.Lock()
	if got := r.obs.ran[TaskPowerSync]; got != 0 {
		t.Errorf("power sync reported %d runs while its first was still reading the BMC", got)
	}
	r.obs.mu.Unlock()
	close(slow.release)
	r.obs.waitPeriodic(t, "a power sync run", func(ran, _ map[string]int) bool { return ran[TaskPowerSync] > 0 })
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
