package ironic

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/store"
)

func TestStates_ManageInspectProvide(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "flow"}), "uuid")
	for _, step := range []struct{ verb, state string }{
		{"manage", "manageable"}, {"inspect", "manageable"}, {"provide", "available"}, {"manage", "manageable"},
	} {
		r := e.must(http.StatusAccepted, "PUT", "/v1/nodes/flow/states/provision", latest, map[string]any{"target": step.verb})
		if len(r.body) != 0 {
			t.Errorf("202 with body %q", r.body)
		}
		if loc := r.header.Get("Location"); loc != "http://ferro.test:6385/v1/nodes/flow/states" {
			t.Errorf("Location %q", loc)
		}
		st := e.must(200, "GET", "/v1/nodes/flow/states", latest, nil).json(t)
		if st["provision_state"] != step.state {
			t.Fatalf("after %s: %v", step.verb, st["provision_state"])
		}
	}
	st := e.must(200, "GET", "/v1/nodes/flow/states", latest, nil).json(t)
	want := []string{"boot_mode", "console_enabled", "last_error", "power_state", "provision_state", "provision_updated_at", "raid_config", "secure_boot", "target_power_state", "target_provision_state", "target_raid_config"}
	if d := cmp.Diff(want, keys(st)); d != "" {
		t.Errorf("states fields (-want +got):\n%s", d)
	}
	old := e.must(200, "GET", "/v1/nodes/flow/states", "1.11", nil).json(t)
	if _, ok := old["raid_config"]; ok {
		t.Errorf("1.11 shows raid_config")
	}
	want2 := []string{
		"provision " + id + " manage", "provision " + id + " inspect", "provision " + id + " provide", "provision " + id + " manage",
	}
	if d := cmp.Diff(want2, e.cond.Calls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
}

func TestStates_ConductorErrorsMapToIronicCodes(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "errs"}), "uuid")
	tests := []struct {
		err    error
		status int
		fault  string
	}{
		{fmt.Errorf("%w: boom", conductor.ErrInvalidState), 400, "boom."},
		{fmt.Errorf("%w: ipmi_address is required", driver.ErrMissingParameter), 400, "ipmi_address is required."},
		{fmt.Errorf("%w: bad address", driver.ErrInvalidParameter), 400, "bad address."},
		{fmt.Errorf("%w: no power", driver.ErrUnsupported), 400, "no power."},
		{fmt.Errorf("%w: Node x is locked by host h", conductor.ErrNodeLocked), 409, "Node x is locked by host h."},
		{conductor.ErrNoFreeWorker, 503, "Requested action cannot be performed due to lack of free conductor workers."},
		{conductor.ErrShuttingDown, 503, "Resource temporarily unavailable, please retry."},
		{errBoom, 500, "boom"},
	}
	for _, tc := range tests {
		e.cond.failNext(tc.err)
		r := e.do("PUT", "/v1/nodes/errs/states/provision", latest, map[string]any{"target": "manage"})
		if r.code != tc.status {
			t.Errorf("%v: status %d, want %d", tc.err, r.code, tc.status)
			continue
		}
		f := r.fault(t)
		code := "Client"
		if tc.status >= 500 {
			code = "Server"
		}
		if f["faultstring"] != tc.fault || f["faultcode"] != code {
			t.Errorf("%v: fault %v, want %q/%s", tc.err, f, tc.fault, code)
		}
	}
	n, _ := e.store.GetNode(t.Context(), id)
	if n.ProvisionState != "enroll" {
		t.Errorf("state changed to %s", n.ProvisionState)
	}
	if !strings.Contains(e.logs.String(), "status=500") {
		t.Errorf("500 not logged")
	}
}

func TestStates_AbortNeedsVersions(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "ab"}), "uuid")
	e.setState(id, "inspect wait")
	e.must(406, "PUT", "/v1/nodes/ab/states/provision", "1.12", map[string]any{"target": "abort"})
	e.must(406, "PUT", "/v1/nodes/ab/states/provision", "1.40", map[string]any{"target": "abort"})
	e.must(202, "PUT", "/v1/nodes/ab/states/provision", "1.41", map[string]any{"target": "abort"})
	n, _ := e.store.GetNode(t.Context(), id)
	if n.ProvisionState != "inspect failed" {
		t.Errorf("after abort: %s", n.ProvisionState)
	}
}

func TestStates_Power(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "pw"}), "uuid")
	r := e.must(202, "PUT", "/v1/nodes/pw/states/power", latest, map[string]any{"target": "power on", "timeout": 30})
	if r.header.Get("Location") != "http://ferro.test:6385/v1/nodes/pw/states" {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	e.must(202, "PUT", "/v1/nodes/"+id+"/states/power", "1.1", map[string]any{"target": "rebooting"})
	e.must(202, "PUT", "/v1/nodes/pw/states/power", latest, map[string]any{"target": "power off"})
	want := []string{"power " + id + " power on 30s", "power " + id + " rebooting 0s", "power " + id + " power off 0s"}
	if d := cmp.Diff(want, e.cond.Calls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	if st := e.must(200, "GET", "/v1/nodes/pw/states", latest, nil).json(t); st["power_state"] != "power off" {
		t.Errorf("power_state %v", st["power_state"])
	}
	e.must(406, "PUT", "/v1/nodes/pw/states/power", "1.26", map[string]any{"target": "soft power off"})
	e.setState(id, "cleaning")
	e.must(400, "PUT", "/v1/nodes/pw/states/power", latest, map[string]any{"target": "power on"})
	e.must(404, "PUT", "/v1/nodes/ghost/states/power", latest, map[string]any{"target": "power on"})
}

func TestStates_MaintenanceBootDeviceValidate(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "mgmt"}), "uuid")
	e.must(202, "PUT", "/v1/nodes/mgmt/maintenance", latest, map[string]any{"reason": "disk swap"})
	n := e.must(200, "GET", "/v1/nodes/mgmt", latest, nil).json(t)
	if n["maintenance"] != true || n["maintenance_reason"] != "disk swap" {
		t.Errorf("maintenance %v %v", n["maintenance"], n["maintenance_reason"])
	}
	e.updateNode(id, func(n *baremetal.Node) { n.Fault = "power failure" })
	e.must(202, "DELETE", "/v1/nodes/mgmt/maintenance", latest, nil)
	n = e.must(200, "GET", "/v1/nodes/mgmt", latest, nil).json(t)
	if n["maintenance"] != false || n["maintenance_reason"] != nil || n["fault"] != nil {
		t.Errorf("after unset: %v %v %v", n["maintenance"], n["maintenance_reason"], n["fault"])
	}

	bd := e.must(200, "GET", "/v1/nodes/mgmt/management/boot_device", latest, nil).json(t)
	if d := cmp.Diff(map[string]any{"boot_device": nil, "persistent": nil}, bd); d != "" {
		t.Errorf("unknown boot device (-want +got):\n%s", d)
	}
	e.must(204, "PUT", "/v1/nodes/mgmt/management/boot_device", latest, map[string]any{"boot_device": "pxe", "persistent": true})
	bd = e.must(200, "GET", "/v1/nodes/mgmt/management/boot_device", latest, nil).json(t)
	if d := cmp.Diff(map[string]any{"boot_device": "pxe", "persistent": true}, bd); d != "" {
		t.Errorf("boot device (-want +got):\n%s", d)
	}
	e.must(400, "PUT", "/v1/nodes/mgmt/management/boot_device", latest, map[string]any{"boot_device": "floppy"})
	e.must(400, "PUT", "/v1/nodes/mgmt/management/boot_device", latest, map[string]any{"persistent": true})
	sup := e.must(200, "GET", "/v1/nodes/mgmt/management/boot_device/supported", latest, nil).json(t)
	if d := cmp.Diff(map[string]any{"supported_boot_devices": []any{"pxe", "disk"}}, sup); d != "" {
		t.Errorf("supported (-want +got):\n%s", d)
	}

	v := e.must(200, "GET", "/v1/nodes/mgmt/validate", latest, nil).json(t)
	if d := cmp.Diff(map[string]any{"result": true}, v["power"]); d != "" {
		t.Errorf("validate power (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"result": nil, "reason": "not supported"}, v["console"]); d != "" {
		t.Errorf("validate console (-want +got):\n%s", d)
	}
	old := e.must(200, "GET", "/v1/nodes/validate?node="+id, "1.1", nil).json(t)
	if _, ok := old["power"]; !ok {
		t.Errorf("deprecated validate form: %v", old)
	}
	e.must(406, "GET", "/v1/nodes/validate?node=mgmt", "1.4", nil)
}

func TestStates_RAIDConfig(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "raid"}), "uuid")
	cfg := map[string]any{"logical_disks": []any{map[string]any{"size_gb": 100, "raid_level": "1", "is_root_volume": true}, map[string]any{"size_gb": "MAX", "raid_level": "5"}}}
	e.must(204, "PUT", "/v1/nodes/raid/states/raid", latest, cfg)
	n := e.must(200, "GET", "/v1/nodes/raid", latest, nil).json(t)
	disks := n["target_raid_config"].(map[string]any)["logical_disks"].([]any)
	if len(disks) != 2 || fmt.Sprint(disks[0].(map[string]any)["size_gb"]) != "100" {
		t.Errorf("target_raid_config %v", n["target_raid_config"])
	}
	e.must(204, "PUT", "/v1/nodes/raid/states/raid", latest, map[string]any{})
	if n := e.must(200, "GET", "/v1/nodes/raid", latest, nil).json(t); len(n["target_raid_config"].(map[string]any)) != 0 {
		t.Errorf("not cleared: %v", n["target_raid_config"])
	}
	e.updateNode(id, func(n *baremetal.Node) { n.Interfaces["raid"] = "no-raid" })
	e.must(404, "PUT", "/v1/nodes/raid/states/raid", latest, cfg)
}

func TestStates_Traits(t *testing.T) {
	e := newEnv(t)
	e.createNode(map[string]any{"name": "tr"})
	e.must(204, "PUT", "/v1/nodes/tr/traits", latest, map[string]any{"traits": []any{"CUSTOM_B", "CUSTOM_A", "HW_CPU_X86_VMX"}})
	r := e.must(204, "PUT", "/v1/nodes/tr/traits/CUSTOM_C", latest, nil)
	if r.header.Get("Location") != "http://ferro.test:6385/v1/nodes/tr/traits/CUSTOM_C" {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	got := e.must(200, "GET", "/v1/nodes/tr/traits", latest, nil).json(t)
	if d := cmp.Diff(map[string]any{"traits": []any{"CUSTOM_A", "CUSTOM_B", "CUSTOM_C", "HW_CPU_X86_VMX"}}, got); d != "" {
		t.Errorf("traits (-want +got):\n%s", d)
	}
	e.must(204, "DELETE", "/v1/nodes/tr/traits/CUSTOM_B", latest, nil)
	e.must(404, "DELETE", "/v1/nodes/tr/traits/CUSTOM_B", latest, nil)
	e.must(400, "PUT", "/v1/nodes/tr/traits/lower_case", latest, nil)
	e.must(400, "PUT", "/v1/nodes/tr/traits", latest, map[string]any{"traits": "CUSTOM_X"})
	// Below 1.37, what Ironic 21.4 answers (checked against it): 406 for
	// GET, 405 for PUT, 404 for DELETE.
	e.must(406, "GET", "/v1/nodes/tr/traits", "1.36", nil)
	e.must(405, "PUT", "/v1/nodes/tr/traits", "1.36", map[string]any{"traits": []string{}})
	e.must(405, "PUT", "/v1/nodes/tr/traits/CUSTOM_A", "1.36", nil)
	e.must(404, "DELETE", "/v1/nodes/tr/traits", "1.36", nil)
	n := e.must(200, "GET", "/v1/nodes/tr", latest, nil).json(t)
	if d := cmp.Diff([]any{"CUSTOM_A", "CUSTOM_C", "HW_CPU_X86_VMX"}, n["traits"]); d != "" {
		t.Errorf("node traits (-want +got):\n%s", d)
	}
	e.must(204, "DELETE", "/v1/nodes/tr/traits", latest, nil)
	if got := e.must(200, "GET", "/v1/nodes/tr/traits", latest, nil).json(t); len(got["traits"].([]any)) != 0 {
		t.Errorf("traits left %v", got)
	}
}

func TestHistoryAndInventory(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "hist"}), "uuid")
	ctx := t.Context()
	long := strings.Repeat("x", 300)
	for i, ev := range []string{"first", long} {
		if err := e.store.AddHistory(ctx, &baremetal.HistoryEvent{
			UUID: fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i), NodeUUID: id, Conductor: "c1",
			Event: ev, EventType: "provisioning", Severity: baremetal.SeverityError, CreatedAt: time.Now(),
		}); err != nil {
			t.Fatal(err)
		}
	}
	e.must(404, "GET", "/v1/nodes/hist/history", "1.77", nil)
	h := e.must(200, "GET", "/v1/nodes/hist/history", latest, nil).json(t)["history"].([]any)
	if len(h) != 2 {
		t.Fatalf("history %v", h)
	}
	first := h[0].(map[string]any)
	if d := cmp.Diff([]string{"created_at", "event", "links", "severity", "uuid"}, keys(first)); d != "" {
		t.Errorf("history fields (-want +got):\n%s", d)
	}
	if ev := str(h[1].(map[string]any), "event"); len(ev) != 254 || !strings.HasSuffix(ev, "...") {
		t.Errorf("long event not truncated: %d", len(ev))
	}
	d := e.must(200, "GET", "/v1/nodes/hist/history?detail=true", latest, nil).json(t)["history"].([]any)
	if ev := str(d[1].(map[string]any), "event"); ev != long || str(d[1].(map[string]any), "conductor") != "c1" {
		t.Errorf("detail event %q", ev)
	}
	paged := e.must(200, "GET", "/v1/nodes/hist/history?limit=1", latest, nil).json(t)
	if !strings.Contains(str(paged, "next"), "marker=00000000-0000-4000-8000-000000000000") {
		t.Errorf("next %v", paged["next"])
	}
	one := e.must(200, "GET", "/v1/nodes/hist/history/00000000-0000-4000-8000-000000000001", latest, nil).json(t)
	if one["event_type"] != "provisioning" {
		t.Errorf("event %v", one)
	}
	e.must(404, "GET", "/v1/nodes/hist/history/00000000-0000-4000-8000-000000000009", latest, nil)

	e.must(404, "GET", "/v1/nodes/hist/inventory", "1.80", nil)
	r := e.must(404, "GET", "/v1/nodes/hist/inventory", latest, nil)
	if fs := r.fault(t)["faultstring"]; fs != "Node inventory record for node "+id+" could not be found." {
		t.Errorf("fault %v", fs)
	}
	if err := e.store.SaveInventory(ctx, &baremetal.Inventory{NodeUUID: id, Inventory: baremetal.JSON{"cpu": map[string]any{"count": 4}}, PluginData: baremetal.JSON{"x": true}}); err != nil {
		t.Fatal(err)
	}
	inv := e.must(200, "GET", "/v1/nodes/hist/inventory", latest, nil).json(t)
	if fmt.Sprint(inv["inventory"]) != "map[cpu:map[count:4]]" || inv["plugin_data"].(map[string]any)["x"] != true {
		t.Errorf("inventory %v", inv)
	}
}

func TestDriversAndConductors(t *testing.T) {
	e := newEnv(t)
	ds := e.must(200, "GET", "/v1/drivers", latest, nil).json(t)["drivers"].([]any)
	var names []string
	for _, d := range ds {
		names = append(names, str(d.(map[string]any), "name"))
	}
	if d := cmp.Diff([]string{"fake-hardware", "ipmi", "redfish"}, names); d != "" {
		t.Errorf("drivers (-want +got):\n%s", d)
	}
	first := ds[0].(map[string]any)
	if d := cmp.Diff([]any{"test-host"}, first["hosts"]); d != "" {
		t.Errorf("hosts without conductors (-want +got):\n%s", d)
	}
	if first["type"] != "dynamic" {
		t.Errorf("type %v", first["type"])
	}
	if _, ok := first["default_boot_interface"]; ok {
		t.Errorf("list without detail shows interfaces")
	}
	det := e.must(200, "GET", "/v1/drivers?detail=true", latest, nil).json(t)["drivers"].([]any)[1].(map[string]any)
	if det["default_power_interface"] != "ipmitool" || det["default_boot_interface"] != "ipxe" {
		t.Errorf("ipmi defaults %v %v", det["default_power_interface"], det["default_boot_interface"])
	}
	if _, ok := det["default_firmware_interface"]; ok {
		t.Errorf("firmware interface shown below 1.86")
	}
	det86 := e.must(200, "GET", "/v1/drivers?detail=true", "1.86", nil).json(t)["drivers"].([]any)[1].(map[string]any)
	if det86["default_firmware_interface"] != "no-firmware" || det86["enabled_firmware_interfaces"] == nil {
		t.Errorf("firmware interface at 1.86: %v %v", det86["default_firmware_interface"], det86["enabled_firmware_interfaces"])
	}
	e.must(406, "GET", "/v1/drivers?detail=true", "1.29", nil)
	e.must(400, "GET", "/v1/drivers?type=weird", latest, nil)
	if n := len(e.must(200, "GET", "/v1/drivers?type=classic", latest, nil).json(t)["drivers"].([]any)); n != 0 {
		t.Errorf("classic drivers: %d", n)
	}
	old := e.must(200, "GET", "/v1/drivers/ipmi", "1.32", nil).json(t)
	for _, k := range []string{"default_storage_interface", "default_rescue_interface", "default_bios_interface"} {
		if _, ok := old[k]; ok {
			t.Errorf("1.32 shows %s", k)
		}
	}
	if _, ok := old["enabled_power_interfaces"]; !ok {
		t.Errorf("driver detail lacks enabled_power_interfaces")
	}
	e.must(404, "GET", "/v1/drivers/nosuch", latest, nil)
	props := e.must(200, "GET", "/v1/drivers/ipmi/properties", latest, nil).json(t)
	if _, ok := props["ipmi_address"]; !ok {
		t.Errorf("properties %v", props)
	}
	e.must(404, "GET", "/v1/drivers/nosuch/properties", latest, nil)

	// Conductors, from the store.
	ctx := t.Context()
	for _, c := range []*store.Conductor{
		{Hostname: "c1", Group: "", Drivers: []string{"ipmi", "fake-hardware"}},
		{Hostname: "c2", Group: "rack1", Drivers: []string{"redfish"}},
	} {
		if err := e.store.RegisterConductor(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	e.must(404, "GET", "/v1/conductors", "1.48", nil)
	cs := e.must(200, "GET", "/v1/conductors", latest, nil).json(t)["conductors"].([]any)
	if len(cs) != 2 {
		t.Fatalf("conductors %v", cs)
	}
	if d := cmp.Diff([]string{"alive", "conductor_group", "hostname", "links"}, keys(cs[0].(map[string]any))); d != "" {
		t.Errorf("conductor fields (-want +got):\n%s", d)
	}
	c2 := e.must(200, "GET", "/v1/conductors/c2", latest, nil).json(t)
	if c2["alive"] != true || c2["conductor_group"] != "rack1" || fmt.Sprint(c2["drivers"]) != "[redfish]" {
		t.Errorf("c2 %v", c2)
	}
	e.must(404, "GET", "/v1/conductors/c9", latest, nil)
	ds = e.must(200, "GET", "/v1/drivers", latest, nil).json(t)["drivers"].([]any)
	if d := cmp.Diff([]any{"c2"}, ds[2].(map[string]any)["hosts"]); d != "" {
		t.Errorf("redfish hosts (-want +got):\n%s", d)
	}
	// A node names its conductor.
	e.h = New(e.opts)
	n := e.createNode(map[string]any{"conductor_group": "rack1"})
	if n["conductor"] != "c2" {
		t.Errorf("conductor %v", n["conductor"])
	}
	if got := e.must(200, "GET", "/v1/nodes?conductor=c2", latest, nil).json(t)["nodes"].([]any); len(got) != 1 {
		t.Errorf("conductor filter %v", got)
	}
}

func TestChassisAndShards(t *testing.T) {
	e := newEnv(t)
	if got := e.must(200, "GET", "/v1/chassis", latest, nil).json(t); len(got["chassis"].([]any)) != 0 {
		t.Errorf("chassis %v", got)
	}
	e.must(404, "GET", "/v1/chassis/2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f", latest, nil)

	// Chassis: create, a node in it, listed under it, not deletable while
	// the node names it.
	c := e.must(201, "POST", "/v1/chassis", latest, map[string]any{"description": "В Україні ♡ OpenStack!"}).json(t)
	cid := str(c, "uuid")
	if c["description"] != "В Україні ♡ OpenStack!" || c["nodes"] == nil {
		t.Errorf("chassis as created %v", c)
	}
	e.must(400, "POST", "/v1/chassis", latest, map[string]any{"bogus": 1})
	e.must(400, "POST", "/v1/nodes", latest, map[string]any{"driver": "fake-hardware", "chassis_uuid": "2d3f9a5e-7c53-4a3f-a9f5-1a2b3c4d5e6f"})
	nid := str(e.createNode(map[string]any{"chassis_uuid": cid}), "uuid")
	nodes := e.must(200, "GET", "/v1/chassis/"+cid+"/nodes", latest, nil).json(t)["nodes"].([]any)
	if len(nodes) != 1 || str(nodes[0].(map[string]any), "uuid") != nid {
		t.Errorf("chassis nodes %v", nodes)
	}
	e.must(400, "DELETE", "/v1/chassis/"+cid, latest, nil)
	e.must(200, "PATCH", "/v1/chassis/"+cid, latest, []map[string]any{{"op": "replace", "path": "/description", "value": "rack 2"}})
	e.must(400, "PATCH", "/v1/chassis/"+cid, latest, []map[string]any{{"op": "replace", "path": "/uuid", "value": nid}})
	if got := e.must(200, "GET", "/v1/chassis/"+cid, latest, nil).json(t); got["description"] != "rack 2" {
		t.Errorf("patched chassis %v", got)
	}
	e.must(200, "PATCH", "/v1/nodes/"+nid, latest, []map[string]any{{"op": "remove", "path": "/chassis_uuid"}})
	e.must(204, "DELETE", "/v1/chassis/"+cid, latest, nil)
	e.must(404, "GET", "/v1/chassis/"+cid, latest, nil)
	e.must(204, "DELETE", "/v1/nodes/"+nid, latest, nil)
	e.createNode(map[string]any{"shard": "s1"})
	e.createNode(map[string]any{"shard": "s1"})
	e.createNode(map[string]any{})
	got := e.must(200, "GET", "/v1/shards", latest, nil).json(t)
	if fmt.Sprint(got["shards"]) != "[map[count:2 name:s1] map[count:1 name:None]]" {
		t.Errorf("shards %v", got)
	}
	e.must(404, "GET", "/v1/shards", "1.81", nil)
}

func TestStates_ConsoleBIOSVIFs(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "extras"}), "uuid")
	if got := e.must(200, "GET", "/v1/nodes/extras/states/console", latest, nil).json(t); got["console_enabled"] != false || got["console_info"] != nil {
		t.Errorf("console %v", got)
	}
	if got := e.must(200, "GET", "/v1/nodes/extras/bios", latest, nil).json(t); len(got["bios"].([]any)) != 0 {
		t.Errorf("bios %v", got)
	}
	e.must(404, "GET", "/v1/nodes/extras/bios", "1.39", nil)
	e.must(404, "GET", "/v1/nodes/extras/bios/ProcVirtualization", latest, nil)
	e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": id, "address": "52:54:00:00:00:01", "extra": map[string]any{"vif_port_id": "vif-1"}})
	if got := e.must(200, "GET", "/v1/nodes/extras/vifs", latest, nil).json(t); fmt.Sprint(got["vifs"]) != "[map[id:vif-1]]" {
		t.Errorf("vifs %v", got)
	}
	e.must(404, "GET", "/v1/nodes/extras/vifs", "1.27", nil)

	// Console set, with the fake console interface; the old route order
	// and the unversioned path Ironic's routing also serves.
	e.must(400, "PUT", "/v1/nodes/extras/states/console", latest, map[string]any{})
	e.must(400, "PUT", "/v1/nodes/extras/states/console", latest, map[string]any{"enabled": "maybe"})
	e.must(202, "PUT", "/v1/nodes/extras/states/console", latest, map[string]any{"enabled": true})
	for _, path := range []string{"/v1/nodes/extras/states/console", "/v1/nodes/states/console/" + id, "/nodes/extras/states/console"} {
		if got := e.must(200, "GET", path, latest, nil).json(t); got["console_enabled"] != true || fmt.Sprint(got["console_info"]) != "map[]" {
			t.Errorf("GET %s after enabling: %v", path, got)
		}
	}
	e.must(202, "PUT", "/v1/nodes/states/console/"+id, latest, map[string]any{"enabled": false})
	if got := e.must(200, "GET", "/v1/nodes/extras", latest, nil).json(t); got["console_enabled"] != false {
		t.Errorf("console_enabled after disabling: %v", got["console_enabled"])
	}
	noConsole := str(e.createNode(map[string]any{"console_interface": "no-console"}), "uuid")
	e.must(400, "PUT", "/v1/nodes/"+noConsole+"/states/console", latest, map[string]any{"enabled": true})
}

func TestRoutes_TrailingSlashAndHead(t *testing.T) {
	e := newEnv(t)
	e.createNode(map[string]any{"name": "slash"})
	for _, path := range []string{"/v1/nodes/", "/v1/ports/", "/v1/portgroups/", "/v1/drivers/", "/v1/allocations/", "/v1/conductors/", "/v1/chassis/"} {
		e.must(200, "GET", path, latest, nil)
	}
	r := e.must(200, "HEAD", "/v1/nodes/slash", latest, nil)
	if r.header.Get("X-Openstack-Request-Id") == "" {
		t.Errorf("HEAD lacks request id")
	}
}

// Volume connectors and targets (1.32): conflicts as Ironic words them,
// and changes only while the node is powered off.
func TestVolumeResources(t *testing.T) {
	e := newEnv(t)
	nid := str(e.createNode(map[string]any{"name": "vol"}), "uuid")
	e.must(404, "GET", "/v1/volume/connectors", "1.31", nil)
	c := e.must(201, "POST", "/v1/volume/connectors", latest, map[string]any{"node_uuid": nid, "type": "iqn", "connector_id": "iqn.2026-12.test:a"}).json(t)
	r := e.must(409, "POST", "/v1/volume/connectors", latest, map[string]any{"node_uuid": nid, "type": "iqn", "connector_id": "iqn.2026-12.test:a"})
	if fs := r.fault(t)["faultstring"]; fs != "A volume connector with type iqn and connector ID iqn.2026-12.test:a already exists." {
		t.Errorf("conflict %v", fs)
	}
	e.must(400, "POST", "/v1/volume/targets", latest, map[string]any{"node_uuid": nid, "volume_type": "iscsi", "volume_id": "v", "boot_index": "zero"})
	e.must(201, "POST", "/v1/volume/targets", latest, map[string]any{"node_uuid": nid, "volume_type": "iscsi", "volume_id": "v", "boot_index": 0})
	e.must(409, "POST", "/v1/volume/targets", latest, map[string]any{"node_uuid": nid, "volume_type": "iscsi", "volume_id": "w", "boot_index": 0})
	if got := e.must(200, "GET", "/v1/nodes/vol/volume/targets", latest, nil).json(t)["targets"].([]any); len(got) != 1 {
		t.Errorf("node targets %v", got)
	}
	e.updateNode(nid, func(n *baremetal.Node) { n.PowerState = baremetal.PowerOn })
	patch := []map[string]any{{"op": "replace", "path": "/connector_id", "value": "iqn.2026-12.test:b"}}
	e.must(400, "PATCH", "/v1/volume/connectors/"+str(c, "uuid"), latest, patch)
	e.must(400, "DELETE", "/v1/volume/connectors/"+str(c, "uuid"), latest, nil)
	e.updateNode(nid, func(n *baremetal.Node) { n.PowerState = baremetal.PowerOff })
	if got := e.must(200, "PATCH", "/v1/volume/connectors/"+str(c, "uuid"), latest, patch).json(t); got["connector_id"] != "iqn.2026-12.test:b" {
		t.Errorf("patched connector %v", got)
	}
	e.must(204, "DELETE", "/v1/volume/connectors/"+str(c, "uuid"), latest, nil)
	e.must(404, "GET", "/v1/volume/connectors/"+str(c, "uuid"), latest, nil)
}

// Deploy templates (1.55): trait names, unique; schema errors are 400.
// Below 1.55 reads are 404 and writes 405, as Ironic's _route answers.
func TestDeployTemplates(t *testing.T) {
	e := newEnv(t)
	steps := []map[string]any{{"interface": "bios", "step": "apply_configuration", "args": map[string]any{}, "priority": 10}}
	const tooOld = "The API version does not allow deploy templates"
	for _, m := range []string{"POST", "PATCH", "DELETE"} {
		path := "/v1/deploy_templates"
		if m != "POST" {
			path += "/CUSTOM_A"
		}
		// webob's body: Ironic raises it in the controller's _route.
		if f := e.must(405, m, path, "1.54", map[string]any{"name": "CUSTOM_A", "steps": steps}).fault(t); fmt.Sprint(f) != "map[code:405 description:"+tooOld+" title:Method Not Allowed]" {
			t.Errorf("%s at 1.54: %v", m, f)
		}
	}
	if f := e.must(404, "GET", "/v1/deploy_templates", "1.54", nil).fault(t); fmt.Sprint(f) != "map[code:404 description:"+tooOld+" title:Not Found]" {
		t.Errorf("GET at 1.54: %v", f)
	}
	dt := e.must(201, "POST", "/v1/deploy_templates", latest, map[string]any{"name": "CUSTOM_A", "steps": steps}).json(t)
	e.must(409, "POST", "/v1/deploy_templates", latest, map[string]any{"name": "CUSTOM_A", "steps": steps})
	e.must(400, "POST", "/v1/deploy_templates", latest, map[string]any{"name": "not a trait", "steps": steps})
	e.must(400, "POST", "/v1/deploy_templates", latest, map[string]any{"name": "CUSTOM_B", "steps": []any{}})
	e.must(400, "POST", "/v1/deploy_templates", latest, map[string]any{"name": "CUSTOM_B", "steps": append(steps, steps[0])})
	if got := e.must(200, "GET", "/v1/deploy_templates/CUSTOM_A", latest, nil).json(t); got["uuid"] != dt["uuid"] || fmt.Sprint(got["steps"]) != "[map[args:map[] interface:bios priority:10 step:apply_configuration]]" {
		t.Errorf("by name %v", got)
	}
	e.must(400, "PATCH", "/v1/deploy_templates/CUSTOM_A", latest, []map[string]any{{"op": "remove", "path": "/steps"}})
	e.must(200, "PATCH", "/v1/deploy_templates/CUSTOM_A", latest, []map[string]any{{"op": "replace", "path": "/name", "value": "CUSTOM_C"}})
	e.must(204, "DELETE", "/v1/deploy_templates/CUSTOM_C", latest, nil)
	e.must(404, "GET", "/v1/deploy_templates/CUSTOM_C", latest, nil)
}

// Manual cleaning: Ironic's clean_steps schema and messages, nothing
// changed on bad input, then one call to the conductor with the steps.
func TestStates_ManualClean(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "mc"}), "uuid")
	e.setState(id, "manageable")
	step := map[string]any{"interface": "bios", "step": "factory_reset"}
	tests := []struct {
		name    string
		version string
		body    map[string]any
		status  int
		fault   string
	}{
		{"before 1.15", "1.14", map[string]any{"target": "clean", "clean_steps": []any{step}}, 406, "Request not acceptable."},
		{"no steps", latest, map[string]any{"target": "clean"}, 400, "\"clean_steps\" is required when setting target provision state to clean"},
		{"empty steps", latest, map[string]any{"target": "clean", "clean_steps": []any{}}, 400, "\"clean_steps\" is required when setting target provision state to clean"},
		{"steps not a list", latest, map[string]any{"target": "clean", "clean_steps": "erase"}, 400, "Invalid clean_steps: 'erase' is not of type 'array'"},
		{"step not an object", latest, map[string]any{"target": "clean", "clean_steps": []any{"erase"}}, 400, "Invalid clean_steps: 'erase' is not of type 'object'"},
		{"no interface", latest, map[string]any{"target": "clean", "clean_steps": []any{map[string]any{"step": "x"}}}, 400, "Invalid clean_steps: 'interface' is a required property"},
		{"no step", latest, map[string]any{"target": "clean", "clean_steps": []any{map[string]any{"interface": "deploy"}}}, 400, "Invalid clean_steps: 'step' is a required property"},
		{"unknown interface", latest, map[string]any{"target": "clean", "clean_steps": []any{map[string]any{"interface": "boot", "step": "x"}}}, 400,
			"Invalid clean_steps: 'boot' is not one of ['vendor', 'power', 'management', 'firmware', 'deploy', 'bios', 'raid']"},
		{"empty step name", latest, map[string]any{"target": "clean", "clean_steps": []any{map[string]any{"interface": "deploy", "step": ""}}}, 400, "Invalid clean_steps: '' is too short"},
		{"step not a string", latest, map[string]any{"target": "clean", "clean_steps": []any{map[string]any{"interface": "deploy", "step": 5}}}, 400, "Invalid clean_steps: 5 is not of type 'string'"},
		{"args not an object", latest, map[string]any{"target": "clean", "clean_steps": []any{map[string]any{"interface": "deploy", "step": "x", "args": []any{}}}}, 400, "Invalid clean_steps: [] is not of type 'object'"},
		{"priority not allowed", latest, map[string]any{"target": "clean", "clean_steps": []any{map[string]any{"interface": "deploy", "step": "x", "priority": 10}}}, 400,
			"Invalid clean_steps: Additional properties are not allowed ('priority' was unexpected)"},
		{"steps with another verb", latest, map[string]any{"target": "provide", "clean_steps": []any{step}}, 400, "\"clean_steps\" is only valid when setting target provision state to clean"},
	}
	for _, tc := range tests {
		r := e.do("PUT", "/v1/nodes/mc/states/provision", tc.version, tc.body)
		if r.code != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, r.code, tc.status, r.body)
			continue
		}
		if f := r.fault(t); f["faultstring"] != tc.fault {
			t.Errorf("%s: fault %q, want %q", tc.name, f["faultstring"], tc.fault)
		}
	}
	if n, _ := e.store.GetNode(t.Context(), id); n.ProvisionState != "manageable" {
		t.Errorf("bad input changed the node to %s", n.ProvisionState)
	}
	if calls := e.cond.Calls(); len(calls) != 0 {
		t.Errorf("bad input reached the conductor: %v", calls)
	}
	e.must(202, "PUT", "/v1/nodes/mc/states/provision", "1.15", map[string]any{"target": "clean",
		"clean_steps": []any{map[string]any{"interface": "bios", "step": "apply_configuration", "args": map[string]any{"settings": []any{}}}}})
	want := []string{"clean " + id + " [{'interface': 'bios', 'step': 'apply_configuration', 'args': {'settings': []}}]"}
	if d := cmp.Diff(want, e.cond.Calls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
}

// Servicing's arguments as Ironic checks them, disable_ramdisk's versions
// per verb (1.70 clean, 1.108 service), and abort in wait call-back
// (1.110). Bad input changes nothing and never reaches the conductor.
func TestStates_ServiceArguments(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "sv"}), "uuid")
	step := map[string]any{"interface": "vendor", "step": "log_passthrough"}
	service := func(extra map[string]any) map[string]any {
		b := map[string]any{"target": "service", "service_steps": []any{step}}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	tests := []struct {
		name    string
		state   string
		version string
		body    map[string]any
		status  int
		fault   string
	}{
		{"no steps", "active", maxVersionString, map[string]any{"target": "service"}, 400, "\"service_steps\" is required when setting target provision state to service"},
		{"empty steps", "active", maxVersionString, map[string]any{"target": "service", "service_steps": []any{}}, 400, "\"service_steps\" is required when setting target provision state to service"},
		{"steps not a list", "active", maxVersionString, map[string]any{"target": "service", "service_steps": "x"}, 400, "Invalid service_steps: 'x' is not of type 'array'"},
		{"unknown interface", "active", maxVersionString, map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "network", "step": "x"}}}, 400,
			"Invalid service_steps: 'network' is not one of ['vendor', 'power', 'management', 'firmware', 'deploy', 'bios', 'raid']"},
		{"no step", "active", maxVersionString, map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "vendor"}}}, 400, "Invalid service_steps: 'step' is a required property"},
		{"bad order", "active", maxVersionString, map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "vendor", "step": "x", "order": "first"}}}, 400,
			"Invalid service_steps: 'first' is not valid under any of the given schemas"},
		{"negative order", "active", maxVersionString, map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "vendor", "step": "x", "order": -1}}}, 400,
			"Invalid service_steps: -1 is not valid under any of the given schemas"},
		{"bad execute_on_child_nodes", "active", maxVersionString, map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "vendor", "step": "x", "execute_on_child_nodes": "yes"}}}, 400,
			"Invalid service_steps: 'yes' is not of type 'boolean'"},
		{"bad child node", "active", maxVersionString, map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "vendor", "step": "x", "execute_on_child_nodes": true, "limit_child_node_execution": []any{"n1"}}}}, 400,
			"Invalid entry detected for execute_on_child_node parameter in step 'n1'."},
		{"priority not allowed", "active", maxVersionString, map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "vendor", "step": "x", "priority": 1}}}, 400,
			"Invalid service_steps: Additional properties are not allowed ('priority' was unexpected)"},
		{"clean_steps with service", "active", maxVersionString, map[string]any{"target": "service", "service_steps": []any{step}, "clean_steps": []any{step}}, 400,
			"\"clean_steps\" is only valid when setting target provision state to clean"},
		{"service_steps with clean", "manageable", maxVersionString, map[string]any{"target": "clean", "clean_steps": []any{step}, "service_steps": []any{step}}, 400,
			"\"service_steps\" is only valid when setting target provision state to service"},
		{"service before 1.87", "active", "1.86", service(nil), 406, "Request not acceptable."},
		{"service from manageable", "manageable", maxVersionString, service(nil), 400, "The requested action \"service\" can not be performed on node \"" + id + "\" while it is in state \"manageable\"."},
		{"disable_ramdisk before 1.108", "active", "1.107", service(map[string]any{"disable_ramdisk": true}), 406, "disable_ramdisk is not acceptable in this API version"},
		{"disable_ramdisk not a boolean", "active", maxVersionString, service(map[string]any{"disable_ramdisk": "maybe"}), 400,
			"Invalid disable_ramdisk: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"},
		{"clean disable_ramdisk before 1.70", "manageable", "1.69", map[string]any{"target": "clean", "clean_steps": []any{step}, "disable_ramdisk": true}, 406,
			"disable_ramdisk is not acceptable in this API version"},
		{"disable_ramdisk with provide", "manageable", maxVersionString, map[string]any{"target": "provide", "disable_ramdisk": false}, 400,
			"disable_ramdisk is supported only with manual cleaning or servicing"},
		{"abort in wait call-back before 1.110", "wait call-back", "1.109", map[string]any{"target": "abort"}, 406, "Request not acceptable."},
		{"unhold before 1.85", "service hold", "1.84", map[string]any{"target": "unhold"}, 406, "Request not acceptable."},
		{"unhold in service wait", "service wait", maxVersionString, map[string]any{"target": "unhold"}, 400,
			"The requested action \"unhold\" can not be performed on node \"" + id + "\" while it is in state \"service wait\"."},
	}
	for _, tc := range tests {
		e.setState(id, tc.state)
		r := e.do("PUT", "/v1/nodes/sv/states/provision", tc.version, tc.body)
		if r.code != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, r.code, tc.status, r.body)
			continue
		}
		if f := r.fault(t); f["faultstring"] != tc.fault {
			t.Errorf("%s: fault %q, want %q", tc.name, f["faultstring"], tc.fault)
		}
		if n, _ := e.store.GetNode(t.Context(), id); n.ProvisionState != tc.state {
			t.Errorf("%s: bad input changed the node to %s", tc.name, n.ProvisionState)
		}
	}
	if calls := e.cond.Calls(); len(calls) != 0 {
		t.Errorf("bad input reached the conductor: %v", calls)
	}

	e.setState(id, "active")
	e.must(202, "PUT", "/v1/nodes/sv/states/provision", "1.108", service(map[string]any{"disable_ramdisk": "yes"}))
	e.setState(id, "service failed")
	// A step for child nodes is dropped, as Ironic's conductor drops it.
	e.must(202, "PUT", "/v1/nodes/sv/states/provision", "1.87", map[string]any{"target": "service", "service_steps": []any{
		map[string]any{"interface": "power", "step": "reboot", "order": "2", "args": map[string]any{}},
		map[string]any{"interface": "power", "step": "power_on", "order": 3},
		map[string]any{"interface": "vendor", "step": "x", "execute_on_child_nodes": true}}})
	// An empty list is no argument, as Ironic tests it for truth.
	e.setState(id, "manageable")
	e.must(202, "PUT", "/v1/nodes/sv/states/provision", "1.87", map[string]any{"target": "provide", "service_steps": []any{}, "clean_steps": []any{}})
	e.setState(id, "wait call-back")
	e.must(202, "PUT", "/v1/nodes/sv/states/provision", "1.110", map[string]any{"target": "abort"})
	if n, _ := e.store.GetNode(t.Context(), id); n.ProvisionState != "deploy failed" {
		t.Errorf("after abort in wait call-back: %s", n.ProvisionState)
	}
	want := []string{
		"service " + id + " [{'interface': 'vendor', 'step': 'log_passthrough'}] disable_ramdisk=true",
		"service " + id + " [{'interface': 'power', 'step': 'reboot', 'args': {}} {'interface': 'power', 'step': 'power_on'}] disable_ramdisk=false",
		"provision " + id + " provide",
		"provision " + id + " abort",
	}
	if d := cmp.Diff(want, e.cond.Calls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
}

// deploy_steps as Ironic checks them: a list (args.types), from 1.69,
// with active or rebuild only, each step under DEPLOY_STEP_SCHEMA. Bad
// input changes nothing and never reaches the conductor; good steps reach
// it with a priority of digits as its number.
func TestStates_DeployStepsArguments(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "ds"}), "uuid")
	e.setState(id, "available")
	step := map[string]any{"interface": "deploy", "step": "hold", "args": map[string]any{}, "priority": "50"}
	tests := []struct {
		name    string
		version string
		body    map[string]any
		status  int
		fault   string
	}{
		{"not a list", latest, map[string]any{"target": "active", "deploy_steps": map[string]any{}}, 400,
			"Expected types <class 'NoneType'>, <class 'list'> for deploy_steps: {}"},
		{"before 1.69", "1.68", map[string]any{"target": "active", "deploy_steps": []any{step}}, 406,
			"Request not acceptable. The minimal required API version should be 1.69"},
		{"with deploy", latest, map[string]any{"target": "deploy", "deploy_steps": []any{step}}, 400,
			"\"deploy_steps\" is only valid when setting target provision state to active or rebuild"},
		{"with another verb", latest, map[string]any{"target": "manage", "deploy_steps": []any{step}}, 400,
			"\"deploy_steps\" is only valid when setting target provision state to active or rebuild"},
		{"step not an object", latest, map[string]any{"target": "active", "deploy_steps": []any{"hold"}}, 400,
			"Invalid deploy_steps: 'hold' is not of type 'object'"},
		{"unexpected key", latest, map[string]any{"target": "active", "deploy_steps": []any{
			map[string]any{"interface": "deploy", "step": "hold", "args": map[string]any{}, "priority": 1, "order": 1}}}, 400,
			"Invalid deploy_steps: Additional properties are not allowed ('order' was unexpected)"},
		{"bad priority", latest, map[string]any{"target": "active", "deploy_steps": []any{
			map[string]any{"interface": "deploy", "step": "hold", "args": map[string]any{}, "priority": "high"}}}, 400,
			"Invalid deploy_steps: 'high' is not valid under any of the given schemas"},
	}
	for _, tc := range tests {
		r := e.do("PUT", "/v1/nodes/ds/states/provision", tc.version, tc.body)
		if r.code != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, r.code, tc.status, r.body)
			continue
		}
		if f := r.fault(t); f["faultstring"] != tc.fault {
			t.Errorf("%s: fault %q, want %q", tc.name, f["faultstring"], tc.fault)
		}
	}
	if n, _ := e.store.GetNode(t.Context(), id); n.ProvisionState != "available" {
		t.Errorf("bad input changed the node to %s", n.ProvisionState)
	}
	if calls := e.cond.Calls(); len(calls) != 0 {
		t.Errorf("bad input reached the conductor: %v", calls)
	}
	// Empty deploy_steps are none, at any version.
	e.must(202, "PUT", "/v1/nodes/ds/states/provision", "1.68", map[string]any{"target": "active", "deploy_steps": []any{}})
	e.must(202, "PUT", "/v1/nodes/ds/states/provision", latest, map[string]any{"target": "rebuild", "deploy_steps": []any{step}})
	want := []string{"provision " + id + " active", "deploy steps " + id + " [{deploy hold map[] 50}]", "provision " + id + " rebuild"}
	if d := cmp.Diff(want, e.cond.Calls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
}
