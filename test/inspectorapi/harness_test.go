// Package inspectorapi_test drives ferro's ironic-inspector API in a real
// `ferro serve` with clients ferro did not write (openstacksdk's
// introspection proxy, gophercloud) and compares what they see with what
// Debian's ironic-inspector 11.1 answered to the same steps (fixtures in
// testdata/ironic-inspector-11.1, made by TestRecordIronicInspector111).
package inspectorapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// ironic is the bare metal API of a ferro serve, where the nodes live.
type ironic struct {
	t   *testing.T
	url string
}

// node enrols a fake-hardware node with one port per MAC and makes it
// manageable; it returns the node's UUID.
func (ir ironic) node(name string, macs ...string) string {
	ir.t.Helper()
	var n struct {
		UUID string `json:"uuid"`
	}
	ferrotest.Must(ir.t, ir.url, http.MethodPost, "/v1/nodes", map[string]any{"driver": "fake-hardware", "name": name}, &n)
	for _, mac := range macs {
		ferrotest.Must(ir.t, ir.url, http.MethodPost, "/v1/ports", map[string]any{"address": mac, "node_uuid": n.UUID}, nil)
	}
	ferrotest.Must(ir.t, ir.url, http.MethodPut, "/v1/nodes/"+n.UUID+"/states/provision", map[string]any{"target": "manage"}, nil)
	ir.wait(n.UUID, "provision_state", "manageable")
	return n.UUID
}

// get returns the node as the API shows it.
func (ir ironic) get(id string) map[string]any {
	ir.t.Helper()
	var n map[string]any
	ferrotest.Must(ir.t, ir.url, http.MethodGet, "/v1/nodes/"+id, nil, &n)
	return n
}

// wait polls the node until field has the value want.
func (ir ironic) wait(id, field string, want any) map[string]any {
	ir.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n := ir.get(id)
		if n[field] == want {
			return n
		}
		if time.Now().After(deadline) {
			ir.t.Fatalf("node %s: %s is %v, want %v", id, field, n[field], want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// history returns the events of the node's history, oldest first.
func (ir ironic) history(id string) []string {
	ir.t.Helper()
	var h struct {
		History []struct {
			Event string `json:"event"`
		} `json:"history"`
	}
	ferrotest.Must(ir.t, ir.url, http.MethodGet, "/v1/nodes/"+id+"/history", nil, &h)
	var out []string
	for _, e := range h.History {
		out = append(out, e.Event)
	}
	return out
}

// hasEvent reports whether one of events begins with prefix.
func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// inspectorCall sends one request to an inspector API and returns the
// status and the decoded answer (nil when empty).
func inspectorCall(t *testing.T, base, method, path string, body any) (int, any) {
	t.Helper()
	code, b := ferrotest.Call(t, base, method, path, body)
	var v any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s %s: %d, not JSON: %s", method, path, code, b)
		}
	}
	return code, v
}
