package inspector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetalintrospection/noauth"

	inspectorapi "github.com/ferrometal/ferro/internal/api/inspector"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/inspect"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inspector"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// rig is the inspector made of real parts: a SQLite store, the real
// conductor with fake-hardware, the in-process bare metal client, the
// inspector service and its HTTP API behind an httptest.Server. The
// conductor's "inspector" inspect interface reaches the same API through
// inspect.HandlerTransport, as all-in-one `ferro serve` wires it.
type rig struct {
	store    store.Store
	condOpts conductor.Options
	cond     *conductor.Conductor
	svc      *inspector.Service
	api      http.Handler
	srv      *httptest.Server
	client   *gophercloud.ServiceClient // gophercloud baremetalintrospection, noauth
	capture  *captureBoot
	boots    *bootRecorder
}

// bootRecorder is fake management that remembers the boot device each
// node was set to (fake management, as Ironic's, keeps none).
type bootRecorder struct {
	fake.Management
	mu   sync.Mutex
	last map[string]string
}

func (b *bootRecorder) SetBootDevice(ctx context.Context, t *driver.Task, device string, persistent bool) error {
	if err := b.Management.SetBootDevice(ctx, t, device, persistent); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last[t.Node.UUID] = device
	return nil
}

// device is the boot device last set on the node, "" when none was.
func (b *bootRecorder) device(uuid string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last[uuid]
}

// captureBoot is the fake boot interface that records the kernel parameters
// the conductor prepares the ramdisk with, so a test can post a report with
// the per-inspection token the agent would have read from its command line.
type captureBoot struct {
	fake.Boot
	mu     sync.Mutex
	params map[string]driver.RamdiskParams
}

func (c *captureBoot) PrepareRamdisk(_ context.Context, t *driver.Task, p driver.RamdiskParams) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.params[t.Node.UUID] = p
	return nil
}

// ValidateInspection passes: unlike upstream's fake boot, which makes
// a node fall back, this one stands for a boot interface with managed
// inspection support.
func (c *captureBoot) ValidateInspection(context.Context, *driver.Task) error { return nil }

// param returns a kernel parameter the conductor passed for a node.
func (c *captureBoot) param(nodeUUID, key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.params[nodeUUID] {
		if p.Key == key {
			return p.Value
		}
	}
	return ""
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newRig starts the parts; a tweak is a func(*inspector.Options), changing
// the inspector's options before anything reads them, or, for the
// processing pipeline, a func(*inspection.Options).
func newRig(t *testing.T, tweak ...any) *rig {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	r := &rig{store: db, capture: &captureBoot{params: map[string]driver.RamdiskParams{}}, boots: &bootRecorder{last: map[string]string{}}}
	types := []driver.HardwareType{fake.HardwareType}
	enabled := driver.EnableAll(types)
	enabled.Interfaces["boot"] = append(enabled.Interfaces["boot"], "capture", "unmanaged")
	reg := driver.NewRegistry(types, enabled)
	pipeline := inspection.DefaultOptions(inspection.Inspector)
	pipeline.Hooks = inspector.DefaultHooks
	var inspTweaks []func(*inspector.Options)
	for _, f := range tweak {
		switch f := f.(type) {
		case func(*inspector.Options):
			inspTweaks = append(inspTweaks, f)
		case func(*inspection.Options):
			f(&pipeline)
		default:
			t.Fatalf("rig tweak of type %T", f)
		}
	}
	fake.Register(reg)
	reg.RegisterManagement("fake", r.boots)
	reg.RegisterNetwork("noop", network.Noop{})
	reg.RegisterBoot("capture", r.capture)
	reg.RegisterBoot("unmanaged", unmanagedBoot{})
	// The API is built after the conductor (the bare metal client needs its
	// locks), so the transport looks the handler up when it is used.
	lazyAPI := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.api.ServeHTTP(w, req) })
	ic, err := inspect.NewHTTPClient(inspect.ClientOptions{Endpoint: "http://inspector.in-process",
		HTTPClient: &http.Client{Transport: inspect.HandlerTransport{Handler: lazyAPI}}})
	if err != nil {
		t.Fatal(err)
	}
	// The rig's agent presents the token: managed inspections issue one.
	reg.RegisterInspect("inspector", inspect.New(inspect.Options{Client: ic, Inventory: db,
		Callback:              callback.Settings{ListenAddress: "127.0.0.1", ListenPort: 5050},
		AllowLoopbackCallback: true, PowerOff: true, Agent: inspect.AgentFerro, PowerTimeout: time.Minute}))

	r.condOpts = conductor.Options{Store: db, Registry: reg, Log: quietLog(), Host: "c1", Workers: 4,
		PowerTimeout: time.Minute, HeartbeatTimeout: time.Minute, InspectWaitTimeout: 30 * time.Minute,
		// Huge: completion must come from the inspector's notification, not a poll.
		StatusCheckPeriod: 24 * time.Hour}
	r.cond = conductor.New(r.condOpts)
	if err := r.cond.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.cond.Stop(ctx); err != nil {
			t.Errorf("stop conductor: %v", err)
		}
	})

	bm := &inspector.Local{Store: db, Locker: r.cond, Power: r.cond, LockedNodeErr: conductor.ErrNodeLocked}
	// The inspector's defaults, without the delay before a managed boot.
	so := inspector.Options{Store: db, BareMetal: bm, Log: quietLog(), Notify: r.cond.NotifyInspectionFinished,
		Pipeline: &pipeline, StoreData: true,
		RamdiskLogsFilenameFormat: "{uuid}_{dt:%Y%m%d-%H%M%S.%f}.tar.gz", CanManageBoot: true, Timeout: time.Hour}
	for _, f := range inspTweaks {
		f(&so)
	}
	r.svc, err = inspector.New(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.svc.Close)
	r.api = inspectorapi.New(inspectorapi.Options{Service: r.svc, Rules: db, Log: quietLog(), MaxLimit: 1000})

	transport := &http.Transport{}
	r.srv = httptest.NewServer(r.api)
	t.Cleanup(func() {
		transport.CloseIdleConnections()
		r.srv.Close()
	})
	r.client, err = noauth.NewBareMetalIntrospectionNoAuth(noauth.EndpointOpts{IronicInspectorEndpoint: r.srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	r.client.HTTPClient = http.Client{Transport: transport}
	return r
}

// nodeSpec describes a node to create.
type nodeSpec struct {
	state      string
	name       string
	macs       []string // one port each
	driverInfo baremetal.JSON
	properties baremetal.JSON
	interfaces map[string]string // overrides of the fake interfaces
}

// node creates a fake-hardware node with its ports directly in the store.
func (r *rig) node(t *testing.T, s nodeSpec) *baremetal.Node {
	t.Helper()
	ctx := context.Background()
	ifs := map[string]string{}
	for _, k := range driver.Kinds {
		ifs[k] = "fake"
	}
	ifs["network"] = "noop"
	for k, v := range s.interfaces {
		ifs[k] = v
	}
	if s.state == "" {
		s.state = "manageable"
	}
	if s.driverInfo == nil {
		s.driverInfo = baremetal.JSON{}
	}
	if s.properties == nil {
		s.properties = baremetal.JSON{}
	}
	n := &baremetal.Node{UUID: uuid.NewString(), Name: s.name, Driver: "fake-hardware", ProvisionState: s.state,
		PowerState: baremetal.PowerOff, Interfaces: ifs, DriverInfo: s.driverInfo, DriverInternalInfo: baremetal.JSON{},
		Properties: s.properties, Extra: baremetal.JSON{}, InstanceInfo: baremetal.JSON{}}
	if err := r.store.CreateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	for _, mac := range s.macs {
		r.port(t, n.UUID, mac, nil)
	}
	got, err := r.store.GetNode(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// port creates a port on a node, with an operator-set local_link_connection.
func (r *rig) port(t *testing.T, nodeUUID, mac string, llc baremetal.JSON) *baremetal.Port {
	t.Helper()
	if llc == nil {
		llc = baremetal.JSON{}
	}
	p := &baremetal.Port{UUID: uuid.NewString(), Address: mac, NodeUUID: nodeUUID, PXEEnabled: true,
		LocalLinkConnection: llc, Extra: baremetal.JSON{}, InternalInfo: baremetal.JSON{}}
	if err := r.store.CreatePort(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func (r *rig) ports(t *testing.T, nodeUUID string) []*baremetal.Port {
	t.Helper()
	ps, err := r.store.ListPorts(context.Background(), store.PortFilter{NodeUUID: nodeUUID})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func (r *rig) getNode(t *testing.T, id string) *baremetal.Node {
	t.Helper()
	n, err := r.store.GetNode(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// introspection returns a node's introspection record, nil if none.
func (r *rig) introspection(t *testing.T, nodeUUID string) *store.Introspection {
	t.Helper()
	in, err := r.store.GetIntrospection(context.Background(), nodeUUID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// data returns a node's stored report of a kind, nil if none.
func (r *rig) data(t *testing.T, nodeUUID, kind string) []byte {
	t.Helper()
	b, err := r.store.GetIntrospectionData(context.Background(), nodeUUID, kind)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// start starts an introspection over the API without a token; manage_boot
// is sent as a raw query because gophercloud v2.16's StartIntrospection
// builds the manage_boot query and then drops it.
func (r *rig) start(t *testing.T, ident string, manageBoot bool, token string) {
	t.Helper()
	q := "?manage_boot=false"
	if manageBoot {
		q = "?manage_boot=true"
	}
	h := http.Header{}
	if token != "" {
		h.Set(inspect.TokenHeader, token)
	}
	resp := r.do(t, http.MethodPost, "/v1/introspection/"+ident+q, h, nil)
	if resp.status != http.StatusAccepted {
		t.Fatalf("start introspection of %s: %d %s", ident, resp.status, resp.body)
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// errorMessage returns error.message of an inspector error body.
func (r response) errorMessage(t *testing.T) string {
	t.Helper()
	var e struct {
		Error *struct {
			Message *string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == nil || e.Error.Message == nil {
		t.Fatalf("body %q is not an inspector error {\"error\":{\"message\":…}} (%v)", r.body, err)
	}
	return *e.Error.Message
}

// do sends a raw request to the API server.
func (r *rig) do(t *testing.T, method, path string, h http.Header, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(method, r.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// continueReport posts a report to /v1/continue with an optional token header.
func (r *rig) continueReport(t *testing.T, body []byte, token string) response {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set(inspect.TokenHeader, token)
	}
	return r.do(t, http.MethodPost, "/v1/continue", h, body)
}

// snapshot is everything a report could change for one node.
type snapshot struct {
	Node          *baremetal.Node
	Ports         []*baremetal.Port
	Introspection *store.Introspection
	Raw           []byte
	Processed     []byte
}

func (r *rig) snapshot(t *testing.T, nodeUUID string) snapshot {
	t.Helper()
	return snapshot{Node: r.getNode(t, nodeUUID), Ports: r.ports(t, nodeUUID),
		Introspection: r.introspection(t, nodeUUID), Raw: r.data(t, nodeUUID, "raw"), Processed: r.data(t, nodeUUID, "processed")}
}

// unchanged fails the test if anything of before's node changed. The
// reservation is left out: the conductor's status check, notified when an
// earlier introspection of the node ended, takes the node's lock for a moment.
func (r *rig) unchanged(t *testing.T, before snapshot) {
	t.Helper()
	after := r.snapshot(t, before.Node.UUID)
	if diff := cmp.Diff(before, after, cmpopts.IgnoreFields(baremetal.Node{}, "Reservation")); diff != "" {
		t.Errorf("node %s changed by a rejected report (-before +after):\n%s", before.Node.UUID, diff)
	}
}

// waitIntrospection polls until the node's introspection reaches state.
func (r *rig) waitIntrospection(t *testing.T, nodeUUID, state string) *store.Introspection {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		in := r.introspection(t, nodeUUID)
		if in != nil && in.State == state {
			return in
		}
		if time.Now().After(deadline) {
			t.Fatalf("introspection of %s is %+v, want state %q", nodeUUID, in, state)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitState polls until the node reaches want with no lock held.
func (r *rig) waitState(t *testing.T, id, want string, deadline time.Duration) *baremetal.Node {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		n := r.getNode(t, id)
		if n.ProvisionState == want && n.Reservation == "" {
			return n
		}
		if time.Now().After(end) {
			t.Fatalf("node %s in state %q (reservation %q, last_error %q), want %q", id, n.ProvisionState, n.Reservation, n.LastError, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// fixture reads a payload from the repository's testdata/ipa.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "ipa", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// referencePayload is the reference IPA payload (testdata/ipa/example.json).
func referencePayload(t testing.TB) []byte {
	t.Helper()
	return fixture(t, "example.json")
}

// edit decodes a JSON document, lets fn change it and encodes it again.
func edit(t testing.TB, doc []byte, fn func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// inv returns the report's inventory object.
func inv(m map[string]any) map[string]any { return m["inventory"].(map[string]any) }

// ifaceMACs returns the report's interface MACs in order.
func ifaceMACs(t testing.TB, doc []byte) []string {
	t.Helper()
	var m struct {
		Inventory struct {
			Interfaces []struct {
				MAC string `json:"mac_address"`
			} `json:"interfaces"`
		} `json:"inventory"`
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, i := range m.Inventory.Interfaces {
		out = append(out, strings.ToLower(i.MAC))
	}
	return out
}

// withMAC replaces a MAC in a report, in its colon and BOOTIF (dash) forms.
func withMAC(doc []byte, from, to string) []byte {
	s := strings.ReplaceAll(string(doc), from, to)
	s = strings.ReplaceAll(s, strings.ReplaceAll(from, ":", "-"), strings.ReplaceAll(to, ":", "-"))
	return []byte(s)
}

// waitPower polls until the node's power state is want and no power change is pending.
func (r *rig) waitPower(t *testing.T, id, want string) *baremetal.Node {
	t.Helper()
	end := time.Now().Add(10 * time.Second)
	for {
		n := r.getNode(t, id)
		if n.PowerState == want && n.TargetPowerState == "" && n.Reservation == "" {
			return n
		}
		if time.Now().After(end) {
			t.Fatalf("node %s power state %q (target %q, last_error %q), want %q", id, n.PowerState, n.TargetPowerState, n.LastError, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
