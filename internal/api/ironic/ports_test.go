package ironic

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/auth"
)

func TestPorts_CreateShowListPatchDelete(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{"name": "pnode"})
	id := str(n, "uuid")
	r := e.must(http.StatusCreated, "POST", "/v1/ports", latest, map[string]any{
		"node_uuid": id, "address": "52:54:00:AB:CD:EF", "extra": map[string]any{"vlan": 3},
		"local_link_connection": map[string]any{"switch_id": "AA:BB:CC:DD:EE:FF", "port_id": "Gi0/1", "switch_info": "tor1"},
		"physical_network":      "physnet1",
	})
	p := r.json(t)
	pid := str(p, "uuid")
	if r.header.Get("Location") != "http://ferro.test:6385/v1/ports/"+pid {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	want := map[string]any{
		"address": "52:54:00:ab:cd:ef", "node_uuid": id, "pxe_enabled": true, "portgroup_uuid": nil,
		"physical_network": "physnet1", "is_smartnic": false, "internal_info": map[string]any{},
		"local_link_connection": map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Gi0/1", "switch_info": "tor1"},
	}
	for k, v := range want {
		if d := cmp.Diff(v, p[k]); d != "" {
			t.Errorf("%s (-want +got):\n%s", k, d)
		}
	}
	// Fields appear with their versions.
	old := e.must(200, "GET", "/v1/ports/"+pid, "1.18", nil).json(t)
	for _, k := range []string{"pxe_enabled", "local_link_connection", "portgroup_uuid", "physical_network", "is_smartnic"} {
		if _, ok := old[k]; ok {
			t.Errorf("1.18 shows %s", k)
		}
	}
	if _, ok := old["internal_info"]; !ok {
		t.Errorf("1.18 hides internal_info")
	}
	if _, ok := e.must(200, "GET", "/v1/ports/"+pid, "1.17", nil).json(t)["internal_info"]; ok {
		t.Errorf("1.17 shows internal_info")
	}

	e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": id, "address": "52:54:00:00:00:02", "pxe_enabled": false})
	other := e.createNode(map[string]any{"name": "other"})
	e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": str(other, "uuid"), "address": "52:54:00:00:00:03"})

	count := func(path, version string) int {
		t.Helper()
		return len(e.must(200, "GET", path, version, nil).json(t)["ports"].([]any))
	}
	for path, want := range map[string]int{
		"/v1/ports":                           3,
		"/v1/ports/detail":                    3,
		"/v1/ports?node=pnode":                2,
		"/v1/ports?node_uuid=" + id:           2,
		"/v1/ports/detail?node=" + id:         2,
		"/v1/ports?address=52:54:00:AB:CD:EF": 1,
		"/v1/ports?address=52:54:00:99:99:99": 0,
		"/v1/nodes/pnode/ports":               2,
		"/v1/nodes/" + id + "/ports/detail":   2,
		"/v1/nodes/other/ports?fields=uuid":   1,
		"/v1/ports?detail=true&node=other":    1,
	} {
		if got := count(path, latest); got != want {
			t.Errorf("%s: %d ports, want %d", path, got, want)
		}
	}
	list := e.must(200, "GET", "/v1/ports", latest, nil).json(t)["ports"].([]any)
	if d := cmp.Diff([]string{"address", "links", "uuid"}, keys(list[0].(map[string]any))); d != "" {
		t.Errorf("default port fields (-want +got):\n%s", d)
	}
	detail := e.must(200, "GET", "/v1/ports/detail?node="+id, latest, nil).json(t)["ports"].([]any)
	if _, ok := detail[0].(map[string]any)["local_link_connection"]; !ok {
		t.Errorf("detail lacks fields: %v", detail[0])
	}
	e.must(400, "GET", "/v1/ports?address=nope", latest, nil)
	e.must(404, "GET", "/v1/ports?node=ghost", latest, nil)
	e.must(406, "GET", "/v1/ports?fields=pxe_enabled", "1.18", nil)
	e.must(406, "GET", "/v1/ports?node=pnode", "1.4", nil)
	e.must(400, "GET", "/v1/ports?sort_key=extra", latest, nil)

	// PATCH.
	pp := e.must(200, "PATCH", "/v1/ports/"+pid, latest, []map[string]any{
		{"op": "replace", "path": "/address", "value": "52:54:00:00:00:AA"},
		{"op": "add", "path": "/extra/rack", "value": "r1"},
		{"op": "replace", "path": "/pxe_enabled", "value": false},
		{"op": "remove", "path": "/local_link_connection/switch_info"},
	}).json(t)
	if pp["address"] != "52:54:00:00:00:aa" || pp["pxe_enabled"] != false || pp["extra"].(map[string]any)["rack"] != "r1" {
		t.Errorf("patched port %v", pp)
	}
	if _, ok := pp["local_link_connection"].(map[string]any)["switch_info"]; ok {
		t.Errorf("switch_info not removed")
	}
	before := e.snapshot()
	for _, tc := range []struct {
		patch  []map[string]any
		status int
		fault  string
	}{
		{[]map[string]any{{"op": "replace", "path": "/address", "value": "52:54:00:00:00:03"}}, 409, "A port with MAC address 52:54:00:00:00:03 already exists."},
		{[]map[string]any{{"op": "replace", "path": "/address", "value": "bad"}}, 400, "Expected a MAC address"},
		{[]map[string]any{{"op": "remove", "path": "/address"}}, 400, "'/address' is a mandatory attribute and can not be removed"},
		{[]map[string]any{{"op": "replace", "path": "/uuid", "value": id}}, 400, "'/uuid' is an internal attribute"},
		{[]map[string]any{{"op": "add", "path": "/colour", "value": "red"}}, 400, "Adding a new attribute (/colour) to the root of the resource is not allowed"},
		{[]map[string]any{{"op": "replace", "path": "/node_uuid", "value": "2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f"}}, 400, "Unable to apply the requested node_uuid '2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f'. Requested value was invalid."},
	} {
		r := e.do("PATCH", "/v1/ports/"+pid, latest, tc.patch)
		if r.code != tc.status || !strings.Contains(r.fault(t)["faultstring"].(string), tc.fault) {
			t.Errorf("%v: %d %s, want %d %q", tc.patch, r.code, r.body, tc.status, tc.fault)
		}
	}
	e.must(406, "PATCH", "/v1/ports/"+pid, "1.33", []map[string]any{{"op": "replace", "path": "/physical_network", "value": "x"}})
	e.lockNode(id)
	e.must(409, "PATCH", "/v1/ports/"+pid, latest, []map[string]any{{"op": "add", "path": "/extra/x", "value": 1}})
	e.must(409, "DELETE", "/v1/ports/"+pid, latest, nil)
	e.unlockNode(id)
	if d := cmp.Diff(before, e.snapshot()); d != "" {
		t.Errorf("rejected patches changed the store:\n%s", d)
	}

	// Moving a port to another node.
	moved := e.must(200, "PATCH", "/v1/ports/"+pid, latest, []map[string]any{{"op": "replace", "path": "/node_uuid", "value": str(other, "uuid")}}).json(t)
	if moved["node_uuid"] != str(other, "uuid") {
		t.Errorf("port not moved: %v", moved["node_uuid"])
	}

	e.must(204, "DELETE", "/v1/ports/"+pid, latest, nil)
	e.must(404, "GET", "/v1/ports/"+pid, latest, nil)
	e.must(404, "DELETE", "/v1/ports/"+pid, latest, nil)
	e.must(400, "GET", "/v1/ports/not-a-uuid", latest, nil)
}

func TestPorts_SmartNICAndPortgroupMembership(t *testing.T) {
	e := newEnv(t)
	a := str(e.createNode(map[string]any{"name": "a"}), "uuid")
	b := str(e.createNode(map[string]any{"name": "b"}), "uuid")
	e.must(400, "POST", "/v1/ports", latest, map[string]any{"node_uuid": a, "address": "52:54:00:00:00:01", "is_smartnic": true, "local_link_connection": map[string]any{"port_id": "p", "switch_id": "aa:bb:cc:dd:ee:ff"}})
	e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": a, "address": "52:54:00:00:00:01", "is_smartnic": true, "local_link_connection": map[string]any{"port_id": "p", "hostname": "h"}})

	pg := e.must(201, "POST", "/v1/portgroups", latest, map[string]any{"node_uuid": a, "name": "bond0", "standalone_ports_supported": false}).json(t)
	pgid := str(pg, "uuid")
	// A port joins a portgroup of its own node only.
	r := e.must(400, "POST", "/v1/ports", latest, map[string]any{"node_uuid": b, "address": "52:54:00:00:00:02", "portgroup_uuid": pgid})
	if fs := r.fault(t)["faultstring"]; fs != "Port can not be added to a portgroup belonging to a different node." {
		t.Errorf("fault %v", fs)
	}
	e.must(409, "POST", "/v1/ports", latest, map[string]any{"node_uuid": a, "address": "52:54:00:00:00:02", "portgroup_uuid": pgid, "pxe_enabled": true})
	p := e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": a, "address": "52:54:00:00:00:02", "portgroup_uuid": pgid}).json(t)
	if p["portgroup_uuid"] != pgid {
		t.Errorf("portgroup_uuid %v", p["portgroup_uuid"])
	}
	members := e.must(200, "GET", "/v1/portgroups/bond0/ports", latest, nil).json(t)["ports"].([]any)
	if len(members) != 1 || str(members[0].(map[string]any), "uuid") != str(p, "uuid") {
		t.Errorf("portgroup ports %v", members)
	}
	if n := len(e.must(200, "GET", "/v1/ports?portgroup=bond0", latest, nil).json(t)["ports"].([]any)); n != 1 {
		t.Errorf("portgroup filter: %d", n)
	}
	e.must(406, "GET", "/v1/ports?portgroup=bond0", "1.23", nil)
	e.must(403, "GET", "/v1/ports?portgroup=bond0&node=a", latest, nil)
	// A portgroup with ports cannot go.
	e.must(400, "DELETE", "/v1/portgroups/bond0", latest, nil)
	e.must(204, "DELETE", "/v1/ports/"+str(p, "uuid"), latest, nil)
	e.must(204, "DELETE", "/v1/portgroups/bond0", latest, nil)
}

func TestPortgroups(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "gnode"}), "uuid")
	r := e.must(201, "POST", "/v1/portgroups", latest, map[string]any{
		"node_uuid": id, "name": "bond0", "address": "52:54:00:00:AA:01",
		"mode": "802.3ad", "properties": map[string]any{"miimon": 100}, "extra": map[string]any{"a": "b"},
	})
	pg := r.json(t)
	pgid := str(pg, "uuid")
	if r.header.Get("Location") != "http://ferro.test:6385/v1/portgroups/"+pgid {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	for k, v := range map[string]any{"name": "bond0", "address": "52:54:00:00:aa:01", "mode": "802.3ad", "standalone_ports_supported": true, "node_uuid": id} {
		if pg[k] != v {
			t.Errorf("%s = %v, want %v", k, pg[k], v)
		}
	}
	if _, ok := pg["ports"]; !ok {
		t.Errorf("no ports link")
	}
	def := e.must(201, "POST", "/v1/portgroups", latest, map[string]any{"node_uuid": id}).json(t)
	if def["mode"] != "active-backup" || def["name"] != nil || def["address"] != nil {
		t.Errorf("defaults %v", def)
	}
	// Setting or selecting mode and properties needs 1.26; Ironic 21.4
	// shows them at every version all the same (checked against it).
	old := e.must(200, "GET", "/v1/portgroups/bond0", "1.25", nil).json(t)
	if old["mode"] == nil || old["properties"] == nil {
		t.Errorf("1.25 view: mode %v, properties %v; Ironic shows both", old["mode"], old["properties"])
	}
	e.must(406, "GET", "/v1/portgroups/bond0?fields=mode", "1.25", nil)
	e.must(406, "POST", "/v1/portgroups", "1.25", map[string]any{"node_uuid": id, "mode": "balance-rr"})
	e.must(404, "GET", "/v1/portgroups", "1.22", nil)
	e.must(404, "GET", "/v1/nodes/gnode/portgroups", "1.23", nil)

	list := e.must(200, "GET", "/v1/portgroups", latest, nil).json(t)["portgroups"].([]any)
	if len(list) != 2 {
		t.Fatalf("%d portgroups", len(list))
	}
	if d := cmp.Diff([]string{"address", "links", "name", "uuid"}, keys(list[0].(map[string]any))); d != "" {
		t.Errorf("default fields (-want +got):\n%s", d)
	}
	for _, path := range []string{"/v1/portgroups/detail", "/v1/nodes/gnode/portgroups", "/v1/nodes/" + id + "/portgroups/detail", "/v1/portgroups?node=gnode"} {
		if n := len(e.must(200, "GET", path, latest, nil).json(t)["portgroups"].([]any)); n != 2 {
			t.Errorf("%s: %d", path, n)
		}
	}
	if n := len(e.must(200, "GET", "/v1/portgroups?address=52:54:00:00:aa:01", latest, nil).json(t)["portgroups"].([]any)); n != 1 {
		t.Errorf("address filter %d", n)
	}

	up := e.must(200, "PATCH", "/v1/portgroups/bond0", latest, []map[string]any{
		{"op": "replace", "path": "/name", "value": "bond1"},
		{"op": "add", "path": "/properties/xmit_hash_policy", "value": "layer3+4"},
	}).json(t)
	if up["name"] != "bond1" || up["properties"].(map[string]any)["xmit_hash_policy"] != "layer3+4" {
		t.Errorf("patched %v", up)
	}
	e.must(409, "PATCH", "/v1/portgroups/"+str(def, "uuid"), latest, []map[string]any{{"op": "add", "path": "/name", "value": "bond1"}})
	e.must(400, "PATCH", "/v1/portgroups/bond1", latest, []map[string]any{{"op": "replace", "path": "/internal_info", "value": map[string]any{}}})
	e.must(400, "PATCH", "/v1/portgroups/bond1", latest, []map[string]any{{"op": "remove", "path": "/node_uuid"}})
	e.must(204, "DELETE", "/v1/portgroups/bond1", latest, nil)
	e.must(404, "GET", "/v1/portgroups/bond1", latest, nil)
	names := []string{}
	for _, pg := range e.must(200, "GET", "/v1/portgroups", latest, nil).json(t)["portgroups"].([]any) {
		names = append(names, str(pg.(map[string]any), "uuid"))
	}
	if !slices.Equal(names, []string{str(def, "uuid")}) {
		t.Errorf("left: %v", names)
	}
}

// The ports of a portgroup share one physical network, as Ironic's
// validate_port_physnet enforces: joining with another one, or changing
// it inside the portgroup, is a 409 with nothing changed.
func TestPorts_PortgroupPhysicalNetworkConsistency(t *testing.T) {
	e := newEnv(t)
	a := str(e.createNode(map[string]any{"name": "a"}), "uuid")
	pgid := str(e.must(201, "POST", "/v1/portgroups", latest, map[string]any{"node_uuid": a, "name": "bond0"}).json(t), "uuid")
	first := e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": a, "address": "52:54:00:00:01:01", "portgroup_uuid": pgid, "physical_network": "physnet1"}).json(t)
	e.must(409, "POST", "/v1/ports", latest, map[string]any{"node_uuid": a, "address": "52:54:00:00:01:02", "portgroup_uuid": pgid, "physical_network": "physnet2"})
	e.must(409, "POST", "/v1/ports", latest, map[string]any{"node_uuid": a, "address": "52:54:00:00:01:02", "portgroup_uuid": pgid})
	second := e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": a, "address": "52:54:00:00:01:02", "portgroup_uuid": pgid, "physical_network": "physnet1"}).json(t)
	e.must(409, "PATCH", "/v1/ports/"+str(second, "uuid"), latest, []map[string]any{{"op": "replace", "path": "/physical_network", "value": "physnet2"}})
	outside := e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": a, "address": "52:54:00:00:01:03", "physical_network": "physnet2"}).json(t)
	e.must(409, "PATCH", "/v1/ports/"+str(outside, "uuid"), latest, []map[string]any{{"op": "add", "path": "/portgroup_uuid", "value": pgid}})
	if got := e.must(200, "GET", "/v1/ports/"+str(outside, "uuid"), latest, nil).json(t); got["portgroup_uuid"] != nil {
		t.Errorf("refused join left portgroup_uuid %v", got["portgroup_uuid"])
	}
	// Alone in the portgroup, a port may change its physical network.
	e.must(204, "DELETE", "/v1/ports/"+str(second, "uuid"), latest, nil)
	e.must(200, "PATCH", "/v1/ports/"+str(first, "uuid"), latest, []map[string]any{{"op": "replace", "path": "/physical_network", "value": "physnet2"}})
}

// TestPorts_ProjectScopedList: a project reader (no list_all) lists the
// ports of its project's nodes only, the page cut after the narrowing, and
// the next link continues from the last of its own.
func TestPorts_ProjectScopedList(t *testing.T) {
	e := newEnv(t)
	mine := str(e.createNode(map[string]any{"name": "mine", "owner": "p1"}), "uuid")
	theirs := str(e.createNode(map[string]any{"name": "theirs", "owner": "p2"}), "uuid")
	var want []string
	for i := range 6 {
		node := theirs
		if i%2 == 1 {
			node = mine
		}
		p := e.must(http.StatusCreated, "POST", "/v1/ports", latest, map[string]any{
			"node_uuid": node, "address": "52:54:00:00:01:0" + string(rune('0'+i)),
		}).json(t)
		if node == mine {
			want = append(want, str(p, "uuid"))
		}
	}
	asCode := func(want int, path string) resp {
		t.Helper()
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("X-OpenStack-Ironic-API-Version", latest)
		req = req.WithContext(auth.NewContext(req.Context(), &auth.Credentials{ProjectID: "p1", Roles: []string{"reader"}}))
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Fatalf("GET %s as p1: status %d, want %d; body %s", path, rec.Code, want, rec.Body.Bytes())
		}
		return resp{code: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	}
	as := func(path string) resp { t.Helper(); return asCode(http.StatusOK, path) }
	uuids := func(r resp) []string {
		var ids []string
		for _, p := range r.json(t)["ports"].([]any) {
			ids = append(ids, p.(map[string]any)["uuid"].(string))
		}
		return ids
	}
	if d := cmp.Diff(want, uuids(as("/v1/ports"))); d != "" {
		t.Errorf("p1's ports (-want +got):\n%s", d)
	}
	page := as("/v1/ports?limit=2")
	if d := cmp.Diff(want[:2], uuids(page)); d != "" {
		t.Errorf("p1's first page (-want +got):\n%s", d)
	}
	next, _ := page.json(t)["next"].(string)
	if !strings.Contains(next, "marker="+want[1]) || !strings.Contains(next, "limit=2") {
		t.Errorf("next %q, want marker=%s and limit=2", next, want[1])
	}
	if d := cmp.Diff(want[2:], uuids(as("/v1/ports?limit=2&marker="+want[1]))); d != "" {
		t.Errorf("p1's second page (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, uuids(as("/v1/nodes/mine/ports"))); d != "" {
		t.Errorf("p1's node's ports (-want +got):\n%s", d)
	}
	// Another project's node does not exist for p1.
	asCode(http.StatusNotFound, "/v1/nodes/theirs/ports")
}
