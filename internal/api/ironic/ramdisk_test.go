package ironic

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/reportbudget"
)

// fakeReports answers ContinueInspection with err, or accepts the report
// for node with token; it keeps what it was given.
type fakeReports struct {
	mu    sync.Mutex
	got   []conductor.InspectionReport
	err   error
	node  *baremetal.Node
	token string
}

func (f *fakeReports) ContinueInspection(_ context.Context, r conductor.InspectionReport) (*conductor.Accepted, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, r)
	if f.err != nil {
		return nil, f.err
	}
	if r.Done != nil {
		r.Done() // processed at once
	}
	return &conductor.Accepted{Node: f.node, AgentToken: f.token}, nil
}

const ramdiskNode = "6d4c8a9e-1f2b-4c3d-8e5f-a1b2c3d4e5f6"

func newRamdiskEnv(t *testing.T, o RamdiskOptions) (*env, *fakeReports) {
	t.Helper()
	e := newEnv(t)
	f := &fakeReports{node: &baremetal.Node{UUID: ramdiskNode, Properties: baremetal.JSON{"cpu_arch": "x86_64"},
		InstanceInfo: baremetal.JSON{}, Interfaces: map[string]string{"management": "redfish"},
		DriverInternalInfo: baremetal.JSON{"agent_secret_token": "s3cret", "agent_last_heartbeat": "x"}}}
	if o.Reports == nil {
		o.Reports = f
	}
	opts := e.opts
	opts.Ramdisk = o
	e.h = New(opts)
	return e, f
}

func ipaRelease(t *testing.T, name string) []byte {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "ipa", "releases", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// IPA 12 posts without a version header: 1.1, answered as
// ironic-inspector was, {"uuid"} with 202; the lookup attributes are the
// valid MACs, normalised, and the BMC addresses that are set.
func TestContinueInspection_IPA12At11(t *testing.T) {
	e, f := newRamdiskEnv(t, RamdiskOptions{})
	var report map[string]any
	if err := json.Unmarshal(ipaRelease(t, "12.0.0.json"), &report); err != nil {
		t.Fatal(err)
	}
	inv := report["inventory"].(map[string]any)
	ifaces := inv["interfaces"].([]any)
	ifaces[1].(map[string]any)["mac_address"] = "52:54:22:A0:00:02" // normalised
	inv["interfaces"] = append(ifaces, map[string]any{"name": "bond0", "mac_address": "not-a-mac"})
	inv["bmc_v6address"] = "fd00::7"
	body, _ := json.Marshal(report)
	req := httptest.NewRequest(http.MethodPost, "/v1/continue_inspection", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Ferro-Inspection-Token", "tok")
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted || rec.Body.String() != `{"uuid": "`+ramdiskNode+`"}` {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if v := rec.Header().Get("X-OpenStack-Ironic-API-Version"); v != "1.1" {
		t.Errorf("version %q", v)
	}
	got := f.got[0]
	if diff := cmp.Diff([]string{"52:54:22:a0:00:01", "52:54:22:a0:00:02"}, got.MACs); diff != "" {
		t.Errorf("MACs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fd00::7"}, got.BMCAddresses); diff != "" {
		t.Errorf("BMC addresses (-want +got):\n%s", diff)
	}
	if got.Token != "tok" || got.AgentToken || got.NodeUUID != "" || got.Report == nil {
		t.Errorf("report %+v", got)
	}
}

// Every release's exact body and headers is accepted at 1.1.
func TestContinueInspection_EveryIPARelease(t *testing.T) {
	e, f := newRamdiskEnv(t, RamdiskOptions{})
	var rels []struct {
		File    string            `json:"file"`
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(ipaRelease(t, "releases.json"), &rels); err != nil {
		t.Fatal(err)
	}
	for _, rel := range rels {
		req := httptest.NewRequest(http.MethodPost, "/v1/continue_inspection", bytes.NewReader(ipaRelease(t, rel.File)))
		for k, v := range rel.Headers {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			t.Errorf("%s: %d %s", rel.File, rec.Code, rec.Body)
		}
	}
	if len(f.got) != len(rels) {
		t.Errorf("%d reports handed on, want %d", len(f.got), len(rels))
	}
}

// Only 1.1 and ≥ 1.84; node_uuid only at ≥ 1.84; an unknown version 406.
func TestContinueInspection_Versions(t *testing.T) {
	e, f := newRamdiskEnv(t, RamdiskOptions{})
	body := ipaRelease(t, "12.0.0.json")
	for _, v := range []string{"1.2", "1.31", "1.82"} {
		r := e.do(http.MethodPost, "/v1/continue_inspection", v, body)
		if r.code != http.StatusNotFound || r.fault(t)["faultstring"] != "API version 1.84 or newer is required" {
			t.Errorf("at %s: %d %s", v, r.code, r.body)
		}
	}
	r := e.do(http.MethodPost, "/v1/continue_inspection?node_uuid="+ramdiskNode, "", body)
	if r.code != http.StatusNotFound {
		t.Errorf("node_uuid at 1.1: %d %s", r.code, r.body)
	}
	if r := e.do(http.MethodPost, "/v1/continue_inspection", "1.999", body); r.code != http.StatusNotAcceptable {
		t.Errorf("at 1.999: %d %s", r.code, r.body)
	}
	if len(f.got) != 0 {
		t.Errorf("%d reports handed on by refused requests", len(f.got))
	}
}

// atVersion serves a request at a microversion ServeHTTP would refuse
// while the server's maximum is below it: the mux alone, with the
// request's version set, as ServeHTTP would set it.
func atVersion(t *testing.T, e *env, minor int, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	s := e.h.(*server)
	rec := httptest.NewRecorder()
	rw := &respWriter{ResponseWriter: rec}
	rw.rq.w, rw.rq.r, rw.rq.minor, rw.rq.base = rec, req, minor, "http://ferro.test:6385"
	s.mux.ServeHTTP(rw, req)
	return rec
}

// At ≥ 1.84 (injected: the server's maximum is 1.82 on this branch) the
// answer is Ironic's lookup answer, with the agent token in config only.
func TestContinueInspection_LookupAnswerAt184(t *testing.T) {
	e, f := newRamdiskEnv(t, RamdiskOptions{HeartbeatTimeout: 120})
	f.token = "s3cret"
	req := httptest.NewRequest(http.MethodPost, "/v1/continue_inspection?node_uuid="+strings.ToUpper(ramdiskNode), bytes.NewReader(ipaRelease(t, "12.0.0.json")))
	rec := atVersion(t, e, 84, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var ans struct {
		Node   map[string]any `json:"node"`
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	if ans.Node["uuid"] != ramdiskNode || ans.Node["properties"].(map[string]any)["cpu_arch"] != "x86_64" {
		t.Errorf("node %v", ans.Node)
	}
	if dii := ans.Node["driver_internal_info"].(map[string]any); dii["agent_secret_token"] != "******" {
		t.Errorf("driver_internal_info %v: the token must be masked", dii)
	}
	for _, k := range []string{"uuid", "properties", "instance_info", "driver_internal_info", "links"} {
		if _, ok := ans.Node[k]; !ok {
			t.Errorf("node lacks %s", k)
		}
	}
	if len(ans.Node) != 5 {
		t.Errorf("node has %d fields, want Ironic's 4 and links: %v", len(ans.Node), ans.Node)
	}
	c := ans.Config
	if c["agent_token"] != "s3cret" || c["agent_token_required"] != true || c["heartbeat_timeout"] != float64(120) || c["agent_skip_bmc_detect"] != true {
		t.Errorf("config %v", c)
	}
	got := f.got[0]
	if !got.AgentToken || got.NodeUUID != ramdiskNode {
		t.Errorf("handed on: agent token %t, node %q", got.AgentToken, got.NodeUUID)
	}
	// 1.83 is neither.
	rec = atVersion(t, e, 83, httptest.NewRequest(http.MethodPost, "/v1/continue_inspection", bytes.NewReader(ipaRelease(t, "12.0.0.json"))))
	if rec.Code != http.StatusNotFound {
		t.Errorf("at 1.83: %d", rec.Code)
	}
	rec = atVersion(t, e, 84, httptest.NewRequest(http.MethodPost, "/v1/continue_inspection?node_uuid=nope", bytes.NewReader(ipaRelease(t, "12.0.0.json"))))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Expected UUID for node_uuid: nope") {
		t.Errorf("bad node_uuid: %d %s", rec.Code, rec.Body)
	}
}

// Bad input gets Ironic's answers and never reaches the conductor.
func TestContinueInspection_BadInput(t *testing.T) {
	e, f := newRamdiskEnv(t, RamdiskOptions{MaxBodyBytes: 64 << 10})
	iface := `{"name": "eth0", "mac_address": "52:54:00:00:00:01"}`
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"not an object", `[1]`, 400, "Schema error for data: [1] is not of type 'object'"},
		{"no inventory", `{"root_disk": {}}`, 400, "Schema error for data: 'inventory' is a required property"},
		{"inventory a list", `{"inventory": []}`, 400, "Schema error for data: [] is not of type 'object'"},
		{"no interfaces", `{"inventory": {"cpu": {}}}`, 400, "Schema error for data: 'interfaces' is a required property"},
		{"no interface", `{"inventory": {"interfaces": []}}`, 400, "Schema error for data: [] should be non-empty"},
		{"interface without a MAC", `{"inventory": {"interfaces": [{"name": "eth0"}]}}`, 400, "Schema error for data: 'mac_address' is a required property"},
		{"MAC not a string", `{"inventory": {"interfaces": [{"mac_address": 5}]}}`, 400, "Schema error for data: 5 is not of type 'string'"},
		{"bmc_address a number", `{"inventory": {"interfaces": [` + iface + `], "bmc_address": 1}}`, 400, "Schema error for data: 1 is not of type 'string', 'null'"},
		{"not JSON", `{"inventory":`, 400, "Invalid JSON"},
		{"too deep", `{"inventory": {"interfaces": [` + iface + `], "x": ` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`, 400,
			`{"faultcode": "Client", "faultstring": "Request body JSON is nested too deeply. Please contact the service administrator."}`},
		{"too large", `{"inventory": {"interfaces": [` + iface + `]}, "logs": "` + strings.Repeat("A", 64<<10) + `"}`, 413,
			`{"faultcode": "Client", "faultstring": "Request body is too large. Please contact the service administrator."}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(http.MethodPost, "/v1/continue_inspection", "", tc.body)
			if r.code != tc.status || !strings.Contains(string(r.body), tc.want) {
				t.Errorf("%d %s, want %d with %q", r.code, r.body, tc.status, tc.want)
			}
		})
	}
	// A chunked body past the limit (no Content-Length) is cut at it.
	req := httptest.NewRequest(http.MethodPost, "/v1/continue_inspection", strings.NewReader(`{"logs": "`+strings.Repeat("A", 80<<10)+`"}`))
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked body past the limit: %d %s", rec.Code, rec.Body)
	}
	if len(f.got) != 0 {
		t.Errorf("%d bad reports handed on", len(f.got))
	}
}

// What the conductor answers becomes Ironic's status: one generic 404 for
// every lookup failure, 400 without lookup attributes, 409 locked, 503 busy.
func TestContinueInspection_ConductorAnswers(t *testing.T) {
	body := ipaRelease(t, "12.0.0.json")
	for _, tc := range []struct {
		err    error
		status int
		msg    string
	}{
		{conductor.ErrLookupFailed, 404, "Resource could not be found."},
		{conductor.ErrNoLookupInfo, 400, "No lookup information provided"},
		{conductor.ErrNodeLocked, 409, ""},
		{conductor.ErrNoFreeWorker, 503, "Requested action cannot be performed due to lack of free conductor workers."},
	} {
		e, f := newRamdiskEnv(t, RamdiskOptions{})
		f.err = tc.err
		r := e.do(http.MethodPost, "/v1/continue_inspection", "", body)
		if r.code != tc.status || (tc.msg != "" && r.fault(t)["faultstring"] != tc.msg) {
			t.Errorf("%v: %d %s", tc.err, r.code, r.body)
		}
	}
	e, _ := newRamdiskEnv(t, RamdiskOptions{Disabled: true})
	if r := e.do(http.MethodPost, "/v1/continue_inspection", "", body); r.code != http.StatusForbidden {
		t.Errorf("enable_ramdisk_endpoints = false: %d %s", r.code, r.body)
	}
}

// A refused report gives its share of the budget back: a budget that
// holds one report at a time still takes one after many refusals.
func TestContinueInspection_RefusalsReleaseTheBudget(t *testing.T) {
	body := ipaRelease(t, "12.0.0.json")
	budget, err := reportbudget.New(reportbudget.Options{Bytes: reportbudget.Cost(int64(len(body)), int64(len(body))/2+1), MaxBody: 16 << 20, MaxValues: inventory.DefaultMaxValues})
	if err != nil {
		t.Fatal(err)
	}
	e, f := newRamdiskEnv(t, RamdiskOptions{Budget: budget, QueueTimeout: 2 * time.Second})
	f.err = conductor.ErrLookupFailed
	for range 5 {
		if r := e.do(http.MethodPost, "/v1/continue_inspection", "", body); r.code != http.StatusNotFound {
			t.Fatalf("%d %s", r.code, r.body)
		}
	}
	if r := e.do(http.MethodPost, "/v1/continue_inspection", "", `{"inventory": []}`); r.code != http.StatusBadRequest {
		t.Fatalf("%d %s", r.code, r.body)
	}
	f.err = nil
	if r := e.do(http.MethodPost, "/v1/continue_inspection", "", body); r.code != http.StatusAccepted {
		t.Fatalf("after the refusals: %d %s", r.code, r.body)
	}
}
