package ironic

import (
	"fmt"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// Below 1.52 allocations answer in webob's body, as Ironic's _route (the
// collection) and pecan (a node's sub-resource, with no description).
func TestAllocations_BelowTheirVersion(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/v1/allocations", "map[code:404 description:The API version does not allow allocations title:Not Found]"},
		{"POST", "/v1/allocations", "map[code:405 description:The API version does not allow allocations title:Method Not Allowed]"},
		{"GET", "/v1/nodes/abc/allocation", "map[code:404 description: title:Not Found]"},
		{"DELETE", "/v1/nodes/abc/allocation", "map[code:404 description: title:Not Found]"},
	} {
		r := e.do(tc.method, tc.path, "1.51", map[string]any{})
		if got := fmt.Sprint(r.fault(t)); got != tc.want {
			t.Errorf("%s %s at 1.51: %d %s, want %s", tc.method, tc.path, r.code, got, tc.want)
		}
	}
}

// A node allocation's node that is not there is a 400 for GET (Ironic
// looks it up as a list's filter) and a 404 for DELETE, with or without
// /v1: tempest's GET /nodes/None/allocation.
func TestNodeAllocation_MissingNode(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/nodes/None/allocation", 400},
		{"GET", "/v1/nodes/None/allocation", 400},
		{"DELETE", "/v1/nodes/None/allocation", 404},
	} {
		if f := e.must(tc.want, tc.method, tc.path, "1.52", nil).fault(t); f["faultstring"] != "Node None could not be found." {
			t.Errorf("%s %s: %v", tc.method, tc.path, f)
		}
	}
	n := e.createNode(map[string]any{"driver": "fake-hardware"})
	if f := e.must(404, "GET", "/v1/nodes/"+str(n, "uuid")+"/allocation", "1.52", nil).fault(t); f["faultstring"] != "Allocation for node "+str(n, "uuid")+" was not found" {
		t.Errorf("node without an allocation: %v", f)
	}
}

// POST /v1/heartbeat answers as Ironic 21.4's HeartbeatController up to
// the conductor: arguments first (at every version), then the version,
// the node and the agent token.
func TestHeartbeat_AnswersAsIronic(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{"driver": "fake-hardware", "name": "hb"})
	e.updateNode(str(n, "uuid"), func(n *baremetal.Node) {
		n.DriverInternalInfo = baremetal.JSON{"agent_secret_token": "tok"}
	})
	cb := "http://192.0.2.1:9999"
	for _, tc := range []struct {
		name, path, version string
		body                any
		status              int
		fault               string
	}{
		{"no node", "/v1/heartbeat", "1.22", map[string]any{"callback_url": cb}, 400, "Missing mandatory parameter: node_ident"},
		{"no node, old version", "/v1/heartbeat", "1.21", nil, 400, "Missing mandatory parameter: node_ident"},
		{"no node, without /v1", "/heartbeat", "1.22", map[string]any{}, 400, "Missing mandatory parameter: node_ident"},
		{"unknown argument", "/v1/heartbeat", "1.22", map[string]any{"node_uuid": "x", "callback_url": cb}, 400, "Unexpected arguments: node_uuid"},
		{"node in the path and the body", "/v1/heartbeat/hb", "1.22", map[string]any{"node_ident": "hb", "callback_url": cb}, 400, "Unexpected arguments: node_ident"},
		{"no callback", "/v1/heartbeat/hb", "1.22", map[string]any{}, 400, "Missing mandatory parameter: callback_url"},
		{"old version", "/v1/heartbeat/hb", "1.21", map[string]any{"callback_url": cb}, 404, "Resource could not be found."},
		{"unknown node", "/v1/heartbeat/nope", "1.22", map[string]any{"callback_url": cb}, 404, "Node nope could not be found."},
		{"node in the body", "/v1/heartbeat", "1.22", map[string]any{"node_ident": "nope", "callback_url": cb}, 404, "Node nope could not be found."},
		{"no token", "/v1/heartbeat/hb", "1.22", map[string]any{"callback_url": cb}, 400, "Invalid or missing agent token received."},
		{"wrong token", "/v1/heartbeat/hb", "1.22", map[string]any{"callback_url": cb, "agent_token": "bad"}, 400, "Invalid or missing agent token received."},
		{"token", "/v1/heartbeat/hb", "1.22", map[string]any{"callback_url": cb, "agent_token": "tok"}, 202, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.must(tc.status, "POST", tc.path, tc.version, tc.body)
			if tc.fault != "" && r.fault(t)["faultstring"] != tc.fault {
				t.Errorf("fault %s, want %q", r.body, tc.fault)
			}
		})
	}
}
