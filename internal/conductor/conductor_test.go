package conductor

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// waitingInspect is an inspect interface that waits for the test to say
// the inspection ended.
type waitingInspect struct {
	mu       sync.Mutex
	status   driver.InspectStatus
	startErr error
	aborts   int
	finishes int
}

func (w *waitingInspect) Validate(context.Context, *driver.Task) error { return nil }
func (w *waitingInspect) InspectHardware(context.Context, *driver.Task) (string, error) {
	if w.startErr != nil {
		return "", w.startErr
	}
	return states.InspectWait, nil
}
func (w *waitingInspect) Abort(context.Context, *driver.Task) error {
	w.mu.Lock()
	w.aborts++
	w.mu.Unlock()
	return nil
}
func (w *waitingInspect) Status(context.Context, *driver.Task) (driver.InspectStatus, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status, nil
}
func (w *waitingInspect) Finish(context.Context, *driver.Task, driver.InspectStatus) error {
	w.mu.Lock()
	w.finishes++
	w.mu.Unlock()
	return nil
}
func (w *waitingInspect) set(st driver.InspectStatus) {
	w.mu.Lock()
	w.status = st
	w.mu.Unlock()
}

// blockingPower holds SetPowerState until release is closed.
type blockingPower struct {
	fake.Power
	release chan struct{}
}

func (b blockingPower) SetPowerState(ctx context.Context, t *driver.Task, s string, d time.Duration) error {
	<-b.release
	return b.Power.SetPowerState(ctx, t, s, d)
}

type rig struct {
	c     *Conductor
	store store.Store
	opts  Options
	now   time.Time
	mu    sync.Mutex
	wait  *waitingInspect
	block blockingPower
	obs   *recordingObserver
	oob   *storingInspect
}

func (r *rig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *rig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

func newRig(t *testing.T) *rig { return newRigWith(t, nil) }

// newRigWith is newRig with the conductor's options and the registry's
// enabled interfaces changed by change (nil: none).
func newRigWith(t *testing.T, change func(*Options, *driver.Enabled)) *rig {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	types := []driver.HardwareType{fake.HardwareType}
	enabled := driver.EnableAll(types)
	for _, k := range driver.Kinds {
		enabled.Interfaces[k] = append(enabled.Interfaces[k], "waiting", "blocking", "storing")
	}
	var opts Options
	if change != nil {
		change(&opts, &enabled)
	}
	reg := driver.NewRegistry(types, enabled)
	fake.Register(reg)
	reg.RegisterNetwork("noop", network.Noop{})
	r := &rig{store: db, now: time.Now().UTC(), wait: &waitingInspect{},
		block: blockingPower{release: make(chan struct{})}, obs: &recordingObserver{}}
	reg.RegisterInspect("waiting", r.wait)
	r.oob = &storingInspect{store: db}
	reg.RegisterInspect("storing", r.oob)
	reg.RegisterPower("blocking", r.block)
	// [conductor]'s defaults, with the periodic tasks off: the tests run them.
	r.opts = Options{Store: db, Registry: reg, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: r.clock,
		Host: "c1", Workers: 4, PowerTimeout: time.Minute, HeartbeatTimeout: time.Minute, InspectWaitTimeout: 30 * time.Minute, Observer: r.obs,
		Discovery: opts.Discovery, PXEFilter: opts.PXEFilter, AutomatedCleaning: opts.AutomatedCleaning}
	r.c = New(r.opts)
	if err := r.c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.c.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return r
}

func (r *rig) node(t *testing.T, state string, ifs map[string]string) *baremetal.Node {
	t.Helper()
	names := map[string]string{}
	for _, k := range driver.Kinds {
		names[k] = "fake"
	}
	names["network"] = "noop"
	for k, v := range ifs {
		names[k] = v
	}
	n := &baremetal.Node{UUID: uuid.NewString(), Driver: "fake-hardware", ProvisionState: state, Interfaces: names,
		DriverInfo: baremetal.JSON{}, DriverInternalInfo: baremetal.JSON{}, Properties: baremetal.JSON{}}
	if err := r.store.CreateNode(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitState polls until the node reaches want with no lock held, in the
// database or in this process (a task drops the two one after the other).
func (r *rig) waitState(t *testing.T, id, want string) *baremetal.Node {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := r.store.GetNode(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		r.c.lockMu.Lock()
		_, lockedHere := r.c.locked[n.UUID]
		r.c.lockMu.Unlock()
		if n.ProvisionState == want && n.Reservation == "" && !lockedHere {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s in state %q (reservation %q, last_error %q), want %q", id, n.ProvisionState, n.Reservation, n.LastError, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestProvision_ManageInspectProvideWithFakeHardware(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	n := r.node(t, states.Enroll, nil)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbManage); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, n.UUID, states.Manageable)
	// Ironic's fake power reports the recorded state: none until the
	// first power action.
	if got.PowerState != "" {
		t.Errorf("power state after verify = %q, want none (null)", got.PowerState)
	}
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbInspect); err != nil {
		t.Fatal(err)
	}
	got = r.waitState(t, n.UUID, states.Manageable)
	if got.InspectionStartedAt == nil || got.InspectionFinishedAt == nil {
		t.Errorf("inspection timestamps not set: %+v %+v", got.InspectionStartedAt, got.InspectionFinishedAt)
	}
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbProvide); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.Available)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbManage); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.Manageable)
}

func TestProvision_VerbNotAllowedInStateChangesNothing(t *testing.T) {
	r := newRig(t)
	n := r.node(t, states.Enroll, nil)
	err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbInspect)
	if !errors.Is(err, ErrInvalidState) {
		t.Fatalf("inspect from enroll: err = %v, want ErrInvalidState", err)
	}
	got := r.waitState(t, n.UUID, states.Enroll)
	if got.LastError != "" {
		t.Errorf("last_error = %q", got.LastError)
	}
}

func TestProvision_NoFreeWorkerChangesNothing(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	// Power changes that hang fill the pool of four workers.
	for range r.opts.Workers {
		busy := r.node(t, states.Manageable, map[string]string{"power": "blocking"})
		if err := r.c.ChangePowerState(ctx, busy.UUID, baremetal.PowerOn, 0); err != nil {
			t.Fatal(err)
		}
	}
	defer close(r.block.release)
	n := r.node(t, states.Manageable, nil)
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbInspect); !errors.Is(err, ErrNoFreeWorker) {
		t.Fatalf("inspect with every worker busy: err = %v, want ErrNoFreeWorker", err)
	}
	got := r.waitState(t, n.UUID, states.Manageable)
	if got.TargetProvisionState != "" || got.LastError != "" || got.InspectionStartedAt != nil || got.UpdatedAt != nil {
		t.Errorf("node after a refused inspect: target %q, last_error %q, inspection_started_at %v, updated_at %v; want it untouched",
			got.TargetProvisionState, got.LastError, got.InspectionStartedAt, got.UpdatedAt)
	}
	if err := r.c.ChangePowerState(ctx, n.UUID, baremetal.PowerOn, 0); !errors.Is(err, ErrNoFreeWorker) {
		t.Fatalf("power on with every worker busy: err = %v, want ErrNoFreeWorker", err)
	}
	if got := r.waitState(t, n.UUID, states.Manageable); got.TargetPowerState != "" || got.UpdatedAt != nil {
		t.Errorf("node after a refused power change: target_power_state %q, updated_at %v", got.TargetPowerState, got.UpdatedAt)
	}
}

func TestLock_ParallelRequestsOneWins(t *testing.T) {
	r := newRig(t)
	n := r.node(t, states.Manageable, map[string]string{"power": "blocking"})
	const parallel = 50
	var wg sync.WaitGroup
	errs := make([]error, parallel)
	start := make(chan struct{})
	for i := range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = r.c.ChangePowerState(context.Background(), n.UUID, baremetal.PowerOn, 0)
		}()
	}
	close(start)
	wg.Wait()
	close(r.block.release)
	var ok, locked int
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrNodeLocked):
			locked++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 || locked != parallel-1 {
		t.Fatalf("ok=%d locked=%d, want 1 and %d", ok, locked, parallel-1)
	}
	got := r.waitState(t, n.UUID, states.Manageable)
	deadline := time.Now().Add(5 * time.Second)
	for got.PowerState != baremetal.PowerOn || got.TargetPowerState != "" {
		if time.Now().After(deadline) {
			t.Fatalf("power = %q target = %q", got.PowerState, got.TargetPowerState)
		}
		time.Sleep(2 * time.Millisecond)
		got = r.waitState(t, n.UUID, states.Manageable)
	}
}

func TestInspect_WaitThenFinishedByNotification(t *testing.T) {
	r := newRig(t)
	n := r.node(t, states.Manageable, map[string]string{"inspect": "waiting"})
	if err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbInspect); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.InspectWait)
	r.c.NotifyInspectionFinished(n.UUID) // not finished yet: no change
	r.wait.set(driver.InspectStatus{Finished: true})
	r.c.NotifyInspectionFinished(n.UUID)
	got := r.waitState(t, n.UUID, states.Manageable)
	if got.InspectionFinishedAt == nil {
		t.Error("inspection_finished_at not set")
	}
}

func TestInspect_InspectorErrorFailsNode(t *testing.T) {
	r := newRig(t)
	n := r.node(t, states.Manageable, map[string]string{"inspect": "waiting"})
	if err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbInspect); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.InspectWait)
	r.wait.set(driver.InspectStatus{Finished: true, Error: "boom"})
	r.c.CheckInspections(context.Background())
	got := r.waitState(t, n.UUID, states.InspectFailed)
	if got.LastError != "ironic-inspector inspection failed: boom" {
		t.Errorf("last_error = %q", got.LastError)
	}
	hist, err := r.store.ListHistory(context.Background(), n.UUID)
	if err != nil || len(hist) == 0 || hist[len(hist)-1].Severity != baremetal.SeverityError {
		t.Errorf("history = %v, %v", hist, err)
	}
}

func TestInspect_StartFailureNamesPhase(t *testing.T) {
	r := newRig(t)
	r.wait.startErr = &driver.PhaseError{Phase: "adding the inspection network", Err: errors.New("neutron down")}
	n := r.node(t, states.Manageable, map[string]string{"inspect": "waiting"})
	if err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbInspect); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, n.UUID, states.InspectFailed)
	if want := "inspection failed while adding the inspection network: neutron down"; got.LastError != want {
		t.Errorf("last_error = %q, want %q", got.LastError, want)
	}
}

func TestInspect_TimeoutAbortsAndFails(t *testing.T) {
	r := newRig(t)
	n := r.node(t, states.Manageable, map[string]string{"inspect": "waiting"})
	if err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbInspect); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.InspectWait)
	r.c.CheckInspectTimeouts(context.Background())
	r.waitState(t, n.UUID, states.InspectWait) // not yet
	r.advance(r.opts.InspectWaitTimeout + time.Second)
	r.c.CheckInspectTimeouts(context.Background())
	got := r.waitState(t, n.UUID, states.InspectFailed)
	want := "Inspection timed out after 1800 s ([conductor]inspect_wait_timeout) waiting for the report; no progress was recorded since it started"
	if got.LastError != want || r.wait.aborts != 1 {
		t.Errorf("last_error = %q, aborts = %d; want %q", got.LastError, r.wait.aborts, want)
	}
}

// A timeout names the last phase the node reached, from the progress
// recorded in its history.
func TestInspect_TimeoutNamesLastPhase(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	p := NewProgress(r.store, "c1", nil)
	p.now = r.clock
	n := r.node(t, states.Manageable, map[string]string{"inspect": "waiting"})
	if err := r.c.DoProvisionAction(ctx, n.UUID, VerbInspect); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.InspectWait)
	r.advance(2 * time.Second)
	p.Record(ctx, n.UUID, driver.PhasePoweredOn, "")
	r.advance(3 * time.Second)
	p.Record(ctx, n.UUID, driver.PhaseDHCPAnswered, "192.0.2.50")
	p.Record(ctx, n.UUID, driver.PhaseDHCPAnswered, "192.0.2.50") // a retry: recorded once
	r.advance(4 * time.Second)
	kernelAt := r.clock().UTC()
	p.Record(ctx, n.UUID, "kernel_fetched", "GET /"+n.UUID+"/deploy_kernel") // the netboot service's id
	hist, err := r.store.ListHistory(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, e := range hist {
		if e.EventType == driver.ProgressEventType {
			phases = append(phases, e.Event)
		}
	}
	if diff := cmp.Diff([]string{"powered on", "DHCP answered: 192.0.2.50", "kernel fetched: GET /" + n.UUID + "/deploy_kernel"}, phases); diff != "" {
		t.Errorf("progress in the history (-want +got):\n%s", diff)
	}
	r.advance(r.opts.InspectWaitTimeout)
	r.c.CheckInspectTimeouts(ctx)
	got := r.waitState(t, n.UUID, states.InspectFailed)
	want := "Inspection timed out after 1800 s ([conductor]inspect_wait_timeout) waiting for the report; last seen: kernel fetched at " + kernelAt.Format(time.RFC3339)
	if got.LastError != want {
		t.Errorf("last_error = %q, want %q", got.LastError, want)
	}
}

func TestInspect_AbortTearsDown(t *testing.T) {
	r := newRig(t)
	n := r.node(t, states.Manageable, map[string]string{"inspect": "waiting"})
	if err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbInspect); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, n.UUID, states.InspectWait)
	if err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbAbort); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, n.UUID, states.InspectFailed)
	if got.LastError != "Inspection was aborted by request." || r.wait.aborts != 1 {
		t.Errorf("last_error = %q, aborts = %d", got.LastError, r.wait.aborts)
	}
}

func TestStart_RecoversTransientNodesAndStaleLocks(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	inspecting := r.node(t, states.Inspecting, map[string]string{"inspect": "waiting"})
	verifying := r.node(t, states.Verifying, nil)
	waiting := r.node(t, states.InspectWait, nil)
	for _, n := range []*baremetal.Node{inspecting, verifying, waiting} {
		if _, err := r.store.ReserveNode(ctx, n.UUID, "c1"); err != nil {
			t.Fatal(err)
		}
	}
	c2 := New(r.opts)
	if err := c2.recover(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, inspecting.UUID, states.InspectFailed); got.LastError == "" {
		t.Error("inspecting node has no last_error")
	}
	if r.wait.aborts != 1 {
		t.Errorf("inspect interface aborted %d times, want 1 (teardown of a start cut short)", r.wait.aborts)
	}
	if got := r.waitState(t, verifying.UUID, states.Enroll); got.LastError == "" {
		t.Error("verifying node has no last_error")
	}
	r.waitState(t, waiting.UUID, states.InspectWait)
}

func TestRing_SpreadsNodesAndIsStable(t *testing.T) {
	a, b := newRing("a"), newRing("b")
	a.set([]string{"a", "b", "c"})
	b.set([]string{"a", "b", "c"})
	counts := map[string]int{}
	for range 3000 {
		id := uuid.NewString()
		if a.owner(id) != b.owner(id) {
			t.Fatal("rings disagree")
		}
		counts[a.owner(id)]++
	}
	for h, n := range counts {
		if n < 800 {
			t.Errorf("host %s owns only %d of 3000 nodes", h, n)
		}
	}
}

func TestTakeOverOrphans_ReleasesDeadConductorsLocks(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	inspecting := r.node(t, states.Inspecting, map[string]string{"inspect": "waiting"})
	idle := r.node(t, states.Manageable, nil)
	live := r.node(t, states.Manageable, nil)
	for _, n := range []*baremetal.Node{inspecting, idle} {
		if _, err := r.store.ReserveNode(ctx, n.UUID, "dead-host"); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.store.RegisterConductor(ctx, &store.Conductor{Hostname: "live-host", Online: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.ReserveNode(ctx, live.UUID, "live-host"); err != nil {
		t.Fatal(err)
	}
	r.c.TakeOverOrphans(ctx)
	if got := r.waitState(t, inspecting.UUID, states.InspectFailed); got.LastError == "" || r.wait.aborts != 1 {
		t.Errorf("orphan in inspecting: last_error %q, aborts %d", got.LastError, r.wait.aborts)
	}
	r.waitState(t, idle.UUID, states.Manageable)
	if got, _ := r.store.GetNode(ctx, live.UUID); got.Reservation != "live-host" {
		t.Errorf("a live conductor's lock was taken: reservation %q", got.Reservation)
	}
}

// heldRelease is a store whose plain ReleaseNode waits until the test lets
// it go, so a task that saved its last state and released the lock in two
// writes would be seen in between.
type heldRelease struct {
	store.Store
	gate chan struct{}
}

func (h heldRelease) ReleaseNode(ctx context.Context, uuid, holder string) error {
	<-h.gate
	return h.Store.ReleaseNode(ctx, uuid, holder)
}

func TestTask_LastStateAndLockReleaseAreOneWrite(t *testing.T) {
	r := newRig(t)
	gate := make(chan struct{})
	t.Cleanup(func() { close(gate) })
	r.c.store = heldRelease{Store: r.store, gate: gate}
	ctx := context.Background()
	// seen polls the database (not the local lock map) for the first moment
	// the node is in want, and returns it as it was then.
	seen := func(id, want string) *baremetal.Node {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := r.store.GetNode(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if n.ProvisionState == want {
				return n
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s in state %q, want %q", id, n.ProvisionState, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	n := r.node(t, states.Enroll, map[string]string{"inspect": "waiting"})
	steps := []struct {
		do   func() error
		want string
	}{
		{func() error { return r.c.DoProvisionAction(ctx, n.UUID, VerbManage) }, states.Manageable},
		{func() error { return r.c.DoProvisionAction(ctx, n.UUID, VerbInspect) }, states.InspectWait},
		{func() error { r.wait.set(driver.InspectStatus{Error: "boom"}); r.c.CheckInspections(ctx); return nil }, states.InspectFailed},
		{func() error {
			r.wait.set(driver.InspectStatus{})
			return r.c.DoProvisionAction(ctx, n.UUID, VerbInspect)
		}, states.InspectWait},
		{func() error { return r.c.DoProvisionAction(ctx, n.UUID, VerbAbort) }, states.InspectFailed},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("to %s: %v", s.want, err)
		}
		if got := seen(n.UUID, s.want); got.Reservation != "" {
			t.Errorf("node first seen in %s still reserved by %q", s.want, got.Reservation)
		}
		r.waitState(t, n.UUID, s.want)
	}
}

// An api-only process holds locks while it runs its requests' work: its
// locks are a live holder's, but it owns no node in the hash ring.
func TestAPIOnly_LocksKeptAndNoShareOfTheRing(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	o := r.opts
	o.APIOnly = true
	api := New(o)
	if err := api.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := api.Stop(ctx); err != nil {
			t.Errorf("stop the api-only conductor: %v", err)
		}
	})
	if api.Host() != "c1-api" {
		t.Errorf("api-only holder name %q, want c1-api", api.Host())
	}
	n := r.node(t, states.Inspecting, nil)
	if _, err := api.lockNode(ctx, n.UUID); err != nil {
		t.Fatal(err)
	}
	if err := r.c.refreshRing(ctx); err != nil {
		t.Fatal(err)
	}
	r.c.TakeOverOrphans(ctx)
	if got, _ := r.store.GetNode(ctx, n.UUID); got.Reservation != "c1-api" || got.ProvisionState != states.Inspecting {
		t.Errorf("the api-only process's node: %q reserved by %q, want inspecting and c1-api", got.ProvisionState, got.Reservation)
	}
	for range 64 {
		if id := uuid.NewString(); !r.c.owns(id, "") {
			t.Fatalf("node %s is not the conductor's: the api-only process took a share of the ring", id)
		}
	}
	api.releaseNode(n.UUID)
}

// The lock fences every write: a task whose lock was taken over while it
// worked (its conductor stalled past the heartbeat timeout) cannot
// overwrite what the new holder did.
func TestLock_TaskWhoseLockWasTakenOverWritesNothing(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	n := r.node(t, states.Manageable, map[string]string{"power": "blocking"})
	if err := r.c.ChangePowerState(ctx, n.UUID, baremetal.PowerOn, 0); err != nil {
		t.Fatal(err)
	}
	// The power task now waits in SetPowerState, holding the lock as c1.
	// Another conductor takes the node over and changes it.
	if err := r.store.ReleaseNode(ctx, n.UUID, "c1"); err != nil {
		t.Fatal(err)
	}
	other, err := r.store.ReserveNode(ctx, n.UUID, "c2")
	if err != nil {
		t.Fatal(err)
	}
	other.Maintenance, other.MaintenanceReason = true, "taken over"
	if err := r.store.UpdateNode(ctx, other); err != nil {
		t.Fatal(err)
	}
	close(r.block.release)
	r.c.running.Wait() // the power task ends, its save refused
	got, err := r.store.GetNode(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Reservation != "c2" || !got.Maintenance || got.MaintenanceReason != "taken over" || got.TargetPowerState != baremetal.PowerOn {
		t.Errorf("after the stale task: reservation %q, maintenance %v %q, target power %q; want c2's node untouched",
			got.Reservation, got.Maintenance, got.MaintenanceReason, got.TargetPowerState)
	}
}

// A task's port writes are fenced too: once its lock is taken over, the
// task cannot rewrite the node's ports (their inspection_vif_port_id).
func TestLock_TaskWhoseLockWasTakenOverWritesNoPort(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	n := r.node(t, states.Manageable, nil)
	port := &baremetal.Port{UUID: uuid.NewString(), NodeUUID: n.UUID, Address: "52:54:00:00:00:01", PXEEnabled: true,
		Extra: baremetal.JSON{}, LocalLinkConnection: baremetal.JSON{}, InternalInfo: baremetal.JSON{}}
	if err := r.store.CreatePort(ctx, port); err != nil {
		t.Fatal(err)
	}
	task, err := r.c.acquire(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	p := task.Ports[0]
	p.InternalInfo["inspection_vif_port_id"] = "mine"
	if err := task.SavePort(ctx, p); err != nil {
		t.Fatalf("save while holding the lock: %v", err)
	}
	if err := r.store.ReleaseNode(ctx, n.UUID, "c1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.ReserveNode(ctx, n.UUID, "c2"); err != nil {
		t.Fatal(err)
	}
	p.InternalInfo["inspection_vif_port_id"] = "stale"
	if err := task.SavePort(ctx, p); !errors.Is(err, store.ErrNodeLocked) {
		t.Errorf("save after the take-over: %v, want ErrNodeLocked", err)
	}
	got, err := r.store.GetPort(ctx, port.UUID)
	if err != nil || got.InternalInfo["inspection_vif_port_id"] != "mine" {
		t.Errorf("port after the stale save: %v, %v; want inspection_vif_port_id mine", got.InternalInfo, err)
	}
	r.c.unlockLocal(n.UUID)
}

// GET /validate reports what Ironic 21.4 does: exactly its drivers'
// non-vendor interfaces (no vendor, no firmware), a no-* interface as
// false with UnsupportedDriverExtension's message.
func TestValidateNode_Ironic214Interfaces(t *testing.T) {
	r := newRig(t)
	n := r.node(t, states.Manageable, map[string]string{"console": "no-console", "bios": "no-bios"})
	res, err := r.c.ValidateNode(context.Background(), n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for k := range res {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	want := []string{"bios", "boot", "console", "deploy", "inspect", "management", "network", "power", "raid", "rescue", "storage"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("validated interfaces (-want +got):\n%s", diff)
	}
	if r := res["console"]; r.Result == nil || *r.Result || r.Reason != "Driver fake-hardware does not support console (disabled or not implemented)." {
		t.Errorf("console (no-console) = %+v, want false with Ironic's message", r)
	}
	if r := res["power"]; r.Result == nil || !*r.Result || r.Reason != "" {
		t.Errorf("power = %+v, want true", r)
	}
}

// TestPower_LastPowerStateChange: every power action Ironic does not skip
// stamps driver_internal_info.last_power_state_change (node_power_action);
// fake power reports none until the first one.
func TestPower_LastPowerStateChange(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	n := r.node(t, states.Manageable, nil)
	power := func(target string) *baremetal.Node {
		t.Helper()
		if err := r.c.ChangePowerState(ctx, n.UUID, target, 0); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, err := r.store.GetNode(ctx, n.UUID)
			if err != nil {
				t.Fatal(err)
			}
			r.c.lockMu.Lock()
			_, locked := r.c.locked[n.UUID]
			r.c.lockMu.Unlock()
			if got.TargetPowerState == "" && got.Reservation == "" && !locked {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("power %s: node still has target %q", target, got.TargetPowerState)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	stamp := func(n *baremetal.Node) any { return n.DriverInternalInfo[driver.LastPowerStateChangeKey] }

	if n.PowerState != "" || stamp(n) != nil {
		t.Fatalf("new node: power %q, stamp %v; want none", n.PowerState, stamp(n))
	}
	on := power(baremetal.PowerOn)
	first := r.clock().Format("2006-01-02T15:04:05.000000")
	if on.PowerState != baremetal.PowerOn || stamp(on) != first {
		t.Fatalf("after power on: power %q, last_power_state_change %v, want %q", on.PowerState, stamp(on), first)
	}
	r.advance(time.Minute)
	if again := power(baremetal.PowerOn); stamp(again) != first {
		t.Errorf("power on of a node that is on: last_power_state_change %v, want it kept (%s): Ironic skips the action", stamp(again), first)
	}
	off := power(baremetal.PowerOff)
	if want := r.clock().Format("2006-01-02T15:04:05.000000"); stamp(off) != want {
		t.Errorf("after power off: last_power_state_change %v, want %s", stamp(off), want)
	}
}

// Inspecting a node whose inspect interface is no-inspect is Ironic's
// UnsupportedDriverExtension, refused before the state changes.
func TestProvision_InspectWithNoInspect(t *testing.T) {
	r := newRig(t)
	n := r.node(t, states.Manageable, map[string]string{"inspect": "no-inspect"})
	err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbInspect)
	const want = "Driver fake-hardware does not support inspect (disabled or not implemented)."
	if !errors.Is(err, driver.ErrUnsupported) || !strings.HasSuffix(err.Error(), ": "+want) {
		t.Fatalf("inspect with no-inspect: %v, want ErrUnsupported with %q", err, want)
	}
	if got := r.waitState(t, n.UUID, states.Manageable); got.LastError != "" {
		t.Errorf("last_error %q after a refused inspect", got.LastError)
	}
}

// A retired manageable node is not provided (Ironic's NodeIsRetired).
func TestProvision_ProvideRetired(t *testing.T) {
	r := newRig(t)
	n := r.node(t, states.Manageable, nil)
	n.Retired = true
	if err := r.store.UpdateNode(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	err := r.c.DoProvisionAction(context.Background(), n.UUID, VerbProvide)
	want := "The providing operation can't be performed on node " + n.UUID + " because it is retired."
	if !errors.Is(err, driver.ErrInvalidParameter) || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("provide of a retired node: %v, want ErrInvalidParameter with %q", err, want)
	}
	if got := r.waitState(t, n.UUID, states.Manageable); got.ProvisionState != states.Manageable {
		t.Errorf("state %s", got.ProvisionState)
	}
}
