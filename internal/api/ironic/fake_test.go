package ironic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/ipmi"
	"github.com/ferrometal/ferro/internal/driver/redfish"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
	"github.com/ferrometal/ferro/internal/store/sql"
)

// fakeConductor is a hand-written Conductor: locks are the store's
// reservations, provision actions run their whole transition at once, and
// every call is recorded.
type fakeConductor struct {
	store store.Store
	reg   *driver.Registry
	host  string

	mu    sync.Mutex
	calls []string
	// err, when set, is returned by the next action (then cleared).
	err error
	// bootDevice per node UUID.
	bootDevice map[string]string
	persistent map[string]bool
	validate   map[string]conductor.ValidationResult
}

func newFakeConductor(s store.Store, reg *driver.Registry) *fakeConductor {
	yes := true
	return &fakeConductor{
		store: s, reg: reg, host: "fake-conductor",
		bootDevice: map[string]string{}, persistent: map[string]bool{},
		validate: map[string]conductor.ValidationResult{
			"power": {Result: &yes}, "management": {Result: &yes}, "boot": {Result: &yes},
			"deploy": {Result: &yes}, "inspect": {Result: &yes}, "network": {Result: &yes},
			"console": {Result: nil, Reason: "not supported"},
		},
	}
}

func (f *fakeConductor) record(format string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	err := f.err
	f.err = nil
	return err
}

func (f *fakeConductor) failNext(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

func (f *fakeConductor) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeConductor) Registry() *driver.Registry { return f.reg }

func (f *fakeConductor) WithNodeLock(ctx context.Context, ident string, fn func(ctx context.Context, tx store.Store, n *baremetal.Node) error) error {
	n, err := f.store.ReserveNode(ctx, ident, f.host)
	if err != nil {
		return err
	}
	defer f.store.ReleaseNode(context.Background(), n.UUID, f.host)
	return f.store.InTx(ctx, func(tx store.Store) error {
		n, err := tx.GetNode(ctx, n.UUID)
		if err != nil {
			return err
		}
		return fn(ctx, tx, n)
	})
}

// DoProvisionAction runs the verb's transitions to the next stable state.
func (f *fakeConductor) DoProvisionAction(ctx context.Context, ident, target string) error {
	if err := f.record("provision %s %s", ident, target); err != nil {
		return err
	}
	return f.WithNodeLock(ctx, ident, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		next, err := states.Next(n.ProvisionState, target)
		if err != nil {
			return fmt.Errorf("%w: %v", conductor.ErrInvalidState, err)
		}
		for _, ev := range []string{states.EventDone} {
			if states.IsTransient(next) {
				if nn, err := states.Next(next, ev); err == nil {
					next = nn
				}
			}
		}
		n.ProvisionState = next
		n.TargetProvisionState = ""
		now := time.Now()
		n.ProvisionUpdatedAt = &now
		return tx.UpdateNode(ctx, n)
	})
}

// DoNodeDeploy records the steps and runs the deployment as DoProvisionAction.
func (f *fakeConductor) DoNodeDeploy(ctx context.Context, ident, verb string, steps []baremetal.DeployStep) error {
	if len(steps) > 0 {
		if err := f.record("deploy steps %s %v", ident, steps); err != nil {
			return err
		}
	}
	return f.DoProvisionAction(ctx, ident, verb)
}

// DoNodeClean records the steps and runs manual cleaning to manageable.
func (f *fakeConductor) DoNodeClean(ctx context.Context, ident string, steps []conductor.CleanStep) error {
	if err := f.record("clean %s %v", ident, steps); err != nil {
		return err
	}
	return f.WithNodeLock(ctx, ident, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if !states.Can(n.ProvisionState, states.EventClean) {
			return fmt.Errorf("%w: manual clean from %s", conductor.ErrInvalidState, n.ProvisionState)
		}
		n.ProvisionState = states.Manageable
		return tx.UpdateNode(ctx, n)
	})
}

// DoNodeService records the steps and runs servicing back to active.
func (f *fakeConductor) DoNodeService(ctx context.Context, ident string, steps []conductor.CleanStep, disableRamdisk bool) error {
	if err := f.record("service %s %v disable_ramdisk=%v", ident, steps, disableRamdisk); err != nil {
		return err
	}
	return f.WithNodeLock(ctx, ident, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if !states.Can(n.ProvisionState, states.EventService) {
			return fmt.Errorf("%w: service from %s", conductor.ErrInvalidState, n.ProvisionState)
		}
		n.ProvisionState = states.Active
		return tx.UpdateNode(ctx, n)
	})
}

func (f *fakeConductor) ChangePowerState(ctx context.Context, ident, target string, timeout time.Duration) error {
	if err := f.record("power %s %s %s", ident, target, timeout); err != nil {
		return err
	}
	return f.WithNodeLock(ctx, ident, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		n.PowerState = target
		if target == baremetal.PowerReboot {
			n.PowerState = baremetal.PowerOn
		}
		return tx.UpdateNode(ctx, n)
	})
}

func (f *fakeConductor) SetBootDevice(ctx context.Context, ident, device string, persistent bool) error {
	if err := f.record("set boot device %s %s %v", ident, device, persistent); err != nil {
		return err
	}
	if !slices.Contains([]string{"pxe", "disk", "cdrom", "bios", "safe"}, device) {
		return fmt.Errorf("%w: invalid boot device %s", driver.ErrInvalidParameter, device)
	}
	f.mu.Lock()
	f.bootDevice[ident], f.persistent[ident] = device, persistent
	f.mu.Unlock()
	return nil
}

func (f *fakeConductor) GetBootDevice(ctx context.Context, ident string) (string, bool, error) {
	if err := f.record("get boot device %s", ident); err != nil {
		return "", false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bootDevice[ident], f.persistent[ident], nil
}

// The fake's virtual media: one CD; a node of fake-hardware has none
// (Ironic's fake management does not implement it).
func (f *fakeConductor) GetVirtualMedia(ctx context.Context, ident string) ([]driver.VirtualMediaDevice, error) {
	if err := f.record("get vmedia %s", ident); err != nil {
		return nil, err
	}
	if err := f.vmediaSupported(ctx, ident); err != nil {
		return nil, err
	}
	return []driver.VirtualMediaDevice{{MediaTypes: []string{"CD", "DVD"}, Inserted: true, Image: "http://img/x.iso"}}, nil
}

func (f *fakeConductor) AttachVirtualMedia(ctx context.Context, ident, deviceType, imageURL string) error {
	if err := f.record("attach vmedia %s %s %s", ident, deviceType, imageURL); err != nil {
		return err
	}
	return f.vmediaSupported(ctx, ident)
}

func (f *fakeConductor) DetachVirtualMedia(ctx context.Context, ident string, deviceTypes []string) error {
	if err := f.record("detach vmedia %s %v", ident, deviceTypes); err != nil {
		return err
	}
	return f.vmediaSupported(ctx, ident)
}

func (f *fakeConductor) vmediaSupported(ctx context.Context, ident string) error {
	n, err := f.store.GetNode(ctx, ident)
	if err != nil {
		return err
	}
	if n.Driver == "fake-hardware" {
		return fmt.Errorf("%w: Driver fake-hardware does not support virtual media (disabled or not implemented).", driver.ErrUnsupported)
	}
	return nil
}

func (f *fakeConductor) SupportedBootDevices(ctx context.Context, ident string) ([]string, error) {
	if err := f.record("supported boot devices %s", ident); err != nil {
		return nil, err
	}
	return []string{"pxe", "disk"}, nil
}

func (f *fakeConductor) ValidateNode(ctx context.Context, ident string) (map[string]conductor.ValidationResult, error) {
	if err := f.record("validate %s", ident); err != nil {
		return nil, err
	}
	return f.validate, nil
}

// StartAllocate runs Allocate at once: the fake has no workers.
func (f *fakeConductor) StartAllocate(allocationUUID string) error {
	return f.Allocate(context.Background(), allocationUUID)
}

// Allocate picks the first available, unassociated node of the class
// having the traits.
func (f *fakeConductor) Allocate(ctx context.Context, allocationUUID string) error {
	if err := f.record("allocate %s", allocationUUID); err != nil {
		return err
	}
	a, err := f.store.GetAllocation(ctx, allocationUUID)
	if err != nil {
		return err
	}
	no := false
	nodes, err := f.store.ListNodes(ctx, store.NodeFilter{
		ProvisionState: []string{states.Available}, ResourceClass: a.ResourceClass, Associated: &no, Maintenance: &no,
	})
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if len(a.CandidateNodes) > 0 && !slices.Contains(a.CandidateNodes, n.UUID) {
			continue
		}
		ok := true
		for _, t := range a.Traits {
			ok = ok && slices.Contains(n.Traits, t)
		}
		if !ok {
			continue
		}
		return f.WithNodeLock(ctx, n.UUID, func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
			n.InstanceUUID, n.AllocationUUID = a.UUID, a.UUID
			if err := tx.UpdateNode(ctx, n); err != nil {
				return err
			}
			a.NodeUUID, a.State = n.UUID, baremetal.AllocationActive
			return tx.UpdateAllocation(ctx, a)
		})
	}
	a.State, a.LastError = baremetal.AllocationError, "No available nodes match the resource class "+a.ResourceClass
	return f.store.UpdateAllocation(ctx, a)
}

// env is one API under test: the handler, its store and fake conductor.
type env struct {
	t     testing.TB
	h     http.Handler
	store store.Store
	cond  *fakeConductor
	// opts are the handler's options, without a logger.
	opts Options
	logs *bytes.Buffer
}

// testStore is a fresh SQLite store in t.TempDir(), closed when t ends.
func testStore(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// testRegistry is the driver registry of ferro's hardware types with every
// interface enabled, as `ferro serve` builds it on its defaults.
func testRegistry() *driver.Registry {
	return driver.NewRegistry(testHardwareTypes, driver.EnableAll(testHardwareTypes))
}

// newEnv starts the API over a fresh SQLite store in t.TempDir().
func newEnv(t testing.TB) *env {
	t.Helper()
	db := testStore(t)
	fc := newFakeConductor(db, testRegistry())
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: logs}, nil))
	o := Options{Store: db, Conductor: fc, MaxLimit: 1000, PublicEndpoint: "http://ferro.test:6385",
		HeartbeatTimeout: time.Minute, Host: "test-host", DefaultResourceClass: "baremetal"}
	ho := o
	ho.Log, ho.Version = log, "test"
	return &env{t: t, h: New(ho), store: db, cond: fc, opts: o, logs: logs}
}

// testHardwareTypes are ferro's hardware types.
var testHardwareTypes = []driver.HardwareType{fake.HardwareType, ipmi.HardwareType, redfish.HardwareType}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// resp is a recorded response.
type resp struct {
	code   int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
	return m
}

// fault decodes Ironic's error body: the error_message string holds JSON.
func (r resp) fault(t testing.TB) map[string]any {
	t.Helper()
	var outer map[string]string
	if err := json.Unmarshal(r.body, &outer); err != nil {
		t.Fatalf("error body %q is not {\"error_message\": string}: %v", r.body, err)
	}
	var inner map[string]any
	if err := json.Unmarshal([]byte(outer["error_message"]), &inner); err != nil {
		t.Fatalf("error_message %q is not JSON: %v", outer["error_message"], err)
	}
	return inner
}

// do sends a request with a microversion ("" for none).
func (e *env) do(method, path, version string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if version != "" {
		req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return resp{code: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// must sends a request and fails unless the status is want.
func (e *env) must(want int, method, path, version string, body any) resp {
	e.t.Helper()
	r := e.do(method, path, version, body)
	if r.code != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.code, want, r.body)
	}
	return r
}

const latest = "1.82"

// latestMinor is latest's minor version.
const latestMinor = 82

// createNode creates a node through the API and returns its view.
func (e *env) createNode(body map[string]any) map[string]any {
	e.t.Helper()
	if _, ok := body["driver"]; !ok {
		body["driver"] = "fake-hardware"
	}
	return e.must(http.StatusCreated, "POST", "/v1/nodes", latest, body).json(e.t)
}

// setState forces a node's provision state in the store.
func (e *env) setState(ident, state string) {
	e.t.Helper()
	ctx := e.t.Context()
	n, err := e.store.GetNode(ctx, ident)
	if err != nil {
		e.t.Fatal(err)
	}
	n.ProvisionState = state
	if err := e.store.UpdateNode(ctx, n); err != nil {
		e.t.Fatal(err)
	}
}

// updateNode changes a node in the store.
func (e *env) updateNode(ident string, fn func(n *baremetal.Node)) {
	e.t.Helper()
	ctx := e.t.Context()
	n, err := e.store.GetNode(ctx, ident)
	if err != nil {
		e.t.Fatal(err)
	}
	fn(n)
	if err := e.store.UpdateNode(ctx, n); err != nil {
		e.t.Fatal(err)
	}
}

// snapshot renders everything the API can change, to prove a failed
// request changed nothing.
func (e *env) snapshot() string {
	e.t.Helper()
	ctx := e.t.Context()
	check := func(err error) {
		if err != nil {
			e.t.Fatal(err)
		}
	}
	nodes, err := e.store.ListNodes(ctx, store.NodeFilter{})
	check(err)
	ports, err := e.store.ListPorts(ctx, store.PortFilter{})
	check(err)
	pgs, err := e.store.ListPortgroups(ctx, store.PortgroupFilter{})
	check(err)
	allocs, err := e.store.ListAllocations(ctx, store.AllocationFilter{})
	check(err)
	reservations := []string{}
	for _, n := range nodes {
		reservations = append(reservations, n.UUID+"="+n.Reservation)
	}
	raw, err := json.MarshalIndent(map[string]any{
		"nodes": nodes, "ports": ports, "portgroups": pgs, "allocations": allocs, "reservations": reservations,
	}, "", " ")
	if err != nil {
		e.t.Fatal(err)
	}
	return string(raw)
}

// lockNode takes a node's reservation as another conductor.
func (e *env) lockNode(ident string) {
	e.t.Helper()
	if _, err := e.store.ReserveNode(e.t.Context(), ident, "other-conductor"); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) unlockNode(ident string) {
	e.t.Helper()
	n, err := e.store.GetNode(e.t.Context(), ident)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.ReleaseNode(e.t.Context(), n.UUID, "other-conductor"); err != nil {
		e.t.Fatal(err)
	}
}

// str reads a string member of a decoded view.
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

var errBoom = errors.New("boom")

// doHeaders sends a bodiless request with the given headers.
func (e *env) doHeaders(method, path string, headers map[string]string) resp {
	e.t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return resp{code: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}
