package inspector_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/inspector"
	"github.com/ferrometal/ferro/internal/store"
)

// callsFor returns the boot and power calls made for one node.
func (f *fakeBareMetal) callsFor(nodeUUID string) []string {
	var out []string
	for _, c := range f.callLog() {
		if strings.Contains(c, " "+nodeUUID+" ") {
			out = append(out, c)
		}
	}
	return out
}

// waitCalls waits until the node has had the calls want.
func waitCalls(t *testing.T, r *svcRig, nodeUUID string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Equal(r.bm.callsFor(nodeUUID), want) {
		if time.Now().After(deadline) {
			t.Fatalf("calls for %s: %v, want %v", nodeUUID, r.bm.callsFor(nodeUUID), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Managed boots are spaced [inspector]introspection_delay apart as
// ironic-inspector's _wait_for_turn: the first boots at once, the next
// ones wait their turn; an abort of one that waits wins over its boot,
// which then never touches the node, and frees the turn for the others.
func TestStart_ManagedBootsTakeTurnsAndAbortWinsOverAPendingOne(t *testing.T) {
	r := newSvcRig(t, func(o *inspector.Options) { o.IntrospectionDelay = time.Hour })
	ctx := context.Background()
	a, b, c := r.node("52:54:00:00:0a:01"), r.node("52:54:00:00:0b:01"), r.node("52:54:00:00:0c:01")
	for _, n := range []string{a.UUID, b.UUID, c.UUID} {
		if err := r.svc.Start(ctx, n, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	// The first is not delayed.
	waitCalls(t, r, a.UUID, "boot "+a.UUID+" pxe", "power "+a.UUID+" rebooting")
	waitState(t, r, a.UUID, inspector.StateWaiting)
	if got := r.recorded(a.UUID); !slices.Equal(got, []string{"powered on: rebooted into the ramdisk by the inspector (manage_boot)"}) {
		t.Errorf("history of the booted node %q", got)
	}
	// The others wait for their turn, an hour after it.
	for _, n := range []string{b.UUID, c.UUID} {
		if in := r.introspection(t, n); in.State != inspector.StateStarting {
			t.Errorf("introspection of %s is %q while waiting for its turn, want starting", n, in.State)
		}
		if calls := r.bm.callsFor(n); len(calls) != 0 {
			t.Errorf("node %s was touched before its turn: %v", n, calls)
		}
	}
	// Aborting a pending boot ends the introspection and touches nothing:
	// not even a power-off, nothing was booted.
	for _, n := range []string{b.UUID, c.UUID} {
		if err := r.svc.Abort(ctx, n); err != nil {
			t.Fatalf("abort %s: %v", n, err)
		}
		in := r.introspection(t, n)
		if in.State != inspector.StateError || in.Error != "Canceled by operator" || in.FinishedAt == nil {
			t.Errorf("introspection of %s after abort: %+v", n, in)
		}
		if got := r.recorded(n); !slices.Equal(got, []string{"aborted: through the inspector API"}) {
			t.Errorf("history of %s %q", n, got)
		}
	}
	// Close waits for the boot goroutines: they must have given up.
	r.svc.Close()
	for _, n := range []string{b.UUID, c.UUID} {
		if calls := r.bm.callsFor(n); len(calls) != 0 {
			t.Errorf("aborted node %s was touched: %v", n, calls)
		}
	}
}

// Aborting a booted managed introspection powers the node off, once the
// abort returned, and says so in the history.
func TestAbort_BootedManagedIntrospectionPowersOff(t *testing.T) {
	r := newSvcRig(t)
	ctx := context.Background()
	n := r.node("52:54:00:00:0d:01")
	if err := r.svc.Start(ctx, n.UUID, true, ""); err != nil {
		t.Fatal(err)
	}
	waitState(t, r, n.UUID, inspector.StateWaiting)
	if err := r.svc.Abort(ctx, n.UUID); err != nil {
		t.Fatal(err)
	}
	waitCalls(t, r, n.UUID, "boot "+n.UUID+" pxe", "power "+n.UUID+" rebooting", "power "+n.UUID+" power off")
	deadline := time.Now().Add(10 * time.Second)
	want := []string{"powered on: rebooted into the ramdisk by the inspector (manage_boot)",
		"aborted: through the inspector API", "powered off: by the inspector (manage_boot)"}
	for !slices.Equal(r.recorded(n.UUID), want) {
		if time.Now().After(deadline) {
			t.Fatalf("history %q, want %q", r.recorded(n.UUID), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// As ironic-inspector 11.1: aborting an introspection that ended succeeds
// and changes nothing (no state, no power).
func TestAbort_EndedIntrospectionChangesNothing(t *testing.T) {
	r := newSvcRig(t)
	ctx := context.Background()
	n := r.node("52:54:00:12:34:56")
	if err := r.svc.Start(ctx, n.UUID, false, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Continue(ctx, readFixture(t, "small-2nic.json"), ""); err != nil {
		t.Fatal(err)
	}
	before := r.introspection(t, n.UUID)
	for range 2 {
		if err := r.svc.Abort(ctx, n.UUID); err != nil {
			t.Fatalf("abort of a finished introspection: %v", err)
		}
	}
	after := r.introspection(t, n.UUID)
	if after.State != inspector.StateFinished || after.Error != "" || !after.FinishedAt.Equal(*before.FinishedAt) {
		t.Errorf("after abort %+v, want %+v", after, before)
	}
	if calls := r.bm.callsFor(n.UUID); len(calls) != 0 {
		t.Errorf("abort touched the node: %v", calls)
	}
	var e *inspector.Error
	if err := r.svc.Abort(ctx, r.node("52:54:00:12:34:57").UUID); !errors.As(err, &e) || e.Status != 404 {
		t.Errorf("abort of a node never introspected: %v, want 404", err)
	}
}

// A new introspection drops the previous one's data, as ironic-inspector's
// add_node; a start and an abort leave none either.
func TestStart_DropsThePreviousData(t *testing.T) {
	r := newSvcRig(t)
	ctx := context.Background()
	n := r.node("52:54:00:12:34:56")
	if err := r.svc.Start(ctx, n.UUID, false, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Continue(ctx, readFixture(t, "small-2nic.json"), ""); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"raw", "processed"} {
		if _, err := r.svc.Data(ctx, n.UUID, kind); err != nil {
			t.Fatalf("%s data after processing: %v", kind, err)
		}
	}
	if err := r.svc.Start(ctx, n.UUID, false, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Abort(ctx, n.UUID); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"raw", "processed"} {
		if _, err := r.store.GetIntrospectionData(ctx, n.UUID, kind); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s data after a new start: %v, want none", kind, err)
		}
	}
	if got := r.recorded(n.UUID); !slices.Contains(got, "aborted: through the inspector API") {
		t.Errorf("history %q lacks the abort", got)
	}
}

// A failed introspection started through the inspector API is in the
// node's history with its reason; one the conductor runs is not (the
// conductor records its end itself).
func TestEnd_FailureRecordedUnlessTheConductorRunsTheInspection(t *testing.T) {
	r := newSvcRig(t)
	r.bm.failOn = "power"
	ctx := context.Background()
	own, cond := r.node("52:54:00:00:0e:01"), r.node("52:54:00:00:0e:02")
	r.bm.nodes[cond.UUID].ProvisionState = "inspect wait"
	for _, n := range []string{own.UUID, cond.UUID} {
		if err := r.svc.Start(ctx, n, true, ""); err != nil {
			t.Fatal(err)
		}
		waitState(t, r, n, inspector.StateError)
	}
	const reason = "Failed to power on the node, check its power management configuration: BMC unreachable"
	if got := r.recorded(own.UUID); !slices.Contains(got, "failed: "+reason) {
		t.Errorf("history %q lacks the failure", got)
	}
	if got := r.recorded(cond.UUID); slices.ContainsFunc(got, func(h string) bool { return strings.HasPrefix(h, "failed") }) {
		t.Errorf("history of the conductor's inspection %q records the failure twice", got)
	}
}
