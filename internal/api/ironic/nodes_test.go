package ironic

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
)

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestCreateNode_Defaults(t *testing.T) {
	e := newEnv(t)
	r := e.must(http.StatusCreated, "POST", "/v1/nodes", latest, map[string]any{
		"driver": "fake-hardware", "name": "node-0",
		"properties": map[string]any{"cpus": 4, "memory_mb": 8192.5, "local_gb": "10"},
	})
	n := r.json(t)
	if loc := r.header.Get("Location"); loc != "http://ferro.test:6385/v1/nodes/"+str(n, "uuid") {
		t.Errorf("Location %q", loc)
	}
	if !isUUIDLike(str(n, "uuid")) {
		t.Errorf("uuid %v", n["uuid"])
	}
	checks := map[string]any{
		"name": "node-0", "driver": "fake-hardware", "provision_state": "enroll",
		"power_state": nil, "resource_class": "baremetal", "conductor_group": "",
		"maintenance": false, "boot_interface": "fake", "power_interface": "fake",
		"management_interface": "fake", "network_interface": "noop", "inspect_interface": "fake",
		"deploy_interface": "fake", "raid_interface": "fake", "vendor_interface": "fake",
		"allocation_uuid": nil, "instance_uuid": nil, "description": nil, "traits": []any{},
		"extra": map[string]any{}, "driver_internal_info": map[string]any{}, "chassis_uuid": nil,
		"retired": false, "protected": false, "automated_clean": nil, "shard": nil,
	}
	for k, want := range checks {
		if d := cmp.Diff(want, n[k]); d != "" {
			t.Errorf("%s (-want +got):\n%s", k, d)
		}
	}
	// JSON keeps the types the client sent.
	props := n["properties"].(map[string]any)
	if props["cpus"] != json.Number("4") || props["memory_mb"] != json.Number("8192.5") || props["local_gb"] != "10" {
		t.Errorf("properties changed types: %#v", props)
	}
	for _, k := range []string{"firmware_interface", "parent_node"} {
		if _, ok := n[k]; ok {
			t.Errorf("%s is above 1.82 but shown", k)
		}
	}
	for _, k := range []string{"links", "ports", "states", "portgroups", "volume"} {
		links, _ := n[k].([]any)
		if len(links) != 2 {
			t.Errorf("%s links: %v", k, n[k])
		}
	}
	self := n["links"].([]any)[0].(map[string]any)
	if self["href"] != "http://ferro.test:6385/v1/nodes/"+str(n, "uuid") || self["rel"] != "self" {
		t.Errorf("self link %v", self)
	}
}

func TestCreateNode_OldVersionsStartAvailableAndHideFields(t *testing.T) {
	e := newEnv(t)
	n := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.10", map[string]any{"driver": "fake-hardware"}).json(t)
	if n["provision_state"] != "available" {
		t.Errorf("1.10 provision_state %v, want available", n["provision_state"])
	}
	for _, k := range []string{"resource_class", "network_interface", "boot_interface", "traits", "conductor_group", "owner", "description", "allocation_uuid", "conductor", "shard", "lessee"} {
		if _, ok := n[k]; ok {
			t.Errorf("1.10 shows %s", k)
		}
	}
	if _, ok := n["name"]; !ok {
		t.Errorf("1.10 hides name")
	}
	old := e.must(http.StatusOK, "GET", "/v1/nodes/"+str(n, "uuid"), "1.1", nil).json(t)
	if old["provision_state"] != nil {
		t.Errorf("1.1 shows available as %v, want null (NOSTATE)", old["provision_state"])
	}
	for _, k := range []string{"name", "driver_internal_info", "inspection_started_at", "clean_step"} {
		if _, ok := old[k]; ok {
			t.Errorf("1.1 shows %s", k)
		}
	}
	if _, ok := old["states"]; ok {
		t.Errorf("1.1 shows the states link (1.14)")
	}
}

func TestCreateNode_NewerFieldIsNotAcceptable(t *testing.T) {
	e := newEnv(t)
	before := e.snapshot()
	for _, tc := range []struct {
		version string
		body    map[string]any
	}{
		{"1.20", map[string]any{"resource_class": "gold"}},
		{"1.30", map[string]any{"boot_interface": "pxe"}},
		{"1.45", map[string]any{"conductor_group": "rack1"}},
		{"1.4", map[string]any{"name": "early"}},
		{"1.81", map[string]any{"shard": "s1"}},
	} {
		tc.body["driver"] = "fake-hardware"
		r := e.do("POST", "/v1/nodes", tc.version, tc.body)
		if r.code != http.StatusNotAcceptable {
			t.Errorf("%s %v: status %d, want 406: %s", tc.version, tc.body, r.code, r.body)
		}
	}
	// Empty values of newer fields are fine.
	e.must(http.StatusCreated, "POST", "/v1/nodes", "1.45", map[string]any{"driver": "fake-hardware", "conductor_group": "", "name": nil})
	if before == e.snapshot() {
		t.Fatal("the allowed create changed nothing")
	}
}

func TestGetNode_ByNameAndFields(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{"name": "by-name"})
	got := e.must(200, "GET", "/v1/nodes/by-name", latest, nil).json(t)
	if got["uuid"] != n["uuid"] {
		t.Errorf("by name: %v", got["uuid"])
	}
	// Names need 1.5.
	e.must(404, "GET", "/v1/nodes/by-name", "1.4", nil)
	// Invalid identifiers are 400.
	e.must(400, "GET", "/v1/nodes/bad%20name", latest, nil)

	f := e.must(200, "GET", "/v1/nodes/by-name?fields=uuid,name,driver_info", latest, nil).json(t)
	if d := cmp.Diff([]string{"driver_info", "links", "name", "uuid"}, keys(f)); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	e.must(406, "GET", "/v1/nodes/by-name?fields=uuid", "1.7", nil)
	e.must(406, "GET", "/v1/nodes/by-name?fields=shard", "1.81", nil)
	r := e.must(400, "GET", "/v1/nodes/by-name?fields=uuid,nonsense", latest, nil)
	if fs := r.fault(t)["faultstring"]; fs != "Field nonsense is not a valid field." {
		t.Errorf("fault %v", fs)
	}
	e.must(400, "GET", "/v1/nodes/by-name?bogus=1", latest, nil)
}

func TestNodeView_InspectWaitBelow139(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{})
	e.setState(str(n, "uuid"), "inspect wait")
	for v, want := range map[string]string{"1.38": "inspecting", "1.39": "inspect wait"} {
		got := e.must(200, "GET", "/v1/nodes/"+str(n, "uuid"), v, nil).json(t)
		if got["provision_state"] != want {
			t.Errorf("%s: %v, want %s", v, got["provision_state"], want)
		}
		st := e.must(200, "GET", "/v1/nodes/"+str(n, "uuid")+"/states", v, nil).json(t)
		if st["provision_state"] != want {
			t.Errorf("%s states: %v, want %s", v, st["provision_state"], want)
		}
	}
}

func TestNodeView_SecretsMasked(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{
		"driver_info": map[string]any{
			"ipmi_address": "10.0.0.1", "ipmi_password": "p1", "redfish_password": "p2",
			"snmp_auth_key": "k1", "snmp_priv_key": "k2", "some_token": "t", "ipmi_port": 623,
			// ferro is stricter than Ironic for these two.
			"snmp_community": "c0mmunity", "ipmi_kg_key": "kgk3y",
			"nested":  map[string]any{"password": "p3", "user": "admin"},
			"cmdline": "console=ttyS0 password=p4 other=1",
		},
		"instance_info": map[string]any{"image_url": "http://x/y?sig=z", "configdrive": "H4sI", "image_source": "img", "root_password": "p5"},
	})
	raw, _ := json.Marshal(n)
	for _, secret := range []string{"p1", "p2", "k1", "k2", `"t"`, "p3", "p4", "p5", "sig=z", "H4sI", "c0mmunity", "kgk3y"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("secret %s visible in %s", secret, raw)
		}
	}
	di := n["driver_info"].(map[string]any)
	want := map[string]any{
		"ipmi_address": "10.0.0.1", "ipmi_password": "******", "redfish_password": "******",
		"snmp_auth_key": "******", "snmp_priv_key": "******", "some_token": "******",
		"snmp_community": "******", "ipmi_kg_key": "******",
		"ipmi_port": json.Number("623"), "nested": map[string]any{"password": "******", "user": "admin"},
		"cmdline": "console=ttyS0 password=****** other=1",
	}
	if d := cmp.Diff(want, di); d != "" {
		t.Errorf("driver_info (-want +got):\n%s", d)
	}
	ii := n["instance_info"].(map[string]any)
	if ii["image_url"] != "******" || ii["configdrive"] != "******" || ii["image_source"] != "img" {
		t.Errorf("instance_info %v", ii)
	}
	// The store keeps the real values.
	stored, err := e.store.GetNode(t.Context(), str(n, "uuid"))
	if err != nil {
		t.Fatal(err)
	}
	if stored.DriverInfo["ipmi_password"] != "p1" {
		t.Errorf("stored password %v", stored.DriverInfo["ipmi_password"])
	}
}

func TestListNodes_DefaultFieldsDetailAndFields(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		e.createNode(map[string]any{"name": fmt.Sprintf("n%d", i)})
	}
	list := e.must(200, "GET", "/v1/nodes", latest, nil).json(t)["nodes"].([]any)
	if len(list) != 3 {
		t.Fatalf("%d nodes", len(list))
	}
	want := []string{"instance_uuid", "links", "maintenance", "name", "power_state", "provision_state", "uuid"}
	if d := cmp.Diff(want, keys(list[0].(map[string]any))); d != "" {
		t.Errorf("default fields (-want +got):\n%s", d)
	}
	// Without a name field before 1.5.
	old := e.must(200, "GET", "/v1/nodes", "1.1", nil).json(t)["nodes"].([]any)
	if _, ok := old[0].(map[string]any)["name"]; ok {
		t.Errorf("1.1 list shows name")
	}
	for _, path := range []string{"/v1/nodes/detail", "/v1/nodes?detail=true"} {
		d := e.must(200, "GET", path, latest, nil).json(t)["nodes"].([]any)
		if _, ok := d[0].(map[string]any)["driver_info"]; !ok || len(d) != 3 {
			t.Errorf("%s is not detailed", path)
		}
	}
	e.must(400, "GET", "/v1/nodes?detail=true", "1.42", nil)
	e.must(400, "GET", "/v1/nodes?detail=true&fields=uuid", latest, nil)
	e.must(400, "GET", "/v1/nodes/detail?fields=uuid", latest, nil)
	f := e.must(200, "GET", "/v1/nodes?fields=uuid,properties", latest, nil).json(t)["nodes"].([]any)
	if d := cmp.Diff([]string{"links", "properties", "uuid"}, keys(f[0].(map[string]any))); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
}

func TestListNodes_PagingFollowsNextLinks(t *testing.T) {
	e := newEnv(t)
	var all []string
	for i := range 7 {
		all = append(all, str(e.createNode(map[string]any{"name": fmt.Sprintf("p%d", i)}), "uuid"))
	}
	var seen []string
	path := "/v1/nodes?limit=3"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		m := e.must(200, "GET", path, latest, nil).json(t)
		for _, n := range m["nodes"].([]any) {
			seen = append(seen, str(n.(map[string]any), "uuid"))
		}
		next, _ := m["next"].(string)
		path = strings.TrimPrefix(next, "http://ferro.test:6385")
		if next != "" && !strings.Contains(next, "limit=3") {
			t.Errorf("next %q", next)
		}
	}
	if d := cmp.Diff(all, seen); d != "" {
		t.Errorf("paged nodes (-created +seen):\n%s", d)
	}
	// max_limit caps the page.
	e.opts.MaxLimit = 2
	e2 := New(e.opts)
	e.h = e2
	m := e.must(200, "GET", "/v1/nodes?limit=100", latest, nil).json(t)
	if len(m["nodes"].([]any)) != 2 || !strings.Contains(m["next"].(string), "limit=2") {
		t.Errorf("max_limit: %v", m)
	}
	e.must(400, "GET", "/v1/nodes?limit=0", latest, nil)
	e.must(400, "GET", "/v1/nodes?limit=x", latest, nil)
	e.must(400, "GET", "/v1/nodes?sort_dir=up", latest, nil)
	e.must(400, "GET", "/v1/nodes?sort_key=properties", latest, nil)
	e.must(400, "GET", "/v1/nodes?marker=not-a-uuid", latest, nil)
	e.must(404, "GET", "/v1/nodes?marker=2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f", latest, nil)
}

// A list longer than streamChunk goes out in pieces as it renders; over
// real HTTP it must arrive whole, with its next link, and a short
// response keeps its Content-Length.
func TestListNodes_LongListIsStreamedWhole(t *testing.T) {
	e := newEnv(t)
	var all []string
	for i := range 25 {
		all = append(all, str(e.createNode(map[string]any{
			"name":       fmt.Sprintf("s%d", i),
			"properties": map[string]any{"cpus": 4, "notes": strings.Repeat("x", 1000)},
		}), "uuid"))
	}
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	get := func(path string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("X-OpenStack-Ironic-API-Version", latest)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %s %q", path, res.Status, res.Header.Get("Content-Type"))
		}
		return res, body
	}

	res, body := get("/v1/nodes/detail?limit=20")
	if len(body) < 2*streamChunk {
		t.Fatalf("body is %d bytes, too short to be sent in pieces", len(body))
	}
	if res.ContentLength != -1 {
		t.Errorf("long list has Content-Length %d, want it streamed", res.ContentLength)
	}
	m := resp{code: res.StatusCode, body: body}.json(t)
	var got []string
	for _, n := range m["nodes"].([]any) {
		got = append(got, str(n.(map[string]any), "uuid"))
	}
	if d := cmp.Diff(all[:20], got); d != "" {
		t.Errorf("streamed nodes (-want +got):\n%s", d)
	}
	if next, _ := m["next"].(string); !strings.Contains(next, "limit=20") || !strings.Contains(next, "marker="+all[19]) {
		t.Errorf("next %q", m["next"])
	}

	res, body = get("/v1/nodes?limit=1")
	if res.ContentLength != int64(len(body)) {
		t.Errorf("short list Content-Length %d, body %d bytes", res.ContentLength, len(body))
	}
}

func TestListNodes_SortDescending(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"b", "a", "c"} {
		e.createNode(map[string]any{"name": name})
	}
	m := e.must(200, "GET", "/v1/nodes?sort_key=name&sort_dir=desc", latest, nil).json(t)
	var names []string
	for _, n := range m["nodes"].([]any) {
		names = append(names, str(n.(map[string]any), "name"))
	}
	if d := cmp.Diff([]string{"c", "b", "a"}, names); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
}

func TestListNodes_Filters(t *testing.T) {
	e := newEnv(t)
	a := e.createNode(map[string]any{"name": "a", "resource_class": "gold", "owner": "p1", "conductor_group": "Rack1", "description": "first rack"})
	b := e.createNode(map[string]any{"name": "b", "driver": "ipmi", "lessee": "p1", "shard": "s1"})
	c := e.createNode(map[string]any{"name": "c", "maintenance": true})
	e.setState(str(c, "uuid"), "manageable")
	e.updateNode(str(b, "uuid"), func(n *baremetal.Node) {
		n.Fault = "power failure"
		n.InstanceUUID = "0b5c6c0e-8e2e-4d1e-9b7a-0c1d2e3f4a5b"
	})
	names := func(q string) []string {
		t.Helper()
		m := e.must(200, "GET", "/v1/nodes?"+q, latest, nil).json(t)
		var out []string
		for _, n := range m["nodes"].([]any) {
			out = append(out, str(n.(map[string]any), "name"))
		}
		slices.Sort(out)
		return out
	}
	tests := map[string][]string{
		"provision_state=manageable": {"c"},
		"provision_state=enroll":     {"a", "b"},
		"driver=ipmi":                {"b"},
		"maintenance=true":           {"c"},
		"maintenance=False":          {"a", "b"},
		"associated=true":            {"b"},
		"resource_class=gold":        {"a"},
		"conductor_group=rack1":      {"a"},
		"fault=power failure":        {"b"},
		"owner=p1":                   {"a"},
		"lessee=p1":                  {"b"},
		"project=p1":                 {"a", "b"},
		"shard=s1":                   {"b"},
		"sharded=false":              {"a", "c"},
		"description_contains=rack":  {"a"},
		"instance_uuid=0b5c6c0e-8e2e-4d1e-9b7a-0c1d2e3f4a5b": {"b"},
	}
	for q, want := range tests {
		if d := cmp.Diff(want, names(strings.ReplaceAll(q, " ", "%20"))); d != "" {
			t.Errorf("%s (-want +got):\n%s", q, d)
		}
	}
	_ = a
	e.must(400, "GET", "/v1/nodes?provision_state=bogus", latest, nil)
	e.must(400, "GET", "/v1/nodes?fault=bogus", latest, nil)
	e.must(400, "GET", "/v1/nodes?maintenance=maybe", latest, nil)
	for q, v := range map[string]string{
		"provision_state=enroll": "1.8", "driver=ipmi": "1.15", "resource_class=x": "1.20",
		"fault=power%20failure": "1.41", "conductor_group=x": "1.45", "owner=x": "1.49",
		"lessee=x": "1.64", "shard=x": "1.81",
	} {
		e.must(406, "GET", "/v1/nodes?"+q, v, nil)
	}
}

func TestPatchNode(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{"name": "patchme", "driver_info": map[string]any{"ipmi_address": "1.2.3.4"}})
	id := str(n, "uuid")
	r := e.must(200, "PATCH", "/v1/nodes/"+id, latest, []map[string]any{
		{"op": "add", "path": "/properties/cpus", "value": 8},
		{"op": "replace", "path": "/name", "value": "renamed"},
		{"op": "add", "path": "/extra/note", "value": map[string]any{"a": []any{1, "x"}}},
		{"op": "replace", "path": "/driver_info/ipmi_address", "value": "5.6.7.8"},
		{"op": "replace", "path": "/boot_interface", "value": "pxe"},
		{"op": "replace", "path": "/maintenance", "value": "true"},
		{"op": "add", "path": "/description", "value": "a node"},
	}).json(t)
	if r["name"] != "renamed" || r["properties"].(map[string]any)["cpus"] != json.Number("8") ||
		r["boot_interface"] != "pxe" || r["maintenance"] != true || r["description"] != "a node" {
		t.Errorf("patched node %v", r)
	}
	if d := cmp.Diff(map[string]any{"note": map[string]any{"a": []any{json.Number("1"), "x"}}}, r["extra"]); d != "" {
		t.Errorf("extra (-want +got):\n%s", d)
	}
	if r["updated_at"] == nil {
		t.Errorf("updated_at not set")
	}
	// remove works on existing paths, resets interfaces to the default.
	r = e.must(200, "PATCH", "/v1/nodes/renamed", latest, []map[string]any{
		{"op": "remove", "path": "/properties/cpus"},
		{"op": "remove", "path": "/boot_interface"},
		{"op": "remove", "path": "/description"},
	}).json(t)
	if _, ok := r["properties"].(map[string]any)["cpus"]; ok || r["boot_interface"] != "fake" || r["description"] != nil {
		t.Errorf("after remove %v", r)
	}
	// Changing the driver to one that does not support the node's
	// interfaces needs reset_interfaces, as in Ironic (whose
	// check_and_update_node_interfaces answers IncompatibleInterface).
	e.must(400, "PATCH", "/v1/nodes/"+id, latest, []map[string]any{{"op": "replace", "path": "/driver", "value": "ipmi"}})
	r = e.must(200, "PATCH", "/v1/nodes/"+id+"?reset_interfaces=true", latest, []map[string]any{{"op": "replace", "path": "/driver", "value": "ipmi"}}).json(t)
	if r["driver"] != "ipmi" || r["power_interface"] != "ipmitool" || r["boot_interface"] != "ipxe" {
		t.Errorf("driver change: power %v boot %v", r["power_interface"], r["boot_interface"])
	}
	r = e.must(200, "PATCH", "/v1/nodes/"+id+"?reset_interfaces=true", latest, []map[string]any{{"op": "replace", "path": "/driver", "value": "fake-hardware"}}).json(t)
	if r["power_interface"] != "fake" || r["network_interface"] != "noop" {
		t.Errorf("reset interfaces: %v %v", r["power_interface"], r["network_interface"])
	}
	// Clearing maintenance clears its reason.
	e.updateNode(id, func(n *baremetal.Node) { n.MaintenanceReason = "why" })
	r = e.must(200, "PATCH", "/v1/nodes/"+id, latest, []map[string]any{{"op": "replace", "path": "/maintenance", "value": false}}).json(t)
	if r["maintenance_reason"] != nil {
		t.Errorf("maintenance_reason %v", r["maintenance_reason"])
	}
}

func TestPatchNode_Rejections(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{"name": "target"})
	e.createNode(map[string]any{"name": "taken"})
	id := str(n, "uuid")
	tests := []struct {
		name    string
		version string
		query   string
		patch   any
		status  int
		fault   string
	}{
		{"read-only provision_state", latest, "", []map[string]any{{"op": "replace", "path": "/provision_state", "value": "active"}}, 400, "Cannot patch /provision_state. Only the following can be updated: "},
		{"driver_internal_info", latest, "", []map[string]any{{"op": "add", "path": "/driver_internal_info/x", "value": 1}}, 400, "Cannot patch /driver_internal_info/x. Only"},
		{"uuid", latest, "", []map[string]any{{"op": "replace", "path": "/uuid", "value": "2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f"}}, 400, "Cannot patch /uuid."},
		{"remove missing", latest, "", []map[string]any{{"op": "remove", "path": "/properties/nope"}}, 400, "Couldn't apply patch '{'op': 'remove', 'path': '/properties/nope'}'. Reason: can't remove a non-existent object 'nope'"},
		{"replace missing", latest, "", []map[string]any{{"op": "replace", "path": "/extra/nope", "value": 1}}, 400, "Couldn't apply patch"},
		{"bad op", latest, "", []map[string]any{{"op": "move", "path": "/extra/a", "value": 1}}, 400, "Schema error for patch"},
		{"bad path", latest, "", []map[string]any{{"op": "add", "path": "extra", "value": 1}}, 400, "Schema error for patch"},
		{"not a list", latest, "", map[string]any{"op": "add"}, 400, "Schema error for patch"},
		{"no value", latest, "", []map[string]any{{"op": "add", "path": "/extra/a"}}, 400, "'add' and 'replace' operations need a value"},
		{"wrong type", latest, "", []map[string]any{{"op": "replace", "path": "/extra", "value": "str"}}, 400, "Schema error for node: 'str' is not of type 'object', 'null'"},
		{"bad boolean", latest, "", []map[string]any{{"op": "replace", "path": "/maintenance", "value": "perhaps"}}, 400, "Invalid maintenance: Unrecognized value 'perhaps'"},
		{"bad interface", latest, "", []map[string]any{{"op": "replace", "path": "/power_interface", "value": "ipmitool-nope"}}, 400, "could not find a suitable power interface"},
		{"unknown driver", latest, "", []map[string]any{{"op": "replace", "path": "/driver", "value": "nosuch"}}, 400, "No valid host was found."},
		{"invalid name", latest, "", []map[string]any{{"op": "replace", "path": "/name", "value": "has space"}}, 400, "Cannot change name to invalid name 'has space'"},
		{"uuid name", latest, "", []map[string]any{{"op": "replace", "path": "/name", "value": "2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f"}}, 400, "Cannot change name to invalid name"},
		{"reserved name", latest, "", []map[string]any{{"op": "replace", "path": "/name", "value": "detail"}}, 400, "The word \"detail\" is reserved"},
		{"duplicate name", latest, "", []map[string]any{{"op": "replace", "path": "/name", "value": "taken"}}, 409, "A node with name taken already exists."},
		{"newer field", "1.45", "", []map[string]any{{"op": "replace", "path": "/conductor_group", "value": "x"}}, 406, "Request not acceptable."},
		{"reset without driver", latest, "reset_interfaces=true", []map[string]any{{"op": "replace", "path": "/name", "value": "x"}}, 400, "The reset_interfaces parameter can only be used when changing the node's driver."},
		{"reset too old", "1.44", "reset_interfaces=true", []map[string]any{{"op": "replace", "path": "/driver", "value": "ipmi"}}, 406, "Request not acceptable."},
		{"root add", latest, "", []map[string]any{{"op": "add", "path": "/traits", "value": []any{}}}, 400, "Cannot patch /traits."},
		{"protected outside active", latest, "", []map[string]any{{"op": "replace", "path": "/protected", "value": true}}, 409, "can only be made protected"},
		{"retired_reason alone", latest, "", []map[string]any{{"op": "add", "path": "/retired_reason", "value": "x"}}, 400, "Cannot set retired_reason"},
		{"bad chassis", latest, "", []map[string]any{{"op": "add", "path": "/chassis_uuid", "value": "2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f"}}, 400, "Chassis 2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f could not be found."},
		{"malformed", latest, "", "[{", 400, "Malformed JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := e.snapshot()
			path := "/v1/nodes/" + id
			if tc.query != "" {
				path += "?" + tc.query
			}
			r := e.do("PATCH", path, tc.version, tc.patch)
			if r.code != tc.status {
				t.Fatalf("status %d, want %d: %s", r.code, tc.status, r.body)
			}
			if fs, _ := r.fault(t)["faultstring"].(string); !strings.Contains(fs, tc.fault) {
				t.Errorf("faultstring %q, want it to contain %q", fs, tc.fault)
			}
			if d := cmp.Diff(before, e.snapshot()); d != "" {
				t.Errorf("store changed:\n%s", d)
			}
		})
	}
}

func TestPatchNode_TransitionInProgressIsConflict(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{})
	id := str(n, "uuid")
	for _, st := range []struct{ state, target string }{{"cleaning", "available"}, {"clean wait", "available"}} {
		e.updateNode(id, func(n *baremetal.Node) { n.ProvisionState = st.state; n.TargetProvisionState = st.target })
		r := e.must(409, "PATCH", "/v1/nodes/"+id, latest, []map[string]any{{"op": "add", "path": "/extra/a", "value": 1}})
		if fs := r.fault(t)["faultstring"]; fs != "Node "+id+" can not be updated while a state transition is in progress." {
			t.Errorf("%s: fault %v", st.state, fs)
		}
	}
	e.updateNode(id, func(n *baremetal.Node) { n.ProvisionState = "inspecting"; n.TargetProvisionState = "manageable" })
	e.must(409, "PATCH", "/v1/nodes/"+id, latest, []map[string]any{{"op": "add", "path": "/extra/a", "value": 1}})
}

// Verifying is one of Ironic's UPDATE_ALLOWED_STATES: an operator may fix
// the BMC credentials of a node stuck verifying. (While the verify task
// holds the node, the answer is NodeLocked; test/concurrency covers that.)
func TestPatchNode_VerifyingMayBeUpdated(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{})
	id := str(n, "uuid")
	e.updateNode(id, func(n *baremetal.Node) { n.ProvisionState = "verifying"; n.TargetProvisionState = "manageable" })
	e.must(200, "PATCH", "/v1/nodes/"+id, latest, []map[string]any{{"op": "add", "path": "/extra/a", "value": 1}})
}

func TestDeleteNode(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{"name": "doomed"})
	id := str(n, "uuid")
	e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": id, "address": "52:54:00:00:00:01"})

	e.setState(id, "inspecting")
	before := e.snapshot()
	r := e.must(409, "DELETE", "/v1/nodes/doomed", latest, nil)
	if fs := r.fault(t)["faultstring"].(string); !strings.Contains(fs, "Can not delete node") {
		t.Errorf("fault %q", fs)
	}
	if d := cmp.Diff(before, e.snapshot()); d != "" {
		t.Errorf("store changed:\n%s", d)
	}
	// Maintenance allows deletion in any state, protection never does.
	e.updateNode(id, func(n *baremetal.Node) { n.Maintenance = true; n.Protected = true })
	e.must(403, "DELETE", "/v1/nodes/doomed", latest, nil)
	e.updateNode(id, func(n *baremetal.Node) {
		n.Protected = false
		n.InstanceUUID = "0b5c6c0e-8e2e-4d1e-9b7a-0c1d2e3f4a5b"
		n.Maintenance = false
		n.ProvisionState = "available"
	})
	e.must(409, "DELETE", "/v1/nodes/doomed", latest, nil)
	e.updateNode(id, func(n *baremetal.Node) { n.InstanceUUID = "" })

	e.lockNode(id)
	e.must(409, "DELETE", "/v1/nodes/doomed", latest, nil)
	e.unlockNode(id)

	e.must(204, "DELETE", "/v1/nodes/doomed", latest, nil)
	e.must(404, "GET", "/v1/nodes/"+id, latest, nil)
	if ports := e.must(200, "GET", "/v1/ports", latest, nil).json(t)["ports"].([]any); len(ports) != 0 {
		t.Errorf("ports left: %v", ports)
	}
	e.must(404, "DELETE", "/v1/nodes/doomed", latest, nil)
}

func TestListNodes_NextLinkKeepsFilters(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		n := e.createNode(map[string]any{"name": fmt.Sprintf("f%d", i)})
		if i%2 == 0 {
			e.setState(str(n, "uuid"), "manageable")
		}
	}
	var names []string
	path := "/v1/nodes?provision_state=manageable&limit=1"
	for path != "" {
		m := e.must(200, "GET", path, latest, nil).json(t)
		for _, n := range m["nodes"].([]any) {
			names = append(names, str(n.(map[string]any), "name"))
		}
		next, _ := m["next"].(string)
		path = strings.TrimPrefix(next, "http://ferro.test:6385")
	}
	if d := cmp.Diff([]string{"f0", "f2", "f4"}, names); d != "" {
		t.Errorf("paged manageable nodes (-want +got):\n%s", d)
	}
}
