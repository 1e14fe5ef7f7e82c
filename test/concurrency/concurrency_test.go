// Package concurrency_test checks node locking end to end over real HTTP:
// many clients asking for work on one node at the same time get exactly
// one 202 and Ironic's 409 NodeLocked for the rest, the node ends in a
// consistent state, and no reservation is left behind.
//
// To make "exactly one 202" deterministic the winner must still hold the
// lock when the others arrive, so these tests run the API and the conductor
// in-process (over an httptest server and a real SQLite store) with a
// driver that blocks inside the winner's task until every response is in.
// process_test.go runs the same race against a real `ferro serve`, where
// fake drivers finish in microseconds and only weaker invariants hold.
package concurrency_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/ipmi"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/driver/redfish"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// parallel is how many clients race for the node.
const parallel = 50

// host is the in-process conductor's name, the holder written in reservations.
const host = "concurrency-test"

// gate holds a driver call until the test releases it, while armed.
type gate struct {
	armed   atomic.Bool
	calls   atomic.Int32
	entered chan struct{} // receives once per held call
	release chan struct{}
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, parallel), release: make(chan struct{})}
}

// pass counts the call and, while the gate is armed, waits for release.
func (g *gate) pass(ctx context.Context) error {
	g.calls.Add(1)
	if !g.armed.Load() {
		return nil
	}
	g.entered <- struct{}{}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// gatedPower is fake power whose Validate, which verifying runs in the
// manage worker, passes through a gate.
type gatedPower struct {
	fake.Power
	g *gate
}

func (p gatedPower) Validate(ctx context.Context, t *driver.Task) error {
	if err := p.g.pass(ctx); err != nil {
		return err
	}
	return p.Power.Validate(ctx, t)
}

// gatedInspect is fake inspection whose InspectHardware, which runs in
// the inspecting worker, passes through a gate.
type gatedInspect struct {
	fake.Inspect
	g *gate
}

func (i gatedInspect) InspectHardware(ctx context.Context, t *driver.Task) (string, error) {
	if err := i.g.pass(ctx); err != nil {
		return "", err
	}
	return i.Inspect.InspectHardware(ctx, t)
}

// api is a client of an Ironic API at url.
type api struct {
	url    string
	client *http.Client
}

// newAPI returns a client with one connection per racing client, so the
// requests really arrive together.
func newAPI(t *testing.T, url string) *api {
	tr := &http.Transport{MaxIdleConnsPerHost: parallel}
	t.Cleanup(tr.CloseIdleConnections)
	return &api{url: url, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// rig is the Ironic API and a conductor over SQLite, served over real HTTP.
type rig struct {
	*api
	power *gate
	insp  *gate
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	// Registered first, so it runs after every part below has stopped.
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })

	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "ferro.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	r := &rig{power: newGate(), insp: newGate()}
	types := []driver.HardwareType{fake.HardwareType, ipmi.HardwareType, redfish.HardwareType}
	reg := driver.NewRegistry(types, driver.EnableAll(types))
	fake.Register(reg)
	reg.RegisterNetwork("noop", network.Noop{})
	// fake-hardware nodes get the "fake" interfaces; here they block on demand.
	reg.RegisterPower("fake", gatedPower{g: r.power})
	reg.RegisterInspect("fake", gatedInspect{g: r.insp})

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cond := conductor.New(conductor.Options{Store: db, Registry: reg, Log: log, Host: host, Workers: 100,
		PowerTimeout: time.Minute, HeartbeatInterval: 10 * time.Second, StatusCheckPeriod: time.Minute,
		CheckProvisionStateInterval: time.Minute, HeartbeatTimeout: time.Minute, InspectWaitTimeout: 30 * time.Minute})
	if err := cond.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Never leave a test blocked on a gate it did not open.
		for _, g := range []*gate{r.power, r.insp} {
			if g.armed.Swap(false) {
				select {
				case <-g.release:
				default:
					close(g.release)
				}
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cond.Stop(ctx); err != nil {
			t.Errorf("stop conductor: %v", err)
		}
	})

	srv := httptest.NewServer(ironic.New(ironic.Options{Store: db, Conductor: cond, Log: log, MaxLimit: 1000, HeartbeatTimeout: time.Minute, Host: host}))
	t.Cleanup(srv.Close)
	r.api = newAPI(t, srv.URL)
	return r
}

// response is one HTTP answer.
type response struct {
	status int
	body   []byte
}

func (r *api) do(t *testing.T, method, path, body string) response {
	t.Helper()
	resp, err := r.send(method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// send is do without the test, for goroutines.
func (r *api) send(method, path, body string) (response, error) {
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: b}, err
}

// node is the part of a node's view the tests look at.
type node struct {
	UUID                 string         `json:"uuid"`
	ProvisionState       string         `json:"provision_state"`
	TargetProvisionState *string        `json:"target_provision_state"`
	Reservation          *string        `json:"reservation"`
	LastError            *string        `json:"last_error"`
	PowerState           *string        `json:"power_state"`
	Description          *string        `json:"description"`
	Extra                map[string]any `json:"extra"`
	InspectionFinishedAt *string        `json:"inspection_finished_at"`
}

func (r *api) getNode(t *testing.T, id string) node {
	t.Helper()
	resp := r.do(t, http.MethodGet, "/v1/nodes/"+id, "")
	if resp.status != http.StatusOK {
		t.Fatalf("GET node %s: %d %s", id, resp.status, resp.body)
	}
	var n node
	if err := json.Unmarshal(resp.body, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// createNode enrols a fake-hardware node.
func (r *api) createNode(t *testing.T) node {
	t.Helper()
	resp := r.do(t, http.MethodPost, "/v1/nodes",
		`{"driver": "fake-hardware", "name": "race", "description": "before", "extra": {"rack": "r1"}}`)
	if resp.status != http.StatusCreated {
		t.Fatalf("create node: %d %s", resp.status, resp.body)
	}
	var n node
	if err := json.Unmarshal(resp.body, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// provision sends a provision verb and wants 202.
func (r *api) provision(t *testing.T, id, verb string) {
	t.Helper()
	if resp := r.do(t, http.MethodPut, "/v1/nodes/"+id+"/states/provision", `{"target": "`+verb+`"}`); resp.status != http.StatusAccepted {
		t.Fatalf("%s node %s: %d %s", verb, id, resp.status, resp.body)
	}
}

// waitStable polls until the node is in want with no lock held.
func (r *api) waitStable(t *testing.T, id, want string) node {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := r.getNode(t, id)
		if n.ProvisionState == want && n.Reservation == nil {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: provision_state %q, reservation %v, last_error %v; want %q and no reservation",
				id, n.ProvisionState, deref(n.Reservation), deref(n.LastError), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// fault decodes Ironic's error body: the fault is JSON inside the
// error_message string.
func fault(t *testing.T, body []byte) (code, msg string) {
	t.Helper()
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	if err := json.Unmarshal(body, &outer); err != nil || outer.ErrorMessage == "" {
		t.Fatalf("not an Ironic error body: %s (%v)", body, err)
	}
	var inner struct {
		FaultCode   string  `json:"faultcode"`
		FaultString string  `json:"faultstring"`
		DebugInfo   *string `json:"debuginfo"`
	}
	if err := json.Unmarshal([]byte(outer.ErrorMessage), &inner); err != nil {
		t.Fatalf("error_message is not a JSON fault: %q (%v)", outer.ErrorMessage, err)
	}
	return inner.FaultCode, inner.FaultString
}

// checkNodeLocked wants Ironic's NodeLocked: 409, faultcode Client, and
// the exception's message naming the node and the holder.
func checkNodeLocked(t *testing.T, resp response, id, holder string) {
	t.Helper()
	if resp.status != http.StatusConflict {
		t.Errorf("status %d, want 409: %s", resp.status, resp.body)
		return
	}
	code, msg := fault(t, resp.body)
	want := regexp.MustCompile(`^Node ` + regexp.QuoteMeta(id) + ` is locked by host ` + regexp.QuoteMeta(holder) +
		`, please retry after the current operation is completed\.$`)
	if code != "Client" || !want.MatchString(msg) {
		t.Errorf("409 fault = %q %q, want Client and %q", code, msg, want)
	}
}

// race sends the same provision verb from parallel clients at once and
// returns the answers.
func (r *api) race(t *testing.T, id, verb string) []response {
	t.Helper()
	out := make([]response, parallel)
	errs := make([]error, parallel)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range parallel {
		wg.Go(func() {
			<-start
			out[i], errs[i] = r.send(http.MethodPut, "/v1/nodes/"+id+"/states/provision", `{"target": "`+verb+`"}`)
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
	}
	return out
}

func TestProvision_ParallelRequestsOneWinsRestNodeLocked(t *testing.T) {
	tests := []struct {
		name string
		// setup brings the node to the state the race starts from.
		setup func(t *testing.T, r *api, id string)
		verb  string
		gate  func(r *rig) *gate
		// held is the state the node is in while the winner's task runs.
		held string
		// check looks at the final node.
		check func(t *testing.T, n node)
	}{
		{
			name:  "manage from enroll, held in verifying",
			setup: func(*testing.T, *api, string) {},
			verb:  "manage",
			gate:  func(r *rig) *gate { return r.power },
			held:  "verifying",
			check: func(t *testing.T, n node) {
				// Fake power, as Ironic's, reports none until the
				// first power action: verifying leaves it null.
				if n.PowerState != nil {
					t.Errorf("power_state after verifying = %v, want none (null)", deref(n.PowerState))
				}
			},
		},
		{
			name: "inspect from manageable, held in inspecting",
			setup: func(t *testing.T, r *api, id string) {
				r.provision(t, id, "manage")
				r.waitStable(t, id, "manageable")
			},
			verb: "inspect",
			gate: func(r *rig) *gate { return r.insp },
			held: "inspecting",
			check: func(t *testing.T, n node) {
				if n.InspectionFinishedAt == nil {
					t.Error("inspection_finished_at not set")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			id := r.createNode(t).UUID
			tc.setup(t, r.api, id)
			g := tc.gate(r)
			g.armed.Store(true)
			callsBefore := g.calls.Load()

			answers := r.race(t, id, tc.verb)

			// Every answer is in and the winner's task is still inside the
			// driver, holding the lock.
			select {
			case <-g.entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the winner's task never reached the driver")
			}
			held := r.getNode(t, id)
			if held.ProvisionState != tc.held || deref(held.Reservation) != host {
				t.Errorf("while the task runs: provision_state %q reservation %v, want %q and %q",
					held.ProvisionState, deref(held.Reservation), tc.held, host)
			}
			g.armed.Store(false)
			close(g.release)

			var accepted int
			for _, a := range answers {
				if a.status == http.StatusAccepted {
					accepted++
					continue
				}
				checkNodeLocked(t, a, id, host)
			}
			if accepted != 1 {
				t.Errorf("%d answers were 202, want exactly 1", accepted)
			}

			n := r.waitStable(t, id, "manageable")
			if n.TargetProvisionState != nil || n.LastError != nil {
				t.Errorf("final node: target_provision_state %v, last_error %v; want both null",
					deref(n.TargetProvisionState), deref(n.LastError))
			}
			tc.check(t, n)
			if got := g.calls.Load() - callsBefore; got != 1 {
				t.Errorf("the driver ran %d times, want once (only the winner's task)", got)
			}
		})
	}
}

func TestPatch_WhileLockedIsNodeLockedAndChangesNothing(t *testing.T) {
	r := newRig(t)
	before := r.createNode(t)
	id := before.UUID
	r.power.armed.Store(true)
	r.provision(t, id, "manage")
	select {
	case <-r.power.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the manage task never reached the driver")
	}

	patch := `[{"op": "add", "path": "/extra/owner_team", "value": "blue"},
		{"op": "replace", "path": "/description", "value": "after"},
		{"op": "remove", "path": "/extra/rack"}]`
	checkNodeLocked(t, r.do(t, http.MethodPatch, "/v1/nodes/"+id, patch), id, host)
	// By name too: the lock is the node's, whatever the client calls it.
	checkNodeLocked(t, r.do(t, http.MethodPatch, "/v1/nodes/race", patch), id, host)

	r.power.armed.Store(false)
	close(r.power.release)
	after := r.waitStable(t, id, "manageable")
	if diff := cmp.Diff(before.Extra, after.Extra); diff != "" {
		t.Errorf("extra changed by a refused PATCH (-before +after):\n%s", diff)
	}
	if deref(after.Description) != "before" {
		t.Errorf("description = %v, want it unchanged", deref(after.Description))
	}

	// The node is free again: the same PATCH now applies.
	if resp := r.do(t, http.MethodPatch, "/v1/nodes/"+id, patch); resp.status != http.StatusOK {
		t.Fatalf("PATCH after the task: %d %s", resp.status, resp.body)
	}
	got := r.getNode(t, id)
	if diff := cmp.Diff(map[string]any{"owner_team": "blue"}, got.Extra); diff != "" || deref(got.Description) != "after" {
		t.Errorf("PATCH after the task: description %v, extra diff:\n%s", deref(got.Description), diff)
	}
	if got.Reservation != nil {
		t.Errorf("reservation %v left after PATCH", deref(got.Reservation))
	}
}
