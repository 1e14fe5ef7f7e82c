package ironic

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAllocations(t *testing.T) {
	e := newEnv(t)
	gold := str(e.createNode(map[string]any{"name": "gold-1", "resource_class": "gold"}), "uuid")
	e.setState(gold, "available")
	e.must(204, "PUT", "/v1/nodes/gold-1/traits", latest, map[string]any{"traits": []any{"CUSTOM_GPU"}})

	r := e.must(http.StatusCreated, "POST", "/v1/allocations", latest, map[string]any{
		"resource_class": "gold", "traits": []any{"CUSTOM_GPU"}, "name": "alloc-1", "extra": map[string]any{"k": "v"},
	})
	a := r.json(t)
	aid := str(a, "uuid")
	if r.header.Get("Location") != "http://ferro.test:6385/v1/allocations/"+aid {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	// The answer shows the allocation as created, allocating (Ironic's
	// conductor finishes it in the background; the fake at once).
	if a["state"] != "allocating" || a["node_uuid"] != nil || a["last_error"] != nil {
		t.Errorf("allocation as created %v", a)
	}
	if a = e.must(200, "GET", "/v1/allocations/"+aid, latest, nil).json(t); a["state"] != "active" || a["node_uuid"] != gold || a["last_error"] != nil {
		t.Errorf("allocation %v", a)
	}
	want := []string{"candidate_nodes", "created_at", "extra", "last_error", "links", "name", "node_uuid", "owner", "resource_class", "state", "traits", "updated_at", "uuid"}
	if d := cmp.Diff(want, keys(a)); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	n := e.must(200, "GET", "/v1/nodes/gold-1", latest, nil).json(t)
	if n["allocation_uuid"] != aid || n["instance_uuid"] != aid {
		t.Errorf("node allocation_uuid %v instance_uuid %v", n["allocation_uuid"], n["instance_uuid"])
	}
	if got := e.must(200, "GET", "/v1/nodes/gold-1/allocation", latest, nil).json(t); got["uuid"] != aid {
		t.Errorf("node allocation %v", got)
	}

	// No match: the allocation is in error, still created.
	bad := e.must(201, "POST", "/v1/allocations", latest, map[string]any{"resource_class": "silver"}).json(t)
	bad = e.must(200, "GET", "/v1/allocations/"+str(bad, "uuid"), latest, nil).json(t)
	if bad["state"] != "error" || bad["last_error"] == nil || bad["node_uuid"] != nil {
		t.Errorf("unmatched allocation %v", bad)
	}
	e.must(409, "POST", "/v1/allocations", latest, map[string]any{"resource_class": "gold", "name": "alloc-1"})
	e.must(409, "POST", "/v1/allocations", latest, map[string]any{"resource_class": "gold", "uuid": aid})
	e.must(406, "POST", "/v1/allocations", "1.59", map[string]any{"resource_class": "gold", "owner": "p"})

	list := e.must(200, "GET", "/v1/allocations", latest, nil).json(t)["allocations"].([]any)
	if len(list) != 2 {
		t.Errorf("list %v", list)
	}
	for q, want := range map[string]int{"state=active": 1, "resource_class=silver": 1, "node=gold-1": 1} {
		if got := len(e.must(200, "GET", "/v1/allocations?"+q, latest, nil).json(t)["allocations"].([]any)); got != want {
			t.Errorf("%s: %d, want %d", q, got, want)
		}
	}
	e.must(400, "GET", "/v1/allocations?node=ghost", latest, nil)
	e.must(404, "GET", "/v1/allocations", "1.51", nil)
	if got := e.must(200, "GET", "/v1/allocations/alloc-1?fields=uuid,state", latest, nil).json(t); len(got) != 3 {
		t.Errorf("fields %v", got)
	}
	if _, ok := e.must(200, "GET", "/v1/allocations/alloc-1", "1.59", nil).json(t)["owner"]; ok {
		t.Errorf("1.59 shows owner")
	}

	p := e.must(200, "PATCH", "/v1/allocations/alloc-1", latest, []map[string]any{{"op": "replace", "path": "/name", "value": "renamed"}, {"op": "add", "path": "/extra/x", "value": 1}}).json(t)
	if p["name"] != "renamed" {
		t.Errorf("patched %v", p)
	}
	e.must(405, "PATCH", "/v1/allocations/renamed", "1.56", []map[string]any{{"op": "replace", "path": "/name", "value": "x"}})
	e.must(400, "PATCH", "/v1/allocations/renamed", latest, []map[string]any{{"op": "replace", "path": "/resource_class", "value": "x"}})

	// Deleting frees the node.
	e.must(204, "DELETE", "/v1/allocations/renamed", latest, nil)
	n = e.must(200, "GET", "/v1/nodes/gold-1", latest, nil).json(t)
	if n["allocation_uuid"] != nil || n["instance_uuid"] != nil {
		t.Errorf("node still allocated: %v %v", n["allocation_uuid"], n["instance_uuid"])
	}
	e.must(404, "GET", "/v1/nodes/gold-1/allocation", latest, nil)
	e.must(404, "GET", "/v1/allocations/renamed", latest, nil)

	// Backfill (1.58) and DELETE /v1/nodes/{node}/allocation.
	e.must(400, "POST", "/v1/allocations", "1.57", map[string]any{"node": "gold-1"})
	bf := e.must(201, "POST", "/v1/allocations", latest, map[string]any{"node": "gold-1"}).json(t)
	if bf["state"] != "active" || bf["node_uuid"] != gold || bf["resource_class"] != "gold" {
		t.Errorf("backfill %v", bf)
	}
	e.must(204, "DELETE", "/v1/nodes/gold-1/allocation", latest, nil)
	if n := e.must(200, "GET", "/v1/nodes/gold-1", latest, nil).json(t); n["allocation_uuid"] != nil {
		t.Errorf("node still allocated %v", n["allocation_uuid"])
	}
}
