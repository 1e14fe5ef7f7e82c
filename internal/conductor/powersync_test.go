package conductor

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// fakeBMC is a power interface whose machines keep their own power state,
// so it can change behind the conductor's back (out of band), and whose
// BMCs can stop answering.
type fakeBMC struct {
	mu    sync.Mutex
	power map[string]string
	down  map[string]bool
	reads map[string]int
	sets  map[string]int
}

func newFakeBMC() *fakeBMC {
	return &fakeBMC{power: map[string]string{}, down: map[string]bool{}, reads: map[string]int{}, sets: map[string]int{}}
}

func (b *fakeBMC) Validate(context.Context, *driver.Task) error { return nil }

func (b *fakeBMC) PowerState(_ context.Context, t *driver.Task) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reads[t.Node.UUID]++
	if b.down[t.Node.UUID] {
		return "", errors.New("BMC unreachable")
	}
	return b.power[t.Node.UUID], nil
}

func (b *fakeBMC) SetPowerState(_ context.Context, t *driver.Task, s string, _ time.Duration) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sets[t.Node.UUID]++
	if b.down[t.Node.UUID] {
		return errors.New("BMC unreachable")
	}
	if s == baremetal.PowerReboot {
		s = baremetal.PowerOn
	}
	b.power[t.Node.UUID] = s
	return nil
}

func (b *fakeBMC) set(id, state string) { b.mu.Lock(); b.power[id] = state; b.mu.Unlock() }

// powerRig is a rig whose conductor syncs power with sync and whose nodes'
// power interface is a fakeBMC.
func powerRig(t *testing.T, sync PowerSync) (*rig, *fakeBMC) {
	r := newRigWith(t, func(o *Options, _ *driver.Enabled) {})
	bmc := newFakeBMC()
	r.c.reg.RegisterPower("bmc", bmc)
	r.c.o.PowerSync = sync
	return r, bmc
}

// node creates a node in state with the BMC's power and the record's.
func powerNode(t *testing.T, r *rig, bmc *fakeBMC, state, actual, recorded string) *baremetal.Node {
	t.Helper()
	n := r.node(t, state, map[string]string{"power": "bmc"})
	n.PowerState = recorded
	if err := r.store.UpdateNode(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	bmc.set(n.UUID, actual)
	return n
}

func getNode(t *testing.T, r *rig, id string) *baremetal.Node {
	t.Helper()
	n, err := r.store.GetNode(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A machine powered off out of band is powered back on (force, Ironic's
// default); a node whose state matches is read and not written; a locked
// node, one in maintenance and one in inspect wait are not asked at all.
func TestSyncPowerStates_ForcesTheRecordedStateBack(t *testing.T) {
	r, bmc := powerRig(t, PowerSync{Interval: time.Minute, Force: true, MaxRetries: 3, Workers: 2})
	ctx := context.Background()
	on, off := baremetal.PowerOn, baremetal.PowerOff
	changed := powerNode(t, r, bmc, states.Active, off, on)
	same := powerNode(t, r, bmc, states.Manageable, on, on)
	locked := powerNode(t, r, bmc, states.Manageable, off, on)
	if _, err := r.store.ReserveNode(ctx, locked.UUID, "c1"); err != nil {
		t.Fatal(err)
	}
	maint := powerNode(t, r, bmc, states.Manageable, off, on)
	maint.Maintenance = true
	if err := r.store.UpdateNode(ctx, maint); err != nil {
		t.Fatal(err)
	}
	waiting := powerNode(t, r, bmc, states.InspectWait, off, on)
	sameBefore := getNode(t, r, same.UUID).UpdatedAt

	res := r.c.SyncPowerStates(ctx)
	if res.Checked != 2 || res.Corrected != 1 || res.Failed != 0 {
		t.Errorf("sync = %+v, want 2 checked, 1 corrected", res)
	}
	if got := getNode(t, r, changed.UUID); got.PowerState != on || got.Reservation != "" || bmc.power[changed.UUID] != on {
		t.Errorf("changed out of band: record %q, BMC %q, reservation %q; want powered back on", got.PowerState, bmc.power[changed.UUID], got.Reservation)
	}
	if got := getNode(t, r, same.UUID); !got.UpdatedAt.Equal(*sameBefore) || bmc.sets[same.UUID] != 0 {
		t.Errorf("a node whose power matched was written (updated_at %v → %v, %d power actions)", sameBefore, got.UpdatedAt, bmc.sets[same.UUID])
	}
	for _, n := range []*baremetal.Node{locked, maint, waiting} {
		if bmc.reads[n.UUID] != 0 || bmc.sets[n.UUID] != 0 {
			t.Errorf("node in %q (maintenance %v, locked %v) was synced", n.ProvisionState, n.Maintenance, n.UUID == locked.UUID)
		}
	}
}

// Without force, the record follows the BMC.
func TestSyncPowerStates_WithoutForceRecordsTheBMCsState(t *testing.T) {
	r, bmc := powerRig(t, PowerSync{Interval: time.Minute, MaxRetries: 3, Workers: 8})
	n := powerNode(t, r, bmc, states.Active, baremetal.PowerOff, baremetal.PowerOn)
	unknown := powerNode(t, r, bmc, states.Manageable, baremetal.PowerOn, "")
	r.c.SyncPowerStates(context.Background())
	if got := getNode(t, r, n.UUID); got.PowerState != baremetal.PowerOff || bmc.sets[n.UUID] != 0 {
		t.Errorf("record %q after %d power actions, want power off and none", got.PowerState, bmc.sets[n.UUID])
	}
	if got := getNode(t, r, unknown.UUID); got.PowerState != baremetal.PowerOn {
		t.Errorf("node with no recorded state: %q, want the BMC's power on", got.PowerState)
	}
}

// A BMC that stops answering fails power_state_sync_max_retries syncs in a
// row; the next one puts the node in maintenance with fault "power
// failure" and a "monitoring" history entry, as Ironic. Only nodes this
// conductor owns on the hash ring are synced.
func TestSyncPowerStates_DeadBMCReachesMaintenance(t *testing.T) {
	r, bmc := powerRig(t, PowerSync{Interval: time.Minute, Force: true, MaxRetries: 2, Workers: 8})
	ctx := context.Background()
	n := powerNode(t, r, bmc, states.Available, baremetal.PowerOff, baremetal.PowerOff)
	bmc.mu.Lock()
	bmc.down[n.UUID] = true
	bmc.mu.Unlock()
	for i := 1; i <= 2; i++ {
		if res := r.c.SyncPowerStates(ctx); res.Failed != 1 {
			t.Fatalf("sync %d: %+v, want 1 failed", i, res)
		}
		if getNode(t, r, n.UUID).Maintenance {
			t.Fatalf("in maintenance after %d failed syncs of 2 allowed", i)
		}
	}
	r.c.SyncPowerStates(ctx)
	got := getNode(t, r, n.UUID)
	if !got.Maintenance || got.Fault != "power failure" || !strings.Contains(got.MaintenanceReason, "max retries exceeded") ||
		got.Reservation != "" || got.PowerState != "" {
		t.Fatalf("after 3 failed syncs: maintenance %v fault %q reason %q power %q reservation %q",
			got.Maintenance, got.Fault, got.MaintenanceReason, got.PowerState, got.Reservation)
	}
	hist, err := r.store.ListHistory(ctx, n.UUID)
	if err != nil || len(hist) == 0 || hist[len(hist)-1].EventType != "monitoring" || hist[len(hist)-1].Severity != baremetal.SeverityError {
		t.Errorf("history %+v (%v), want a monitoring error", hist, err)
	}
	// In maintenance now: the next sync leaves it alone.
	reads := bmc.reads[n.UUID]
	r.c.SyncPowerStates(ctx)
	if bmc.reads[n.UUID] != reads {
		t.Error("a node in maintenance was synced")
	}

	// A second conductor takes its share of the ring: this one syncs only its own nodes.
	if err := r.store.RegisterConductor(ctx, &store.Conductor{Hostname: "c2", Online: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.c.refreshRing(ctx); err != nil {
		t.Fatal(err)
	}
	var mine, theirs int
	for range 40 {
		m := powerNode(t, r, bmc, states.Available, baremetal.PowerOn, baremetal.PowerOn)
		if r.c.owns(m.UUID, "") {
			mine++
		} else {
			theirs++
		}
	}
	if res := r.c.SyncPowerStates(ctx); res.Checked != mine || theirs == 0 {
		t.Errorf("checked %d nodes, want this conductor's %d (of %d)", res.Checked, mine, mine+theirs)
	}
}

// A forced power action the BMC refuses is recorded in last_error and
// the history, and counts as a failed sync.
func TestSyncPowerStates_FailedForcedActionIsRecorded(t *testing.T) {
	r, bmc := powerRig(t, PowerSync{Interval: time.Minute, Force: true, MaxRetries: 3, Workers: 8})
	ctx := context.Background()
	n := powerNode(t, r, bmc, states.Active, baremetal.PowerOff, baremetal.PowerOn)
	r.c.reg.RegisterPower("bmc", refusingSet{bmc})
	if res := r.c.SyncPowerStates(ctx); res.Failed != 1 || res.Corrected != 1 {
		t.Errorf("sync = %+v, want the node corrected and failed", res)
	}
	got := getNode(t, r, n.UUID)
	if !strings.Contains(got.LastError, "Failed to change power state to 'power on'") || got.PowerState != baremetal.PowerOn || got.Reservation != "" {
		t.Errorf("last_error %q, power %q, reservation %q", got.LastError, got.PowerState, got.Reservation)
	}
	if hist, _ := r.store.ListHistory(ctx, n.UUID); len(hist) == 0 || hist[len(hist)-1].EventType != "monitoring" {
		t.Errorf("history %+v, want the failed action", hist)
	}
}

// refusingSet is a fakeBMC that refuses every power action.
type refusingSet struct{ *fakeBMC }

func (refusingSet) SetPowerState(context.Context, *driver.Task, string, time.Duration) error {
	return errors.New("IPMI: command refused")
}

// healthBMC is a management interface whose machines report a health.
type healthBMC struct {
	fake.Management
	mu     sync.Mutex
	health map[string]string
	err    error
}

func (h *healthBMC) Health(_ context.Context, t *driver.Task) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.health[t.Node.UUID], h.err
}

// Ironic's node_cache_health: the power sync writes the BMC's health
// into node.health and a change into the history (monitoring, INFO);
// an unchanged health writes nothing, a failing read keeps the value,
// and [conductor]enable_health_monitoring off reads nothing.
func TestSyncPowerStates_CachesHealth(t *testing.T) {
	r, bmc := powerRig(t, PowerSync{Interval: time.Minute, Force: true, MaxRetries: 3, Workers: 1, Health: true})
	hb := &healthBMC{health: map[string]string{}}
	r.c.reg.RegisterManagement("hbmc", hb)
	ctx := context.Background()
	n := r.node(t, states.Manageable, map[string]string{"power": "bmc", "management": "hbmc"})
	plain := powerNode(t, r, bmc, states.Manageable, baremetal.PowerOn, baremetal.PowerOn)
	bmc.set(n.UUID, baremetal.PowerOn)

	events := func() []string {
		t.Helper()
		h, err := r.store.ListHistory(ctx, n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range h {
			out = append(out, e.EventType+"/"+e.Severity+": "+e.Event)
		}
		return out
	}
	hb.health[n.UUID] = baremetal.HealthOK
	r.c.SyncPowerStates(ctx)
	if got := getNode(t, r, n.UUID); got.Health != "OK" || got.Reservation != "" {
		t.Fatalf("health %q reservation %q, want OK and unlocked", got.Health, got.Reservation)
	}
	before := getNode(t, r, n.UUID).UpdatedAt
	r.c.SyncPowerStates(ctx)
	if got := getNode(t, r, n.UUID); !got.UpdatedAt.Equal(*before) {
		t.Errorf("an unchanged health wrote the node")
	}
	hb.health[n.UUID] = baremetal.HealthCritical
	r.c.SyncPowerStates(ctx)
	hb.err = errors.New("BMC unreachable")
	r.c.SyncPowerStates(ctx)
	if got := getNode(t, r, n.UUID); got.Health != "Critical" {
		t.Errorf("after a failed read: health %q, want Critical kept", got.Health)
	}
	hb.err = nil
	hb.health[n.UUID] = ""
	r.c.SyncPowerStates(ctx)
	want := []string{
		"monitoring/INFO: Node health status changed: health='OK' (previously 'None')",
		"monitoring/INFO: Node health status changed: health='Critical' (previously 'OK')",
		"monitoring/INFO: Node health status changed: health='None' (previously 'Critical')",
	}
	if got := events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := getNode(t, r, plain.UUID); got.Health != "" {
		t.Errorf("a management interface without health gave %q", got.Health)
	}

	r.c.o.PowerSync.Health = false
	hb.health[n.UUID] = baremetal.HealthWarning
	r.c.SyncPowerStates(ctx)
	if got := getNode(t, r, n.UUID); got.Health != "" {
		t.Errorf("monitoring off: health %q, want unread", got.Health)
	}
}
