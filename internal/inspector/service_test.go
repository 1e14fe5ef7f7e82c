package inspector_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/inspector"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// fakeBareMetal is an in-memory bare metal API: nodes and ports by UUID,
// and a record of what the inspector asked it to do.
type fakeBareMetal struct {
	mu      sync.Mutex
	nodes   map[string]*baremetal.Node
	ports   map[string][]*baremetal.Port
	applied map[string][]plan.Changes
	calls   []string // "power <uuid> <state>", "boot <uuid> <device>"
	failOn  string   // a call prefix that fails
	// previous is what each node's last inspection stored.
	previous map[string]*inspection.Previous
}

func newFakeBareMetal() *fakeBareMetal {
	return &fakeBareMetal{nodes: map[string]*baremetal.Node{}, ports: map[string][]*baremetal.Port{},
		applied: map[string][]plan.Changes{}}
}

func (f *fakeBareMetal) add(n *baremetal.Node, macs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodes[n.UUID] = n
	for _, mac := range macs {
		f.ports[n.UUID] = append(f.ports[n.UUID], &baremetal.Port{UUID: uuid.NewString(), Address: mac, NodeUUID: n.UUID,
			PXEEnabled: true, LocalLinkConnection: baremetal.JSON{}, Extra: baremetal.JSON{}, InternalInfo: baremetal.JSON{}})
	}
}

func (f *fakeBareMetal) Node(_ context.Context, ident string) (*baremetal.Node, []*baremetal.Port, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.nodes {
		if n.UUID == ident || (n.Name != "" && n.Name == ident) {
			c := *n
			var ps []*baremetal.Port
			for _, p := range f.ports[n.UUID] {
				pc := *p
				ps = append(ps, &pc)
			}
			return &c, ps, nil
		}
	}
	return nil, nil, fmt.Errorf("%w: %s", inspector.ErrNodeNotFound, ident)
}

func (f *fakeBareMetal) Apply(_ context.Context, nodeUUID string, ch plan.Changes) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied[nodeUUID] = append(f.applied[nodeUUID], ch)
	return nil
}

func (f *fakeBareMetal) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	if f.failOn != "" && strings.HasPrefix(call, f.failOn) {
		return errors.New("BMC unreachable")
	}
	return nil
}

func (f *fakeBareMetal) SetBootDevice(_ context.Context, nodeUUID, device string, _ bool) error {
	return f.record("boot " + nodeUUID + " " + device)
}

func (f *fakeBareMetal) Previous(_ context.Context, nodeUUID string) (*inspection.Previous, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.previous[nodeUUID], nil
}

func (f *fakeBareMetal) SetPowerState(_ context.Context, nodeUUID, target string) error {
	return f.record("power " + nodeUUID + " " + target)
}

func (f *fakeBareMetal) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeBareMetal) appliedTo(nodeUUID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.applied[nodeUUID])
}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type svcRig struct {
	svc      *inspector.Service
	store    store.Store
	bm       *fakeBareMetal
	clock    *clock
	mu       sync.Mutex
	notified []string
	history  []string // "<uuid> <phase>: <detail>", as Progress records
}

// Record implements driver.ProgressRecorder.
func (r *svcRig) Record(_ context.Context, nodeUUID, phase, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.history = append(r.history, nodeUUID+" "+phase+": "+detail)
}

func (r *svcRig) recorded(nodeUUID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, h := range r.history {
		if rest, ok := strings.CutPrefix(h, nodeUUID+" "); ok {
			out = append(out, rest)
		}
	}
	return out
}

func (r *svcRig) notifications() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notified)
}

// options are the inspector's defaults ([processing], [inspector],
// [DEFAULT]timeout) with the service's parts; Notify and Now are the
// caller's.
func options(db store.Store, bm inspector.BareMetal) inspector.Options {
	return inspector.Options{Store: db, BareMetal: bm, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		StoreData:                 true,
		RamdiskLogsFilenameFormat: "{uuid}_{dt:%Y%m%d-%H%M%S.%f}.tar.gz",
		CanManageBoot:             true, IntrospectionDelay: 5 * time.Second, Timeout: time.Hour}
}

// newSvcRig builds the service on SQLite with the fake bare metal API.
func newSvcRig(t testing.TB, tweak ...func(*inspector.Options)) *svcRig {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := &svcRig{store: db, bm: newFakeBareMetal(), clock: &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}}
	o := options(db, r.bm)
	o.IntrospectionDelay, o.Now = 0, r.clock.Now
	o.Progress = r
	o.Notify = func(id string) {
		r.mu.Lock()
		r.notified = append(r.notified, id)
		r.mu.Unlock()
	}
	for _, f := range tweak {
		f(&o)
	}
	r.svc, err = inspector.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.svc.Close)
	return r
}

func (r *svcRig) node(macs ...string) *baremetal.Node {
	n := &baremetal.Node{UUID: uuid.NewString(), Driver: "fake-hardware", ProvisionState: "manageable",
		DriverInfo: baremetal.JSON{}, DriverInternalInfo: baremetal.JSON{}, Properties: baremetal.JSON{}, Extra: baremetal.JSON{}}
	r.bm.add(n, macs...)
	return n
}

func (r *svcRig) introspection(t testing.TB, id string) *store.Introspection {
	t.Helper()
	in, err := r.store.GetIntrospection(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ipa", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCheckTimeouts_EndsStuckIntrospectionsOnly(t *testing.T) {
	r := newSvcRig(t) // [DEFAULT]timeout 3600 s
	ctx := context.Background()
	stuck := r.node("52:54:00:00:00:01")
	managed := r.node("52:54:00:00:00:02")
	fresh := r.node("52:54:00:00:00:03")
	done := r.node("52:54:00:00:00:04")
	if err := r.svc.Start(ctx, stuck.UUID, false, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Start(ctx, managed.UUID, true, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Start(ctx, done.UUID, false, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Abort(ctx, done.UUID); err != nil {
		t.Fatal(err)
	}
	waitState(t, r, managed.UUID, inspector.StateWaiting)
	r.clock.advance(3599 * time.Second)
	if err := r.svc.Start(ctx, fresh.UUID, false, ""); err != nil {
		t.Fatal(err)
	}

	r.svc.CheckTimeouts(ctx) // 3599 s: nothing is due
	for _, id := range []string{stuck.UUID, managed.UUID} {
		if in := r.introspection(t, id); in.State != inspector.StateWaiting {
			t.Fatalf("introspection of %s ended early: %+v", id, in)
		}
	}
	r.clock.advance(2 * time.Second)
	r.svc.CheckTimeouts(ctx)
	for _, id := range []string{stuck.UUID, managed.UUID} {
		in := r.introspection(t, id)
		if in.State != inspector.StateError || in.Error != "Introspection timeout" || in.FinishedAt == nil {
			t.Errorf("introspection of %s after the timeout: %+v", id, in)
		}
	}
	if in := r.introspection(t, fresh.UUID); in.State != inspector.StateWaiting {
		t.Errorf("fresh introspection ended: %+v", in)
	}
	if in := r.introspection(t, done.UUID); in.Error != "Canceled by operator" {
		t.Errorf("ended introspection changed: %+v", in)
	}
	// Only the managed one is powered off by the inspector; the conductor
	// is told about both.
	wantCalls := []string{"boot " + managed.UUID + " pxe", "power " + managed.UUID + " " + baremetal.PowerReboot, "power " + managed.UUID + " " + baremetal.PowerOff}
	if diff := cmp.Diff(wantCalls, r.bm.callLog()); diff != "" {
		t.Errorf("bare metal calls (-want +got):\n%s", diff)
	}
	got := r.notifications()
	for _, id := range []string{stuck.UUID, managed.UUID, done.UUID} {
		if !slices.Contains(got, id) {
			t.Errorf("conductor not notified about %s: %v", id, got)
		}
	}
	if slices.Contains(got, fresh.UUID) {
		t.Errorf("conductor notified about the running introspection of %s", fresh.UUID)
	}
}

func waitState(t testing.TB, r *svcRig, id, state string) *store.Introspection {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		in := r.introspection(t, id)
		if in.State == state {
			return in
		}
		if time.Now().After(deadline) {
			t.Fatalf("introspection of %s: %+v, want state %s", id, in, state)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestStart_ManagedBootFailureEndsIntrospection(t *testing.T) {
	r := newSvcRig(t)
	r.bm.failOn = "power"
	n := r.node("52:54:00:00:00:01")
	if err := r.svc.Start(context.Background(), n.UUID, true, ""); err != nil {
		t.Fatal(err)
	}
	in := waitState(t, r, n.UUID, inspector.StateError)
	if want := "Failed to power on the node, check its power management configuration: BMC unreachable"; in.Error != want {
		t.Errorf("error %q, want %q", in.Error, want)
	}
}

func TestStart_RestartReplacesLookupAttributesAndToken(t *testing.T) {
	r := newSvcRig(t)
	ctx := context.Background()
	n := r.node("52:54:00:00:00:01")
	if err := r.svc.Start(ctx, n.UUID, false, "first"); err != nil {
		t.Fatal(err)
	}
	// The operator replaced the NIC and the conductor restarted the
	// inspection with a new token.
	r.bm.mu.Lock()
	r.bm.ports[n.UUID][0].Address = "52:54:00:00:00:99"
	r.bm.mu.Unlock()
	if err := r.svc.Start(ctx, n.UUID, false, "second"); err != nil {
		t.Fatal(err)
	}
	in := r.introspection(t, n.UUID)
	if diff := cmp.Diff([]string{"52:54:00:00:00:99"}, in.LookupMACs); diff != "" {
		t.Errorf("lookup MACs (-want +got):\n%s", diff)
	}
	if want := sha256.Sum256([]byte("second")); !bytes.Equal(in.TokenHash, want[:]) {
		t.Errorf("token hash is not the new token's")
	}
	matches, err := r.store.LookupIntrospections(ctx, []string{"52:54:00:00:00:01"}, nil)
	if err != nil || len(matches) != 0 {
		t.Errorf("old MAC still finds the node: %v %v", matches, err)
	}
}

// A start without a token must not replace a running introspection that
// has one (issue 10: the forged start + forged report sequence); once it
// is aborted, it may.
func TestStart_TokenlessCannotReplaceTokenBearingIntrospection(t *testing.T) {
	r := newSvcRig(t)
	ctx := context.Background()
	n := r.node("52:54:00:12:34:56") // small-2nic.json's first NIC
	if err := r.svc.Start(ctx, n.UUID, false, "secret"); err != nil {
		t.Fatal(err)
	}
	err := r.svc.Start(ctx, n.UUID, false, "")
	var e *inspector.Error
	if !errors.As(err, &e) || e.Status != http.StatusConflict {
		t.Fatalf("tokenless start over a token-bearing introspection: %v, want 409", err)
	}
	if in := r.introspection(t, n.UUID); in.TokenHash == nil || in.State != inspector.StateWaiting {
		t.Fatalf("the running introspection changed: %+v", in)
	}
	// A report without the token is still refused.
	if _, err := r.svc.Continue(ctx, readFixture(t, "small-2nic.json"), ""); !errors.As(err, &e) || e.Status != http.StatusForbidden {
		t.Errorf("tokenless report: %v, want 403", err)
	}
	if err := r.svc.Abort(ctx, n.UUID); err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Start(ctx, n.UUID, false, ""); err != nil {
		t.Errorf("tokenless start after the abort: %v", err)
	}
}

func TestReapply_PreProcessingFailureKeepsUpstreamMessage(t *testing.T) {
	r := newSvcRig(t)
	ctx := context.Background()
	n := r.node("52:54:00:12:34:56")
	if err := r.svc.Start(ctx, n.UUID, false, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Continue(ctx, readFixture(t, "ramdisk-error.json"), ""); err == nil {
		t.Fatal("a ramdisk error was accepted")
	}
	if err := r.svc.Reapply(ctx, n.UUID); err != nil {
		t.Fatal(err)
	}
	in := r.introspection(t, n.UUID)
	want := "Pre-processing failures detected reapplying introspection on stored data:\n" +
		"Preprocessing hook ramdisk_error: Ramdisk reported error: The following errors were encountered:\n" +
		"* collector lldp failed: [Errno 19] No such device: 'eth1'"
	if in.State != inspector.StateError || in.Error != want {
		t.Errorf("introspection %q %q\nwant error %q", in.State, in.Error, want)
	}
	if r.bm.appliedTo(n.UUID) != 0 {
		t.Error("a failed reapply changed the node")
	}
}

// lockingPower is a NodeLocker and PowerManager whose node is locked for
// the first busy calls, as the conductor's node is while a power change it
// was asked for runs in a worker.
type lockingPower struct {
	mu    sync.Mutex
	busy  int
	calls []string
}

var errLocked = errors.New("node locked")

func (l *lockingPower) try(call string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call)
	if l.busy > 0 {
		l.busy--
		return fmt.Errorf("node n1 is locked by host c1: %w", errLocked)
	}
	return nil
}

func (l *lockingPower) WithNodeLock(ctx context.Context, ident string, fn func(context.Context, store.Store, *baremetal.Node) error) error {
	return l.try("lock " + ident)
}

func (l *lockingPower) ChangePowerState(_ context.Context, ident, target string, _ time.Duration) error {
	return l.try("power " + ident + " " + target)
}

func (l *lockingPower) SetBootDevice(_ context.Context, ident, device string, _ bool) error {
	return l.try("boot " + ident + " " + device)
}

func TestLocal_RetriesWhileTheNodeIsLocked(t *testing.T) {
	ctx := context.Background()
	changes := plan.Changes{NodePatch: []plan.PatchOp{{Op: "add", Path: "/properties/cpus", Value: "2"}}}
	for _, tc := range []struct {
		name string
		call func(l *inspector.Local) error
	}{
		{"power", func(l *inspector.Local) error { return l.SetPowerState(ctx, "n1", baremetal.PowerOff) }},
		{"boot device", func(l *inspector.Local) error { return l.SetBootDevice(ctx, "n1", baremetal.BootDevicePXE, false) }},
		{"apply", func(l *inspector.Local) error { return l.Apply(ctx, "n1", changes) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lp := &lockingPower{busy: 2}
			l := &inspector.Local{Locker: lp, Power: lp, LockedNodeErr: errLocked}
			if err := tc.call(l); err != nil {
				t.Fatalf("error %v after the lock was released", err)
			}
			if len(lp.calls) != 3 {
				t.Errorf("calls %v, want two refusals and a success", lp.calls)
			}
			// Without a way to recognise a lock, the first error is final.
			lp = &lockingPower{busy: 1}
			l = &inspector.Local{Locker: lp, Power: lp}
			if err := tc.call(l); !errors.Is(err, errLocked) || len(lp.calls) != 1 {
				t.Errorf("without LockedNodeErr: %v after %v", err, lp.calls)
			}
		})
	}
}

// failingDataStore fails to store introspection data of one kind, inside
// transactions too.
type failingDataStore struct {
	store.Store
	kind string
}

func (f *failingDataStore) SaveIntrospection(ctx context.Context, in *store.Introspection, reports ...store.IntrospectionData) error {
	for _, r := range reports {
		if r.Kind == f.kind && r.Data != nil {
			return errors.New("disk full")
		}
	}
	return f.Store.SaveIntrospection(ctx, in, reports...)
}

func (f *failingDataStore) SaveIntrospectionFrom(ctx context.Context, in *store.Introspection, from []string, reports ...store.IntrospectionData) error {
	for _, r := range reports {
		if r.Kind == f.kind && r.Data != nil {
			return errors.New("disk full")
		}
	}
	return f.Store.SaveIntrospectionFrom(ctx, in, from, reports...)
}

func (f *failingDataStore) InTx(ctx context.Context, fn func(store.Store) error) error {
	return f.Store.InTx(ctx, func(tx store.Store) error { return fn(&failingDataStore{Store: tx, kind: f.kind}) })
}

// The processed data is stored with the introspection's end; when it
// cannot be, the introspection fails with the reason and the node's
// changes stay, as when it was stored on its own.
func TestContinue_ProcessedDataNotStoredFailsIntrospection(t *testing.T) {
	r := newSvcRig(t)
	o := options(&failingDataStore{Store: r.store, kind: "processed"}, r.bm)
	o.Now = r.clock.Now
	svc, err := inspector.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	ctx := context.Background()
	n := r.node("52:54:00:12:34:56")
	if err := svc.Start(ctx, n.UUID, false, ""); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Continue(ctx, readFixture(t, "small-2nic.json"), "")
	var e *inspector.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Msg != "store processed introspection data: disk full" {
		t.Fatalf("got error %v, want a 400 naming the failed write", err)
	}
	in := r.introspection(t, n.UUID)
	if in.State != inspector.StateError || in.Error != e.Msg || in.FinishedAt == nil {
		t.Errorf("introspection %q %q finished %v", in.State, in.Error, in.FinishedAt)
	}
	if _, err := r.store.GetIntrospectionData(ctx, n.UUID, "raw"); err != nil {
		t.Errorf("raw data: %v", err)
	}
	if _, err := r.store.GetIntrospectionData(ctx, n.UUID, "processed"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("processed data: got %v, want none", err)
	}
	if r.bm.appliedTo(n.UUID) != 1 {
		t.Errorf("node changes applied %d times, want 1", r.bm.appliedTo(n.UUID))
	}
}

// staleStore answers GetIntrospection with what it read first, as a second
// inspector process that read the introspection just before the first one
// moved it would see; the compare-and-swap is all that stops it.
type staleStore struct {
	store.Store
	seen map[string]*store.Introspection
}

func (s *staleStore) GetIntrospection(ctx context.Context, node string) (*store.Introspection, error) {
	if in, ok := s.seen[node]; ok {
		c := *in
		return &c, nil
	}
	in, err := s.Store.GetIntrospection(ctx, node)
	if err == nil {
		c := *in
		s.seen[node] = &c
	}
	return in, err
}

// LookupIntrospections answers as before the first inspector finished.
func (s *staleStore) LookupIntrospections(ctx context.Context, macs, bmcs []string) ([]store.IntrospectionMatch, error) {
	ms, err := s.Store.LookupIntrospections(ctx, macs, bmcs)
	for i := range ms {
		if _, ok := s.seen[ms[i].NodeUUID]; ok {
			ms[i].Finished = false
		}
	}
	return ms, err
}

// Two inspector processes on one database get the same report (the agent
// retried): the one that moves the introspection to processing second
// loses, with nothing written and nothing applied.
func TestContinue_SecondInspectorWithTheSameReportLoses(t *testing.T) {
	r := newSvcRig(t)
	ctx := context.Background()
	n := r.node("52:54:00:12:34:56")
	if err := r.svc.Start(ctx, n.UUID, false, ""); err != nil {
		t.Fatal(err)
	}
	stale := &staleStore{Store: r.store, seen: map[string]*store.Introspection{}}
	if _, err := stale.GetIntrospection(ctx, n.UUID); err != nil { // the second inspector's read
		t.Fatal(err)
	}
	so := options(stale, r.bm)
	so.Now = r.clock.Now
	second, err := inspector.New(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Close)
	report := readFixture(t, "small-2nic.json")
	if _, err := r.svc.Continue(ctx, report, ""); err != nil {
		t.Fatal(err)
	}
	done := r.introspection(t, n.UUID)
	raw, err := r.store.GetIntrospectionData(ctx, n.UUID, "raw")
	if err != nil {
		t.Fatal(err)
	}

	_, err = second.Continue(ctx, append(bytes.Clone(report), ' '), "")
	var e *inspector.Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Msg, "is not waiting for introspection") {
		t.Fatalf("second inspector: got %v, want a 400 saying the node is not waiting", err)
	}
	if got := r.introspection(t, n.UUID); !reflect.DeepEqual(got, done) {
		t.Errorf("introspection changed by the losing report:\n got %+v\nwant %+v", got, done)
	}
	if got, _ := r.store.GetIntrospectionData(ctx, n.UUID, "raw"); !bytes.Equal(got, raw) {
		t.Error("the losing report replaced the stored raw data")
	}
	if r.bm.appliedTo(n.UUID) != 1 {
		t.Errorf("node changes applied %d times, want 1", r.bm.appliedTo(n.UUID))
	}
}

// crashInProcessing leaves the node's introspection as a process killed
// while processing its report leaves it: in processing, the raw report
// stored (unless raw is nil).
func crashInProcessing(t *testing.T, r *svcRig, n *baremetal.Node, raw []byte) {
	t.Helper()
	ctx := context.Background()
	if err := r.svc.Start(ctx, n.UUID, false, ""); err != nil {
		t.Fatal(err)
	}
	in := r.introspection(t, n.UUID)
	in.State, in.UpdatedAt = inspector.StateProcessing, r.clock.Now()
	var reports []store.IntrospectionData
	if raw != nil {
		reports = append(reports, store.IntrospectionData{Kind: "raw", Data: raw})
	}
	if err := r.store.SaveIntrospectionFrom(ctx, in, []string{inspector.StateWaiting}, reports...); err != nil {
		t.Fatal(err)
	}
}

// restart builds a new service on the rig's store, as the next run of the
// process does.
func (r *svcRig) restart(t *testing.T, exclusive bool) *inspector.Service {
	t.Helper()
	o := options(r.store, r.bm)
	o.Now, o.ExclusiveStore = r.clock.Now, exclusive
	o.Notify = func(id string) {
		r.mu.Lock()
		r.notified = append(r.notified, id)
		r.mu.Unlock()
	}
	svc, err := inspector.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

func TestRecover_ReprocessesTheStoredReport(t *testing.T) {
	r := newSvcRig(t)
	n := r.node("52:54:00:12:34:56")
	crashInProcessing(t, r, n, readFixture(t, "small-2nic.json"))

	r.restart(t, true).Recover(context.Background())
	in := r.introspection(t, n.UUID)
	if in.State != inspector.StateFinished || in.Error != "" {
		t.Fatalf("after recovery: state %q error %q, want finished", in.State, in.Error)
	}
	if r.bm.appliedTo(n.UUID) != 1 {
		t.Errorf("the node was updated %d times, want once", r.bm.appliedTo(n.UUID))
	}
	if !slices.Contains(r.notifications(), n.UUID) {
		t.Errorf("the conductor was not told")
	}
	if _, err := r.store.GetIntrospectionData(context.Background(), n.UUID, "processed"); err != nil {
		t.Errorf("processed data not stored: %v", err)
	}
}

func TestRecover_WithoutStoredReportEndsInError(t *testing.T) {
	r := newSvcRig(t)
	n := r.node("52:54:00:12:34:56")
	crashInProcessing(t, r, n, nil)
	r.restart(t, true).Recover(context.Background())
	in := r.introspection(t, n.UUID)
	if in.State != inspector.StateError || !strings.Contains(in.Error, "no copy of it was stored") {
		t.Errorf("after recovery: state %q error %q, want error with the reason", in.State, in.Error)
	}
}

// On a shared store another inspector may be processing a fresh report:
// only a stale one is recovered.
func TestRecover_SharedStoreWaitsUntilStale(t *testing.T) {
	r := newSvcRig(t)
	r.clock.now = time.Now().UTC() // the store stamps updated_at itself
	n := r.node("52:54:00:12:34:56")
	crashInProcessing(t, r, n, readFixture(t, "small-2nic.json"))
	svc := r.restart(t, false)
	svc.Recover(context.Background())
	if st := r.introspection(t, n.UUID).State; st != inspector.StateProcessing {
		t.Fatalf("a fresh processing introspection was taken over: %q", st)
	}
	r.clock.advance(10 * time.Minute)
	svc.Recover(context.Background())
	if st := r.introspection(t, n.UUID).State; st != inspector.StateFinished {
		t.Errorf("a stale processing introspection was not recovered: %q", st)
	}
}

// The callback token is bound to the inspection it was issued for: a
// token of an earlier inspection of the node is refused, and one older
// than TokenLifetime ([conductor]inspect_wait_timeout) too, the
// introspection left waiting.
func TestContinue_TokenBoundToItsInspection(t *testing.T) {
	r := newSvcRig(t, func(o *inspector.Options) { o.TokenLifetime = 10 * time.Minute })
	ctx := context.Background()
	n := r.node("52:54:00:12:34:56") // small-2nic.json's first NIC
	report := readFixture(t, "small-2nic.json")
	var e *inspector.Error
	if err := r.svc.Start(ctx, n.UUID, false, "first-inspection"); err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Abort(ctx, n.UUID); err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Start(ctx, n.UUID, false, "second-inspection"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Continue(ctx, report, "first-inspection"); !errors.As(err, &e) || e.Status != http.StatusForbidden {
		t.Fatalf("the previous inspection's token: %v, want 403", err)
	}
	r.clock.advance(10*time.Minute + time.Second)
	if _, err := r.svc.Continue(ctx, report, "second-inspection"); !errors.As(err, &e) || e.Status != http.StatusForbidden ||
		!strings.Contains(e.Error(), "Invalid or missing inspection token") {
		t.Fatalf("this inspection's token after its lifetime: %v, want 403", err)
	}
	if in := r.introspection(t, n.UUID); in.State != inspector.StateWaiting {
		t.Errorf("a refused report changed the introspection: %+v", in)
	}
	// Within its lifetime, this inspection's token is taken.
	if err := r.svc.Abort(ctx, n.UUID); err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Start(ctx, n.UUID, false, "third-inspection"); err != nil {
		t.Fatal(err)
	}
	r.clock.advance(9 * time.Minute)
	if _, err := r.svc.Continue(ctx, report, "third-inspection"); err != nil {
		t.Errorf("this inspection's token within its lifetime: %v", err)
	}
}
