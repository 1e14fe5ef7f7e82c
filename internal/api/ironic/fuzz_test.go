package ironic

import (
	"bytes"
	"net/http/httptest"
	"testing"
)

// FuzzRequestBodies sends arbitrary bodies to every decoder a write request
// goes through: a bad body must be a 4xx in Ironic's error format, never a
// 5xx or a panic.
func FuzzRequestBodies(f *testing.F) {
	e := newEnv(f)
	node := e.createNode(map[string]any{"name": "fuzz-node"})
	id := str(node, "uuid")
	routes := []struct{ method, path string }{
		{"POST", "/v1/nodes"},
		{"PATCH", "/v1/nodes/" + id},
		{"POST", "/v1/ports"},
		{"POST", "/v1/portgroups"},
		{"POST", "/v1/allocations"},
		{"PUT", "/v1/nodes/" + id + "/states/provision"},
		{"PUT", "/v1/nodes/" + id + "/states/power"},
		{"PUT", "/v1/nodes/" + id + "/traits"},
		{"PUT", "/v1/nodes/" + id + "/management/boot_device"},
		{"PUT", "/v1/nodes/" + id + "/maintenance"},
	}
	for _, seed := range []string{
		`{"driver":"fake-hardware","extra":{"a":[1,2,{"b":null}]}}`,
		`[{"op":"add","path":"/extra/x","value":{"y":[1]}}]`,
		`[{"op":"remove","path":"/properties/cpus"}]`,
		`{"node_uuid":"` + id + `","address":"52:54:00:12:34:56"}`,
		`{"target":"manage"}`, `{"target":"power on"}`, `{"traits":["CUSTOM_A"]}`,
		`{"boot_device":"pxe","persistent":true}`, `{"reason":"x"}`,
		`{"a":` + "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[" + `}`, `1e999999`, `"\ud800"`,
	} {
		for i := range routes {
			f.Add(uint8(i), []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := routes[int(route)%len(routes)]
		req := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-OpenStack-Ironic-API-Version", latest)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s with %q: HTTP %d: %s", r.method, r.path, body, rec.Code, rec.Body)
		}
	})
}
