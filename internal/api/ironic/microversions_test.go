package ironic

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// The node fields of 1.83 to 1.109 appear at their version, with Ironic's
// defaults, and not one version below.
func TestNodeFields_AfterOneEightyTwo(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{"name": "new-fields"})
	for _, tc := range []struct {
		field string
		min   int
		want  any
	}{
		{"parent_node", v83ParentNode, nil},
		{"firmware_interface", v86FirmwareInterface, "fake"},
		{"service_step", v87Service, map[string]any{}},
		{"disable_power_off", v95DisablePowerOff, false},
		{"instance_name", v104InstanceName, nil},
		{"health", v109Health, nil},
	} {
		below := e.must(200, "GET", "/v1/nodes/"+str(n, "uuid"), minorVersion(tc.min-1), nil).json(t)
		if _, ok := below[tc.field]; ok {
			t.Errorf("%s shown at 1.%d", tc.field, tc.min-1)
		}
		at := e.must(200, "GET", "/v1/nodes/"+str(n, "uuid"), minorVersion(tc.min), nil).json(t)
		got, ok := at[tc.field]
		if !ok {
			t.Errorf("%s not shown at 1.%d", tc.field, tc.min)
		} else if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s at 1.%d (-want +got):\n%s", tc.field, tc.min, d)
		}
		e.must(406, "GET", "/v1/nodes/"+str(n, "uuid")+"?fields="+tc.field, minorVersion(tc.min-1), nil)
		e.must(200, "GET", "/v1/nodes/"+str(n, "uuid")+"?fields="+tc.field, minorVersion(tc.min), nil)
	}
}

// metal3 creates every node with disable_power_off, false or not: 406
// below 1.95 (Ironic's reject_fields_in_newer_versions), stored from it.
func TestNodeDisablePowerOff(t *testing.T) {
	e := newEnv(t)
	body := func(v any) map[string]any {
		return map[string]any{"driver": "fake-hardware", "disable_power_off": v}
	}
	e.must(406, "POST", "/v1/nodes", "1.94", body(false))
	e.must(201, "POST", "/v1/nodes", "1.94", body(nil))
	e.must(400, "POST", "/v1/nodes", "1.95", body("maybe"))
	n := e.must(201, "POST", "/v1/nodes", "1.95", body("true")).json(t)
	if n["disable_power_off"] != true {
		t.Fatalf("disable_power_off %v", n["disable_power_off"])
	}
	path := "/v1/nodes/" + str(n, "uuid")
	patch := []map[string]any{{"op": "replace", "path": "/disable_power_off", "value": false}}
	e.must(406, "PATCH", path, "1.94", patch)
	if got := e.must(200, "PATCH", path, "1.95", patch).json(t); got["disable_power_off"] != false {
		t.Errorf("after PATCH: %v", got["disable_power_off"])
	}
	st, err := e.store.GetNode(t.Context(), str(n, "uuid"))
	if err != nil || st.DisablePowerOff {
		t.Errorf("stored %v, %v", st, err)
	}
}

// 1.83: a child names its parent (by name or UUID, kept as the UUID);
// lists leave children out unless asked; /children lists them.
func TestNodeParentAndChildren(t *testing.T) {
	e := newEnv(t)
	parent := e.createNode(map[string]any{"name": "parent"})
	pu := str(parent, "uuid")
	child := map[string]any{"driver": "fake-hardware", "name": "child", "parent_node": "parent"}
	e.must(406, "POST", "/v1/nodes", "1.82", child)
	c := e.must(201, "POST", "/v1/nodes", "1.83", child).json(t)
	if c["parent_node"] != pu {
		t.Fatalf("parent_node %v, want %s", c["parent_node"], pu)
	}
	bad := map[string]any{"driver": "fake-hardware", "parent_node": "no-such-node"}
	r := e.must(400, "POST", "/v1/nodes", "1.83", bad)
	if got := str(r.fault(t), "faultstring"); got != "Unable to apply the requested parent_node 'no-such-node'. Requested value was invalid." {
		t.Errorf("unknown parent: %q", got)
	}
	names := func(path, version string) []string {
		var out []string
		for _, it := range e.must(200, "GET", path, version, nil).json(t)["nodes"].([]any) {
			out = append(out, str(it.(map[string]any), "name"))
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		path, version string
		want          []string
	}{
		{"/v1/nodes", "1.82", []string{"parent"}},
		{"/v1/nodes", "1.83", []string{"parent"}},
		{"/v1/nodes?include_children=true", "1.83", []string{"child", "parent"}},
		{"/v1/nodes?include_children=false", "1.83", []string{"parent"}},
		{"/v1/nodes?parent_node=" + pu, "1.83", []string{"child"}},
		{"/v1/nodes/detail?parent_node=" + pu, "1.83", []string{"child"}},
	} {
		if got := names(tc.path, tc.version); !slices.Equal(got, tc.want) {
			t.Errorf("GET %s at %s: %v, want %v", tc.path, tc.version, got, tc.want)
		}
	}
	e.must(406, "GET", "/v1/nodes?parent_node="+pu, "1.82", nil)
	e.must(406, "GET", "/v1/nodes?include_children=true", "1.82", nil)
	e.must(400, "GET", "/v1/nodes?include_children=perhaps", "1.83", nil)

	e.must(404, "GET", "/v1/nodes/parent/children", "1.82", nil)
	kids := e.must(200, "GET", "/v1/nodes/parent/children", "1.83", nil).json(t)
	if d := cmp.Diff([]any{str(c, "uuid")}, kids["children"]); d != "" {
		t.Errorf("children (-want +got):\n%s", d)
	}
	e.must(404, "GET", "/v1/nodes/nobody/children", "1.83", nil)

	// PATCH: 406 below 1.83, the parent by name kept as its UUID, and
	// removing it makes the node a list member again.
	other := e.createNode(map[string]any{"name": "other"})
	path := "/v1/nodes/" + str(other, "uuid")
	set := []map[string]any{{"op": "add", "path": "/parent_node", "value": "parent"}}
	e.must(406, "PATCH", path, "1.82", set)
	if got := e.must(200, "PATCH", path, "1.83", set).json(t); got["parent_node"] != pu {
		t.Errorf("patched parent_node %v", got["parent_node"])
	}
	e.must(400, "PATCH", path, "1.83", []map[string]any{{"op": "replace", "path": "/parent_node", "value": "no-such-node"}})
	e.must(200, "PATCH", path, "1.83", []map[string]any{{"op": "remove", "path": "/parent_node"}})
	if got := names("/v1/nodes", "1.83"); !slices.Equal(got, []string{"other", "parent"}) {
		t.Errorf("after removing the parent: %v", got)
	}
}

// 1.104: instance_name is written and filtered from its version; Nova's
// instance_info.display_name fills it when it is unset.
func TestNodeInstanceName(t *testing.T) {
	e := newEnv(t)
	e.must(406, "POST", "/v1/nodes", "1.103", map[string]any{"driver": "fake-hardware", "instance_name": "web"})
	e.must(400, "POST", "/v1/nodes", "1.104", map[string]any{"driver": "fake-hardware", "instance_name": ""})
	n := e.must(201, "POST", "/v1/nodes", "1.104", map[string]any{"driver": "fake-hardware", "instance_name": "web"}).json(t)
	if n["instance_name"] != "web" {
		t.Fatalf("instance_name %v", n["instance_name"])
	}
	r := e.must(406, "GET", "/v1/nodes?instance_name=web", "1.103", nil)
	if got := str(r.fault(t), "faultstring"); got != "instance_name is not acceptable in this API version" {
		t.Errorf("filter below 1.104: %q", got)
	}
	if got := e.must(200, "GET", "/v1/nodes?instance_name=web", "1.104", nil).json(t)["nodes"].([]any); len(got) != 1 {
		t.Errorf("filter: %v", got)
	}
	if got := e.must(200, "GET", "/v1/nodes?instance_name=db", "1.104", nil).json(t)["nodes"].([]any); len(got) != 0 {
		t.Errorf("filter on another name: %v", got)
	}
	nova := e.createNode(map[string]any{})
	got := e.must(200, "PATCH", "/v1/nodes/"+str(nova, "uuid"), "1.104",
		[]map[string]any{{"op": "add", "path": "/instance_info/display_name", "value": "vm-1"}}).json(t)
	if got["instance_name"] != "vm-1" {
		t.Errorf("instance_name from display_name: %v", got["instance_name"])
	}
}

// 1.86: firmware_interface is a node interface from its version, and a
// driver's detail shows its firmware interfaces from then.
func TestNodeFirmwareInterface(t *testing.T) {
	e := newEnv(t)
	body := map[string]any{"driver": "fake-hardware", "firmware_interface": "no-firmware"}
	e.must(406, "POST", "/v1/nodes", "1.85", body)
	n := e.must(201, "POST", "/v1/nodes", "1.86", body).json(t)
	if n["firmware_interface"] != "no-firmware" {
		t.Fatalf("firmware_interface %v", n["firmware_interface"])
	}
	e.must(400, "POST", "/v1/nodes", "1.86", map[string]any{"driver": "ipmi", "firmware_interface": "redfish"})
	rf := e.must(201, "POST", "/v1/nodes", "1.86", map[string]any{"driver": "redfish"}).json(t)
	if rf["firmware_interface"] != "redfish" {
		t.Errorf("redfish's default firmware interface %v, want redfish", rf["firmware_interface"])
	}
	path := "/v1/nodes/" + str(n, "uuid")
	patch := []map[string]any{{"op": "replace", "path": "/firmware_interface", "value": "fake"}}
	e.must(406, "PATCH", path, "1.85", patch)
	if got := e.must(200, "PATCH", path, "1.86", patch).json(t); got["firmware_interface"] != "fake" {
		t.Errorf("patched firmware_interface %v", got["firmware_interface"])
	}
}

// GET /v1/nodes/{node}/firmware (1.86): the cached components; the
// identity fields from 1.114, refused by ?fields= below it.
func TestNodeFirmwareComponents(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{"name": "fw"})
	e.must(404, "GET", "/v1/nodes/fw/firmware", "1.85", nil)
	if got := e.must(200, "GET", "/v1/nodes/fw/firmware", "1.86", nil).json(t); len(got["firmware"].([]any)) != 0 {
		t.Errorf("fake firmware components: %v", got)
	}
	e.updateNode(str(n, "uuid"), func(n *baremetal.Node) {
		n.Firmware = []baremetal.FirmwareComponent{{Component: "bios", InitialVersion: "1.0", CurrentVersion: "1.2",
			Vendor: "Acme", CreatedAt: n.CreatedAt}}
	})
	c := e.must(200, "GET", "/v1/nodes/fw/firmware", "1.86", nil).json(t)["firmware"].([]any)[0].(map[string]any)
	for _, k := range []string{"created_at", "updated_at", "component", "initial_version", "current_version", "last_version_flashed"} {
		if _, ok := c[k]; !ok {
			t.Errorf("1.86 component lacks %s: %v", k, c)
		}
	}
	if c["component"] != "bios" || c["current_version"] != "1.2" || c["last_version_flashed"] != nil {
		t.Errorf("component %v", c)
	}
	if _, ok := c["vendor"]; ok {
		t.Errorf("vendor shown below 1.114: %v", c)
	}
	c = e.must(200, "GET", "/v1/nodes/fw/firmware", "1.114", nil).json(t)["firmware"].([]any)[0].(map[string]any)
	if c["vendor"] != "Acme" || c["model"] != nil || c["serial_number"] != nil {
		t.Errorf("1.114 component %v", c)
	}
	only := e.must(200, "GET", "/v1/nodes/fw/firmware?fields=component", "1.86", nil).json(t)["firmware"].([]any)[0].(map[string]any)
	if len(only) != 3 || only["component"] != "bios" {
		t.Errorf("fields=component: %v", only)
	}
	r := e.must(400, "GET", "/v1/nodes/fw/firmware?fields=vendor,model", "1.113", nil)
	if got := str(r.fault(t), "faultstring"); got != "Fields model, vendor are not allowed in this API version. They require at least API version 1.114." {
		t.Errorf("identity fields below 1.114: %q", got)
	}
	e.must(400, "GET", "/v1/nodes/fw/firmware?fields=bogus", "1.114", nil)
	e.must(400, "GET", "/v1/nodes/fw/firmware?other=1", "1.114", nil)
	e.must(404, "GET", "/v1/nodes/nobody/firmware", "1.86", nil)
}

// 1.89: attach and detach virtual media; 1.93: list it. Below, the
// resource is not there; bad input is refused before the conductor.
func TestNodeVmedia(t *testing.T) {
	e := newEnv(t)
	e.createNode(map[string]any{"name": "rf", "driver": "redfish",
		"driver_info": map[string]any{"redfish_address": "https://bmc"}})
	e.createNode(map[string]any{"name": "fk"})
	attach := map[string]any{"device_type": "cdrom", "image_url": "https://img/boot.iso"}
	e.must(404, "POST", "/v1/nodes/rf/vmedia", "1.88", attach)
	e.must(404, "DELETE", "/v1/nodes/rf/vmedia", "1.88", nil)
	e.must(404, "GET", "/v1/nodes/rf/vmedia", "1.92", nil)
	e.must(204, "POST", "/v1/nodes/rf/vmedia", "1.89", attach)
	e.must(204, "DELETE", "/v1/nodes/rf/vmedia?device_types=cdrom,floppy", "1.89", nil)
	e.must(204, "DELETE", "/v1/nodes/rf/vmedia", "1.89", nil)
	got := e.must(200, "GET", "/v1/nodes/rf/vmedia", "1.93", nil)
	if string(got.body) != `[{"media_types": ["CD", "DVD"], "inserted": true, "image": "http://img/x.iso"}]` {
		t.Errorf("GET vmedia: %s", got.body)
	}
	for _, tc := range []struct {
		body any
		msg  string
	}{
		{map[string]any{"device_type": "usb", "image_url": "https://x"}, "Schema error for vmedia: 'usb' is not one of ['disk', 'cdrom', 'floppy']"},
		{map[string]any{"device_type": "cdrom"}, "Schema error for vmedia: 'image_url' is a required property"},
		{map[string]any{"device_type": "cdrom", "image_url": "ftp://x/y.iso"}, "Unsupported or missing URL scheme: ftp"},
		{map[string]any{"device_type": "cdrom", "image_url": "https://x", "image_download_source": "p2p"}, "Schema error for vmedia: 'p2p' is not one of ['http', 'local', 'swift']"},
	} {
		r := e.must(400, "POST", "/v1/nodes/rf/vmedia", "1.89", tc.body)
		if got := str(r.fault(t), "faultstring"); got != tc.msg {
			t.Errorf("%v: %q, want %q", tc.body, got, tc.msg)
		}
	}
	r := e.must(400, "DELETE", "/v1/nodes/rf/vmedia?device_types=cdrom,usb", "1.89", nil)
	if got := str(r.fault(t), "faultstring"); got != "Invalid device type(s) usb (valid are disk, cdrom, floppy)" {
		t.Errorf("bad device type: %q", got)
	}
	// ironic-tempest-plugin sends PUT: below 1.89 the resource is not
	// there (404, as Ironic's _lookup), from it the method is not allowed.
	e.must(404, "PUT", "/v1/nodes/rf/vmedia", "1.88", attach)
	e.must(405, "PUT", "/v1/nodes/rf/vmedia", "1.89", attach)
	e.must(404, "POST", "/v1/nodes/rf/firmware", "1.85", nil)
	e.must(405, "POST", "/v1/nodes/rf/firmware", "1.86", nil)
	// Ironic's fake management has no virtual media.
	e.must(400, "POST", "/v1/nodes/fk/vmedia", "1.89", attach)
	e.must(400, "GET", "/v1/nodes/fk/vmedia", "1.93", nil)
	e.must(404, "POST", "/v1/nodes/nobody/vmedia", "1.89", attach)
	calls := strings.Join(e.cond.Calls(), "\n")
	if !strings.Contains(calls, "attach vmedia") || !strings.Contains(calls, "detach vmedia") || !strings.Contains(calls, "[cdrom floppy]") {
		t.Errorf("conductor calls:\n%s", calls)
	}
}

// unhold (1.85) and service (1.87): Ironic checks the state machine
// first (400 in a state that does not take the verb, at any version),
// then the version (406), and service_steps belong to service only.
func TestProvisionVerbs_UnholdAndService(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{})
	id := str(n, "uuid")
	path := "/v1/nodes/" + id + "/states/provision"
	steps := []any{map[string]any{"interface": "vendor", "step": "log_passthrough"}}
	for _, tc := range []struct {
		verb, state string
		min         int
		body        map[string]any
	}{
		{"unhold", "clean hold", v85UnholdVerb, map[string]any{"target": "unhold"}},
		{"unhold", "deploy hold", v85UnholdVerb, map[string]any{"target": "unhold"}},
		{"unhold", "service hold", v85UnholdVerb, map[string]any{"target": "unhold"}},
		{"service", "active", v87Service, map[string]any{"target": "service", "service_steps": steps}},
	} {
		e.setState(id, "enroll")
		r := e.must(400, "PUT", path, minorVersion(tc.min-1), tc.body)
		if got, want := str(r.fault(t), "faultstring"), "The requested action \""+tc.verb+"\" can not be performed on node \""+id+"\" while it is in state \"enroll\"."; got != want {
			t.Errorf("%s in enroll: %q", tc.verb, got)
		}
		e.setState(id, tc.state)
		e.must(406, "PUT", path, minorVersion(tc.min-1), tc.body)
		if got, _ := e.store.GetNode(t.Context(), id); got.ProvisionState != tc.state {
			t.Errorf("%s refused at %s, but the node went to %s", tc.verb, minorVersion(tc.min-1), got.ProvisionState)
		}
		e.must(202, "PUT", path, minorVersion(tc.min), tc.body)
	}
	want := []string{"provision " + id + " unhold", "provision " + id + " unhold", "provision " + id + " unhold",
		"service " + id + " [{'interface': 'vendor', 'step': 'log_passthrough'}] disable_ramdisk=false"}
	if d := cmp.Diff(want, e.cond.Calls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	e.setState(id, "enroll")
	r := e.must(400, "PUT", path, "1.87", map[string]any{"target": "manage", "service_steps": []any{map[string]any{"interface": "bios", "step": "apply_configuration"}}})
	if got := str(r.fault(t), "faultstring"); got != "\"service_steps\" is only valid when setting target provision state to service" {
		t.Errorf("service_steps with manage: %q", got)
	}
}

// A detailed history event shows project from 1.113 and state,
// target_provision_state and duration_seconds from 1.115.
func TestNodeHistory_NewerFields(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{"name": "h"})
	d := int64(42)
	ev := &baremetal.HistoryEvent{UUID: "4a8b7c6d-1e2f-4a3b-9c8d-7e6f5a4b3c2d", NodeUUID: str(n, "uuid"), Event: "cleaned",
		Severity: "INFO", EventType: "provisioning", State: "available", DurationSeconds: &d}
	if err := e.store.AddHistory(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	show := func(version string) map[string]any {
		return e.must(200, "GET", "/v1/nodes/h/history/"+ev.UUID, version, nil).json(t)
	}
	has := func(m map[string]any, k string) bool { _, ok := m[k]; return ok }
	if got := show("1.112"); has(got, "project") || has(got, "state") {
		t.Errorf("1.112: %v", got)
	}
	if got := show("1.113"); !has(got, "project") || got["project"] != nil || has(got, "state") {
		t.Errorf("1.113: %v", got)
	}
	got := show("1.115")
	if got["state"] != "available" || got["target_provision_state"] != nil || got["duration_seconds"] != json.Number("42") {
		t.Errorf("1.115: %v", got)
	}
	list := e.must(200, "GET", "/v1/nodes/h/history", "1.115", nil).json(t)["history"].([]any)[0].(map[string]any)
	if has(list, "state") {
		t.Errorf("a list without detail shows state: %v", list)
	}
}
