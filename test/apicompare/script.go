package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The script: fixtures first (with UUIDs the script chooses, so that lists
// sorted by UUID are the same on both servers), then every kind of
// request. Everything is deterministic: no map is iterated to build steps,
// asynchronous work (provision and power actions, allocations) is waited
// for before the next request, and an allocation has one candidate only.

// id is a UUID the script chooses: kind is one hex digit per resource.
func id(kind byte, i int) string { return fmt.Sprintf("%c0000000-0000-4000-8000-%012d", kind, i) }

var chosenRE = regexp.MustCompile(`(?i)^[0-9a-f]0000000-0000-4000-8000-[0-9]{12}$`)

// chosenUUID reports whether the script chose u (it is then shown as is).
func chosenUUID(u string) bool { return chosenRE.MatchString(u) }

func nodeID(i int) string       { return id('a', i) }
func portID(i int) string       { return id('b', i) }
func chassisID(i int) string    { return id('c', i) }
func pgID(i int) string         { return id('d', i) }
func connID(i int) string       { return id('e', i) }
func targetID(i int) string     { return id('f', i) }
func templateID(i int) string   { return id('9', i) }
func allocID(i int) string      { return id('8', i) }
func instanceID(i int) string   { return id('7', i) }
func scratchID(i int) string    { return id('6', i) }
func runbookID(i int) string    { return id('4', i) }
func minorVersion(m int) string { return "1." + strconv.Itoa(m) }

// everyVersion is no header, 1.1 to 1.115, one above the maximum and latest.
var everyVersion = func() []string {
	v := []string{""}
	for m := 1; m <= 115; m++ {
		v = append(v, minorVersion(m))
	}
	return append(v, "1.116", "latest")
}()

// someVersions are the versions where most gates are.
var someVersions = []string{"", "1.1", "1.4", "1.5", "1.8", "1.10", "1.20", "1.31", "1.37", "1.43",
	"1.49", "1.52", "1.58", "1.65", "1.75", "1.81", "1.82", "1.96", "latest"}

// badVersions are header values that are not a version ferro serves.
var badVersions = []string{"1.0", "2.0", "1", "abc", "1.82.1", "0.9", " 1.5 ", "LATEST", "1.x", "1.-1", "1.083", "99.1", ""}

// script builds the steps.
type script struct {
	steps  []step
	allocs int // allocations made by allocations()
}

func (s *script) add(st step) { s.steps = append(s.steps, st) }

// do adds a request.
func (s *script) do(method, path, version, body string) {
	s.add(step{method: method, path: path, version: version, body: body})
}

// setup adds a request later steps depend on.
func (s *script) setup(method, path, version, body string) {
	s.add(step{method: method, path: path, version: version, body: body, setup: true})
}

// create adds a POST that may succeed and the DELETE of what it made.
func (s *script) create(path, version, body string) {
	s.add(step{method: "POST", path: path, version: version, body: body,
		capture: map[string]func(answer) string{"new": jsonField("uuid")}})
	s.do("DELETE", path+"/{new}", "latest", "")
}

// get adds a GET at each version.
func (s *script) get(path string, versions ...string) {
	for _, v := range versions {
		s.do("GET", path, v, "")
	}
}

// transient are the states a node passes through on its own.
var transient = []string{"verifying", "inspecting", "cleaning", "deploying", "deleting",
	"rescuing", "unrescuing", "adopting", "servicing"}

// waitingForUser are the states that keep a target provision state (as
// Ironic's) while nothing happens until someone acts: failures, holds and
// the waits no agent ends here.
var waitingForUser = []string{"clean failed", "deploy failed", "service failed", "clean hold", "deploy hold",
	"service hold", "clean wait", "service wait", "wait call-back"}

// waitNode waits until the node is at rest: no target state (unless it
// waits for a user), no lock.
func (s *script) waitNode(node string) {
	s.add(step{method: "GET", path: "/v1/nodes/" + node, version: "latest", setup: true, note: "(wait)",
		until: func(a answer) bool {
			if a.status != 200 {
				return true
			}
			st, _ := jsonAt(a.body, "provision_state")
			name, _ := st.(string)
			for _, k := range []string{"target_provision_state", "target_power_state", "reservation"} {
				if v, _ := jsonAt(a.body, k); v != nil && (k != "target_provision_state" || !slices.Contains(waitingForUser, name)) {
					return false
				}
			}
			for _, t := range transient {
				if st == t {
					return false
				}
			}
			return true
		}})
}

// waitAllocation waits until the allocation is no longer allocating.
func (s *script) waitAllocation(ident string) {
	s.add(step{method: "GET", path: "/v1/allocations/" + ident, version: "latest", setup: true, note: "(wait)",
		until: func(a answer) bool {
			st, _ := jsonAt(a.body, "state")
			return a.status != 200 || st != "allocating"
		}})
}

// provision adds a provision verb at version and waits for the node.
func (s *script) provision(node, version, target, extra string) {
	body := `{"target": ` + js(target) + extra + `}`
	s.do("PUT", "/v1/nodes/"+node+"/states/provision", version, body)
	s.waitNode(node)
}

// power adds a power verb at version and waits for the node.
func (s *script) power(node, version, body string) {
	s.do("PUT", "/v1/nodes/"+node+"/states/power", version, body)
	s.waitNode(node)
}

// js is v as JSON (map keys sorted).
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

type obj = map[string]any

// fakeInterfaces are every interface of fake-hardware set to fake.
func fakeInterfaces(n obj) obj {
	for _, k := range []string{"bios", "boot", "console", "deploy", "inspect", "management", "power",
		"raid", "rescue", "storage", "vendor"} {
		n[k+"_interface"] = "fake"
	}
	return n
}

func buildScript() []step {
	s := &script{}
	s.fixtures()
	s.versionSweep()
	s.nodeFilters()
	s.otherFilters()
	s.sortKeys()
	s.fieldsParam()
	s.paging()
	s.identifiers()
	s.unknownArgs()
	s.methods()
	s.jsonSuffix()
	s.badCreates()
	s.precedence()
	s.patches()
	s.nodeActions()
	s.powerVerbs()
	s.provisionVerbs()
	s.allocations()
	s.deletes()
	s.finalState()
	return s.steps
}

// Fixture names.
var (
	n1, n2, n3, n4, n5, n6 = nodeID(1), nodeID(2), nodeID(3), nodeID(4), nodeID(5), nodeID(6)
	n7, n8, n9, n10, n11   = nodeID(7), nodeID(8), nodeID(9), nodeID(10), nodeID(11)
	bulkNodes              = 20
)

func bulkID(i int) string { return nodeID(100 + i) }

func (s *script) fixtures() {
	s.add(step{method: "GET", path: "/v1/conductors", version: "latest", setup: true,
		capture: map[string]func(answer) string{"host": jsonField("conductors", "0", "hostname")}})

	s.setup("POST", "/v1/chassis", "latest", js(obj{"uuid": chassisID(1), "description": "rack one", "extra": obj{"row": "a"}}))
	s.setup("POST", "/v1/chassis", "latest", js(obj{"uuid": chassisID(2)}))

	s.setup("POST", "/v1/nodes", "latest", js(fakeInterfaces(obj{
		"uuid": n1, "name": "node-1", "driver": "fake-hardware", "resource_class": "gold",
		"owner": "proj-a", "lessee": "proj-b", "shard": "s1", "description": "first node",
		"chassis_uuid": chassisID(1), "automated_clean": true, "network_data": obj{"links": []any{}},
		"properties": obj{"cpus": 8, "memory_mb": 16384, "local_gb": 100, "cpu_arch": "x86_64",
			"capabilities": "boot_mode:uefi", "ratio": 1.5, "big": 12345678901234567890.0},
		"driver_info": obj{"ipmi_address": "10.0.0.1", "ipmi_username": "admin", "ipmi_password": "s3cret",
			"deploy_kernel": "http://x/k", "snmp_community": "public", "nested": obj{"token": "t", "list": []any{"a", 1}},
			"cmd": "--password hunter2", "ipmi_kg_key": "kg"},
		"instance_info": obj{"image_source": "http://x/img", "image_url": "http://secret", "configdrive": "cd"},
		"extra":         obj{"rack": "r1", "unicode": "üñí€ 𝄞", "ctl": "a\tb\nc\u0001\u2028", "html": "<a>&amp;</a>", "list": []any{1, 2.5, "three", nil, true}},
	})))
	s.setup("POST", "/v1/nodes", "latest", js(fakeInterfaces(obj{
		"uuid": n2, "name": "node-2", "driver": "fake-hardware", "resource_class": "gold",
		"owner": "proj-b", "shard": "s2", "chassis_uuid": chassisID(1)})))
	s.setup("POST", "/v1/nodes", "latest", js(fakeInterfaces(obj{
		"uuid": n3, "name": "node-3", "driver": "fake-hardware", "resource_class": "silver",
		"owner": "proj-a", "description": "third one", "chassis_uuid": chassisID(2), "maintenance": true})))
	s.setup("POST", "/v1/nodes", "latest", js(obj{
		"uuid": n4, "name": "ipmi-node", "driver": "ipmi", "resource_class": "bronze",
		"driver_info": obj{"ipmi_address": "192.0.2.10", "ipmi_username": "u", "ipmi_password": "p"}}))
	s.setup("POST", "/v1/nodes", "latest", js(obj{
		"uuid": n5, "name": "redfish-node", "driver": "redfish",
		"driver_info": obj{"redfish_address": "https://192.0.2.20", "redfish_username": "u", "redfish_password": "p"}}))
	s.setup("POST", "/v1/nodes", "latest", js(obj{
		"uuid": n6, "name": "grouped", "driver": "fake-hardware", "conductor_group": "Group-A", "retired": true,
		"retired_reason": "old"}))
	s.setup("POST", "/v1/nodes", "latest", js(fakeInterfaces(obj{
		"uuid": n7, "name": "node-7", "driver": "fake-hardware", "resource_class": "alloc", "boot_mode": "uefi"})))
	s.setup("POST", "/v1/nodes", "latest", js(fakeInterfaces(obj{
		"uuid": n8, "name": "node-8", "driver": "fake-hardware", "resource_class": "backfill"})))
	s.setup("POST", "/v1/nodes", "latest", js(fakeInterfaces(obj{
		"uuid": n9, "name": "cycle", "driver": "fake-hardware", "resource_class": "cycle"})))
	s.setup("POST", "/v1/nodes", "latest", js(fakeInterfaces(obj{
		"uuid": n10, "name": "with-instance", "driver": "fake-hardware", "instance_uuid": instanceID(1)})))
	// A node created at 1.1 starts available, not enroll.
	s.setup("POST", "/v1/nodes", "", js(obj{"uuid": n11, "driver": "fake-hardware"}))
	for i := range bulkNodes {
		n := fakeInterfaces(obj{"uuid": bulkID(i), "name": fmt.Sprintf("bulk-%02d", i), "driver": "fake-hardware",
			"resource_class": []string{"gold", "silver", "bronze"}[i%3], "owner": []string{"proj-a", "proj-b", ""}[i%3],
			"description": fmt.Sprintf("bulk node %d", i), "extra": obj{"i": i}})
		if i%4 == 0 {
			n["maintenance"] = true
		}
		if i%5 == 0 {
			n["shard"] = "s" + strconv.Itoa(i%2+1)
		}
		if i%7 == 0 {
			n["lessee"] = "proj-c"
		}
		s.setup("POST", "/v1/nodes", "latest", js(n))
	}
	// Resources of a node change only while it is powered off.
	for _, n := range []string{n1, n2} {
		s.power(n, "latest", `{"target": "power off"}`)
	}
	s.setup("POST", "/v1/portgroups", "latest", js(obj{"uuid": pgID(1), "name": "pg-one", "node_uuid": n1,
		"address": "52:54:00:00:01:01", "mode": "802.3ad", "properties": obj{"miimon": "100"},
		"standalone_ports_supported": false, "extra": obj{"vif_port_id": "vif-pg"}}))
	s.setup("POST", "/v1/portgroups", "latest", js(obj{"uuid": pgID(2), "name": "pg-two", "node_uuid": n2}))
	s.setup("POST", "/v1/ports", "latest", js(obj{"uuid": portID(1), "address": "52:54:00:00:00:01", "node_uuid": n1,
		"pxe_enabled": true, "physical_network": "physnet1",
		"local_link_connection": obj{"switch_id": "AA:BB:CC:DD:EE:FF", "port_id": "Eth1", "switch_info": "sw1"}}))
	s.setup("POST", "/v1/ports", "latest", js(obj{"uuid": portID(2), "address": "52:54:00:00:00:02", "node_uuid": n1,
		"portgroup_uuid": pgID(1), "pxe_enabled": false}))
	s.setup("POST", "/v1/ports", "latest", js(obj{"uuid": portID(3), "address": "52:54:00:00:00:03", "node_uuid": n2,
		"extra": obj{"vif_port_id": "vif-3"}}))
	s.setup("POST", "/v1/ports", "latest", js(obj{"uuid": portID(4), "address": "52:54:00:00:00:04", "node_uuid": n3,
		"is_smartnic": true, "local_link_connection": obj{"port_id": "rep0", "hostname": "host-4"}}))
	s.setup("POST", "/v1/ports", "latest", js(obj{"uuid": portID(5), "address": "52:54:00:00:00:05", "node_uuid": n7}))
	s.setup("POST", "/v1/ports", "1.18", js(obj{"uuid": portID(6), "address": "52:54:00:00:00:06", "node_uuid": n1,
		"extra": obj{"vif_port_id": "vif-6"}}))
	s.setup("POST", "/v1/volume/connectors", "latest", js(obj{"uuid": connID(1), "node_uuid": n1, "type": "iqn",
		"connector_id": "iqn.2010-10.org.openstack:node1"}))
	s.setup("POST", "/v1/volume/connectors", "latest", js(obj{"uuid": connID(2), "node_uuid": n2, "type": "wwpn",
		"connector_id": "wwpn:1", "extra": obj{"x": 1}}))
	s.setup("POST", "/v1/volume/targets", "latest", js(obj{"uuid": targetID(1), "node_uuid": n1, "volume_type": "iscsi",
		"volume_id": "vol-1", "boot_index": 0, "properties": obj{"target_iqn": "iqn.x"}}))
	s.setup("POST", "/v1/volume/targets", "latest", js(obj{"uuid": targetID(2), "node_uuid": n1, "volume_type": "iscsi",
		"volume_id": "vol-2", "boot_index": 1}))
	s.setup("POST", "/v1/deploy_templates", "latest", js(obj{"uuid": templateID(1), "name": "CUSTOM_DT_ONE",
		"steps": []any{obj{"interface": "deploy", "step": "write_image", "args": obj{}, "priority": 80}}}))
	s.setup("POST", "/v1/deploy_templates", "latest", js(obj{"uuid": templateID(2), "name": "CUSTOM_DT_TWO",
		"description": "two", "extra": obj{"k": "v"},
		"steps": []any{obj{"interface": "bios", "step": "apply_configuration", "args": obj{"settings": []any{obj{"name": "a", "value": "b"}}}, "priority": "10"}}}))
	s.setup("POST", "/v1/runbooks", "1.92", js(obj{"uuid": runbookID(1), "name": "CUSTOM_A",
		"steps": []any{obj{"interface": "bios", "step": "apply_configuration", "args": obj{"settings": []any{}}, "order": 1}}}))
	s.setup("POST", "/v1/runbooks", "latest", js(obj{"uuid": runbookID(2), "name": "rb-two", "description": "two",
		"disable_ramdisk": true, "extra": obj{"k": "v"},
		"steps": []any{obj{"interface": "deploy", "step": "erase_devices", "args": obj{"password": "x"}, "order": "2"}}}))
	s.setup("PUT", "/v1/runbooks/rb-two/traits", "latest", `{"traits": ["CUSTOM_B", "CUSTOM_Z"]}`)
	s.setup("PUT", "/v1/nodes/"+n1+"/traits", "latest", `{"traits": ["CUSTOM_B", "CUSTOM_A", "HW_CPU_X86_VMX"]}`)
	s.setup("PUT", "/v1/nodes/"+n1+"/maintenance", "latest", `{"reason": "looking"}`)
	s.setup("DELETE", "/v1/nodes/"+n1+"/maintenance", "latest", "")

	// n7 available for an allocation, n8 active for a backfill.
	for _, n := range []string{n7, n8} {
		s.provision(n, "latest", "manage", "")
		s.provision(n, "latest", "provide", "")
	}
	s.provision(n8, "latest", "deploy", "")
	s.setup("POST", "/v1/allocations", "latest", js(obj{"uuid": allocID(1), "name": "alloc-one", "resource_class": "alloc",
		"candidate_nodes": []any{n7}, "extra": obj{"a": 1}}))
	s.waitAllocation(allocID(1))
	s.setup("POST", "/v1/allocations", "latest", js(obj{"uuid": allocID(2), "name": "alloc-fail", "resource_class": "nomatch",
		"owner": "proj-a", "traits": []any{"CUSTOM_X"}}))
	s.waitAllocation(allocID(2))
	s.setup("POST", "/v1/allocations", "latest", js(obj{"uuid": allocID(3), "node": n8}))
	s.waitAllocation(allocID(3))
	s.provision(n9, "latest", "manage", "")
	s.provision(n9, "latest", "inspect", "")
}

// versionSweep reads every resource at every version.
func (s *script) versionSweep() {
	paths := []string{
		"/", "/v1", "/v1/", "/nodes", "/v1/nodes", "/v1/nodes/", "/v1/nodes/detail", "/v1/nodes/" + n1, "/v1/nodes/node-1",
		"/v1/ports", "/v1/ports/detail", "/v1/ports/" + portID(1),
		"/v1/portgroups", "/v1/portgroups/detail", "/v1/portgroups/" + pgID(1), "/v1/portgroups/pg-one",
		"/v1/portgroups/" + pgID(1) + "/ports", "/v1/portgroups/pg-one/ports/detail",
		"/v1/chassis", "/v1/chassis/detail", "/v1/chassis/" + chassisID(1), "/v1/chassis/" + chassisID(1) + "/nodes",
		"/v1/chassis/" + chassisID(1) + "/nodes/detail",
		"/v1/allocations", "/v1/allocations/" + allocID(1), "/v1/allocations/alloc-one",
		"/v1/deploy_templates", "/v1/deploy_templates/detail", "/v1/deploy_templates/" + templateID(1),
		"/v1/deploy_templates/CUSTOM_DT_ONE",
		"/v1/runbooks", "/v1/runbooks/detail", "/v1/runbooks/" + runbookID(1), "/v1/runbooks/rb-two",
		"/v1/runbooks/rb-two/traits", "/v1/runbooks?detail=true", "/v1/runbooks?fields=uuid,description,traits",
		"/v1/volume", "/v1/volume/connectors", "/v1/volume/connectors/detail", "/v1/volume/connectors/" + connID(1),
		"/v1/volume/targets", "/v1/volume/targets/detail", "/v1/volume/targets/" + targetID(1),
		"/v1/conductors", "/v1/conductors/{host}", "/v1/drivers", "/v1/drivers/fake-hardware", "/v1/drivers/ipmi",
		"/v1/drivers/fake-hardware/properties", "/v1/drivers/redfish/properties",
		"/v1/drivers/ipmi/raid/logical_disk_properties", "/v1/shards",
		"/v1/nodes/validate?node=" + n1, "/v1/nodes/validate?node=node-1",
	}
	for _, sub := range []string{"ports", "ports/detail", "portgroups", "portgroups/detail", "volume",
		"volume/connectors", "volume/targets/detail", "states", "validate", "traits", "bios", "bios/foo", "vifs",
		"history", "inventory", "management/boot_device", "management/boot_device/supported", "states/console",
		"children", "firmware", "firmware?fields=component,vendor", "firmware?detail=true"} {
		paths = append(paths, "/v1/nodes/"+n1+"/"+sub)
	}
	paths = append(paths, "/v1/nodes/"+n7+"/allocation", "/v1/nodes/node-8/allocation", "/v1/nodes/"+n8,
		"/v1/nodes/"+n11, "/v1/nodes/"+n9+"/states", "/v1/nodes/"+n6)
	for _, p := range paths {
		s.get(p, everyVersion...)
	}
	for _, v := range badVersions {
		s.get("/v1/nodes", v)
		s.get("/", v)
	}
	for _, hv := range []string{"baremetal 1.50", "baremetal latest", "compute 1.2", "baremetal 1.99", "baremetal", "baremetal 1.3, compute 2.1"} {
		s.add(step{method: "GET", path: "/v1/nodes/" + n1, header: map[string]string{"OpenStack-API-Version": hv}})
	}
	s.add(step{method: "GET", path: "/v1/nodes/" + n1, version: "1.20", header: map[string]string{"OpenStack-API-Version": "baremetal 1.60"}})
}

// nodeFilter is a node list filter and the versions around its gate.
type nodeFilter struct {
	name     string
	values   []string
	versions []string
}

func (s *script) nodeFilters() {
	filters := []nodeFilter{
		{"provision_state", []string{"enroll", "available", "manageable", "active", "inspect wait", "bogus", ""}, []string{"1.8", "1.9", "latest"}},
		{"driver", []string{"fake-hardware", "ipmi", "nope", ""}, []string{"1.15", "1.16", "latest"}},
		{"resource_class", []string{"gold", "silver", "nope", ""}, []string{"1.20", "1.21", "latest"}},
		{"fault", []string{"power failure", "clean failure", "bogus", ""}, []string{"1.41", "1.42", "latest"}},
		{"conductor_group", []string{"", "group-a", "GROUP-A", "bad group!"}, []string{"1.45", "1.46", "latest"}},
		{"conductor", []string{"{host}", "nope", ""}, []string{"1.48", "1.49", "latest"}},
		{"owner", []string{"proj-a", "proj-b", ""}, []string{"1.49", "1.50", "latest"}},
		{"lessee", []string{"proj-b", "proj-c", ""}, []string{"1.64", "1.65", "latest"}},
		{"project", []string{"proj-a", "proj-b", "proj-c"}, []string{"1.64", "1.65", "latest"}},
		{"shard", []string{"s1", "s1,s2", "S1", "", ",", "nope"}, []string{"1.81", "1.82", "latest"}},
		{"sharded", []string{"true", "false", "bogus", "1", ""}, []string{"1.81", "1.82", "latest"}},
		{"parent_node", []string{n1, "node-1", "nope", ""}, []string{"1.82", "1.83", "latest"}},
		{"include_children", []string{"true", "false", "bogus", ""}, []string{"1.82", "1.83", "latest"}},
		{"instance_name", []string{"web", "nope", ""}, []string{"1.103", "1.104", "latest"}},
		{"instance_uuid", []string{instanceID(1), "bogus", scratchID(99), ""}, []string{"", "latest"}},
		{"chassis_uuid", []string{chassisID(1), chassisID(2), "bogus", scratchID(99)}, []string{"", "latest"}},
		{"associated", []string{"true", "false", "True", "bogus", ""}, []string{"", "latest"}},
		{"maintenance", []string{"true", "false", "yes", "bogus"}, []string{"", "latest"}},
		{"retired", []string{"true", "false", "bogus"}, []string{"", "1.60", "1.61", "latest"}},
		{"description_contains", []string{"first", "node", "", "NODE"}, []string{"", "1.50", "1.51", "latest"}},
	}
	for _, f := range filters {
		for _, v := range f.versions {
			for _, val := range f.values {
				q := f.name + "=" + queryEscape(val)
				s.get("/v1/nodes?"+q, v)
				s.get("/v1/nodes/detail?"+q, v)
				s.get("/v1/nodes?"+q+"&limit=2", v)
			}
		}
	}
	combos := []string{
		"owner=proj-a&resource_class=gold", "maintenance=true&provision_state=enroll", "associated=false&driver=fake-hardware",
		"project=proj-a&owner=proj-b", "shard=s1&sharded=false", "conductor_group=&conductor={host}",
		"chassis_uuid=" + chassisID(1) + "&description_contains=node", "resource_class=gold&fields=uuid,resource_class",
		"owner=proj-a&detail=true", "lessee=proj-c&limit=1&sort_key=name", "maintenance=true&sort_dir=desc&limit=3",
		"provision_state=enroll&provision_state=active", "driver=fake-hardware&driver=ipmi",
	}
	for _, q := range combos {
		s.get("/v1/nodes?"+q, "latest", "1.50")
		s.get("/v1/chassis/"+chassisID(1)+"/nodes?"+q, "latest")
	}
	s.get("/v1/chassis/"+chassisID(1)+"/nodes?chassis_uuid="+chassisID(2), "latest")
	s.get("/v1/chassis/bogus/nodes", "latest")
	s.get("/v1/chassis/"+scratchID(1)+"/nodes", "latest")
}

// queryEscape escapes a query value, keeping the commas of a list.
func queryEscape(v string) string {
	r := strings.NewReplacer(" ", "%20", "&", "%26", "!", "%21", "#", "%23", "+", "%2B")
	return r.Replace(v)
}

func (s *script) otherFilters() {
	for _, v := range []string{"", "1.23", "1.24", "1.33", "1.34", "1.52", "1.53", "latest"} {
		for _, q := range []string{
			"node=" + n1, "node=node-1", "node=nope", "node_uuid=" + n1, "node_uuid=node-1", "node_uuid=" + scratchID(1),
			"address=52:54:00:00:00:01", "address=52-54-00-00-00-03", "address=52:54:00:00:00:99", "address=bogus",
			"portgroup=" + pgID(1), "portgroup=pg-one", "portgroup=nope", "node=" + n1 + "&portgroup=" + pgID(1),
			"node=" + n1 + "&address=52:54:00:00:00:02", "node_uuid=" + n1 + "&node=" + n2, "detail=true&node=" + n1,
			"fields=uuid,address,pxe_enabled", "fields=physical_network", "fields=is_smartnic&node=" + n3,
		} {
			s.get("/v1/ports?"+q, v)
			s.get("/v1/ports/detail?"+q, v)
		}
		for _, q := range []string{"node=" + n1, "node=" + n2, "address=52:54:00:00:00:01"} {
			s.get("/v1/nodes/"+n1+"/ports?"+q, v)
			s.get("/v1/portgroups/"+pgID(1)+"/ports?"+q, v)
		}
	}
	for _, v := range []string{"", "1.23", "1.24", "1.25", "1.26", "latest"} {
		for _, q := range []string{"node=" + n1, "node=node-2", "node=nope", "address=52:54:00:00:01:01", "address=bad",
			"address=52:54:00:00:01:99", "node=" + n1 + "&address=52:54:00:00:01:99", "fields=mode,properties", "detail=true"} {
			s.get("/v1/portgroups?"+q, v)
			s.get("/v1/portgroups/detail?"+q, v)
			s.get("/v1/nodes/"+n2+"/portgroups?"+q, v)
		}
	}
	for _, v := range []string{"1.51", "1.52", "1.59", "1.60", "latest"} {
		for _, q := range []string{"node=" + n7, "node=node-7", "node=nope", "node=" + scratchID(1), "resource_class=alloc",
			"resource_class=nomatch", "state=active", "state=error", "state=bogus", "owner=proj-a", "owner=",
			"node=" + n7 + "&state=error", "fields=uuid,state,owner", "fields=owner", "detail=true"} {
			s.get("/v1/allocations?"+q, v)
		}
	}
	for _, v := range []string{"1.31", "1.32", "latest"} {
		for _, q := range []string{"node=" + n1, "node=node-2", "node=nope", "node=" + n1 + "&detail=true", "fields=uuid,type"} {
			s.get("/v1/volume/connectors?"+q, v)
			s.get("/v1/volume/targets?"+q, v)
			s.get("/v1/nodes/"+n1+"/volume/connectors?"+q, v)
			s.get("/v1/nodes/"+n1+"/volume/targets?"+q, v)
		}
	}
	for _, q := range []string{"detail=true", "detail=false", "type=dynamic", "type=classic", "type=bogus", "detail=bogus", "type=dynamic&detail=true"} {
		s.get("/v1/drivers?"+q, "", "1.29", "1.30", "latest")
	}
	for _, q := range []string{"detail=true", "fields=hostname,alive", "fields=drivers", "fields=bogus", "limit=1", "marker={host}", "marker=nope", "sort_key=hostname&sort_dir=desc"} {
		s.get("/v1/conductors?"+q, "1.48", "1.49", "latest")
	}
}

// sortKeys are every column of every resource, some fields that are no
// column, and nonsense.
var sortKeys = []string{
	"id", "uuid", "created_at", "updated_at", "version", "name", "description", "address", "node_id", "node_uuid",
	"portgroup_id", "portgroup_uuid", "pxe_enabled", "physical_network", "is_smartnic", "vendor", "category", "mode",
	"standalone_ports_supported", "dynamic_portgroup", "available_for_dynamic_portgroup", "state", "owner",
	"lessee", "last_error", "resource_class", "conductor_affinity", "type", "connector_id", "volume_type",
	"boot_index", "volume_id", "extra", "properties", "internal_info", "local_link_connection", "driver",
	"driver_info", "driver_internal_info", "instance_info", "provision_state", "power_state", "maintenance",
	"instance_uuid", "traits", "candidate_nodes", "steps", "conductor_group", "conductor", "hostname", "alive",
	"drivers", "clean_step", "deploy_step", "raid_config", "target_raid_config", "network_data", "fault",
	"shard", "retired", "protected", "boot_mode", "secure_boot", "bios_interface", "automated_clean",
	"inspection_started_at", "chassis_uuid", "allocation_uuid", "firmware_interface", "parent_node",
	"service_step", "disable_power_off", "instance_name", "health", "bogus", "",
}

var listPaths = []string{"/v1/nodes", "/v1/ports", "/v1/portgroups", "/v1/chassis", "/v1/allocations",
	"/v1/deploy_templates", "/v1/volume/connectors", "/v1/volume/targets", "/v1/conductors", "/v1/inspection_rules", "/v1/runbooks"}

func (s *script) sortKeys() {
	for _, p := range listPaths {
		for _, k := range sortKeys {
			s.get(p+"?sort_key="+k, "1.1", "latest")
			s.get(p+"?sort_key="+k+"&sort_dir=desc&limit=5", "latest")
		}
		for _, d := range []string{"asc", "desc", "DESC", "bogus", ""} {
			s.get(p+"?sort_dir="+d, "latest")
		}
	}
	for _, k := range []string{"name", "pxe_enabled", "physical_network", "is_smartnic", "mode", "owner", "resource_class",
		"conductor_group", "description", "lessee", "shard", "retired", "protected", "automated_clean", "fault",
		"boot_mode", "network_data", "conductor", "deploy_step", "rescue_interface", "storage_interface", "inspection_started_at"} {
		for _, v := range []string{"1.4", "1.18", "1.20", "1.25", "1.33", "1.45", "1.48", "1.50", "1.52", "1.59", "1.64", "1.74", "1.81"} {
			for _, p := range []string{"/v1/nodes", "/v1/ports", "/v1/portgroups", "/v1/allocations"} {
				s.get(p+"?sort_key="+k, v)
			}
		}
	}
	s.get("/v1/nodes/detail?sort_key=name&sort_dir=desc", "latest")
	s.get("/v1/nodes/"+n1+"/ports?sort_key=address&sort_dir=desc", "latest")
}

// Field names per resource, as ?fields= may name them (and some it may not).
var (
	nodeFieldNames = []string{"uuid", "created_at", "updated_at", "automated_clean", "bios_interface", "boot_interface",
		"boot_mode", "clean_step", "conductor_group", "console_enabled", "console_interface", "deploy_interface",
		"deploy_step", "description", "driver", "driver_info", "driver_internal_info", "extra", "fault",
		"inspection_finished_at", "inspection_started_at", "inspect_interface", "instance_info", "instance_uuid",
		"last_error", "lessee", "maintenance", "maintenance_reason", "management_interface", "name", "network_data",
		"network_interface", "owner", "power_interface", "power_state", "properties", "protected", "protected_reason",
		"provision_state", "provision_updated_at", "raid_config", "raid_interface", "rescue_interface", "reservation",
		"resource_class", "retired", "retired_reason", "secure_boot", "shard", "storage_interface", "target_power_state",
		"target_provision_state", "target_raid_config", "traits", "vendor_interface", "allocation_uuid", "chassis_uuid",
		"conductor", "links", "ports", "portgroups", "states", "volume", "firmware_interface", "parent_node",
		"service_step", "disable_power_off", "instance_name", "health", "bogus", "id"}
	portFieldNames = []string{"uuid", "created_at", "updated_at", "address", "extra", "internal_info", "is_smartnic",
		"local_link_connection", "physical_network", "pxe_enabled", "node_uuid", "portgroup_uuid", "links", "name", "bogus"}
	portgroupFieldNames = []string{"uuid", "created_at", "updated_at", "address", "extra", "internal_info", "mode", "name",
		"node_uuid", "properties", "standalone_ports_supported", "links", "ports", "bogus"}
	chassisFieldNames   = []string{"uuid", "description", "extra", "created_at", "updated_at", "links", "nodes", "bogus"}
	templateFieldNames  = []string{"uuid", "name", "steps", "extra", "description", "created_at", "updated_at", "links", "bogus"}
	connectorFieldNames = []string{"uuid", "node_uuid", "type", "connector_id", "extra", "created_at", "updated_at", "links", "bogus"}
	targetFieldNames    = []string{"uuid", "node_uuid", "volume_type", "boot_index", "volume_id", "properties", "extra", "created_at", "links", "bogus"}
	allocFieldNames     = []string{"uuid", "created_at", "updated_at", "candidate_nodes", "extra", "last_error", "name", "owner",
		"resource_class", "state", "traits", "node_uuid", "links", "bogus"}
)

func (s *script) fieldsParam() {
	type res struct {
		list, item string
		names      []string
		versions   []string
	}
	resources := []res{
		{"/v1/nodes", "/v1/nodes/" + n1, nodeFieldNames, []string{"1.7", "1.8", "1.20", "1.37", "1.42", "1.48", "1.51", "1.60", "1.65", "1.74", "1.81", "1.83", "1.86", "1.87", "1.95", "1.104", "1.109", "latest"}},
		{"/v1/ports", "/v1/ports/" + portID(1), portFieldNames, []string{"1.7", "1.8", "1.17", "1.18", "1.23", "1.24", "1.33", "1.34", "1.52", "1.53", "latest"}},
		{"/v1/portgroups", "/v1/portgroups/" + pgID(1), portgroupFieldNames, []string{"1.23", "1.25", "1.26", "latest"}},
		{"/v1/chassis", "/v1/chassis/" + chassisID(1), chassisFieldNames, []string{"1.7", "1.8", "latest"}},
		{"/v1/deploy_templates", "/v1/deploy_templates/" + templateID(2), templateFieldNames, []string{"1.55", "latest"}},
		{"/v1/volume/connectors", "/v1/volume/connectors/" + connID(2), connectorFieldNames, []string{"1.32", "latest"}},
		{"/v1/volume/targets", "/v1/volume/targets/" + targetID(1), targetFieldNames, []string{"1.32", "latest"}},
		{"/v1/allocations", "/v1/allocations/" + allocID(2), allocFieldNames, []string{"1.52", "1.59", "1.60", "latest"}},
	}
	for _, r := range resources {
		for _, v := range r.versions {
			for _, f := range r.names {
				s.get(r.list+"?fields="+f, v)
				s.get(r.item+"?fields="+f, v)
			}
			s.get(r.list+"?fields="+strings.Join(r.names[:3], ","), v)
			s.get(r.item+"?fields="+strings.ToUpper(r.names[0])+","+r.names[0]+",,"+r.names[1], v)
		}
		for _, q := range []string{"fields=", "fields=,", "fields=uuid&detail=true", "fields=uuid&detail=false",
			"detail=true", "detail=false", "detail=bogus", "detail=", "fields=uuid&fields=name"} {
			s.get(r.list+"?"+q, "1.42", "1.43", "latest")
			s.get(r.item+"?"+q, "latest")
		}
		s.get(r.list+"/detail?fields=uuid", "latest")
	}
	s.get("/v1/nodes/detail?detail=true", "latest")
	s.get("/v1/nodes?fields=uuid,name&limit=2", "latest")
}

func (s *script) paging() {
	for _, p := range listPaths {
		for _, l := range []string{"0", "-1", "1", "2", "abc", "1000", "1001", "100000", " 3", "1.5", ""} {
			s.get(p+"?limit="+queryEscape(l), "latest")
		}
		for _, m := range []string{n3, portID(2), pgID(1), chassisID(1), allocID(1), templateID(1), connID(1), targetID(1),
			scratchID(5), "bogus", "node-3", strings.ToUpper(n3), ""} {
			s.get(p+"?marker="+m, "latest")
			s.get(p+"?marker="+m+"&limit=2", "1.1")
		}
	}
	// Walk the node list page by page, both orders, with and without detail.
	for _, q := range []string{"", "&sort_dir=desc", "&sort_key=name", "&detail=true", "&fields=uuid,name", "&sort_key=created_at&sort_dir=desc"} {
		s.add(step{method: "GET", path: "/v1/nodes?limit=7" + q, version: "latest",
			capture: map[string]func(answer) string{"next": nextPath}})
		for range 4 {
			s.add(step{method: "GET", path: "{next}", version: "latest", capture: map[string]func(answer) string{"next": nextPath}})
		}
	}
	s.get("/v1/nodes/detail?limit=5&marker="+bulkID(3), "latest")
	s.get("/v1/ports?limit=2&marker="+portID(2)+"&node="+n1, "latest")
}

// nextPath is the path and query of a list's next link ("/v1/nodes" when
// there is none, which ends a walk harmlessly).
func nextPath(a answer) string {
	next := jsonField("next")(a)
	if _, rest, ok := strings.Cut(next, linkHost); ok {
		return rest
	}
	return "/v1/nodes"
}

func (s *script) identifiers() {
	type ident struct {
		base string
		ids  []string
	}
	for _, x := range []ident{
		{"/v1/nodes/", []string{n1, strings.ToUpper(n1), strings.ReplaceAll(n1, "-", ""), "node-1", "NODE-1", "bogus!", "a%20b",
			scratchID(1), "nope", "detail", "1", "~x", strings.Repeat("x", 300)}},
		{"/v1/ports/", []string{portID(1), strings.ToUpper(portID(1)), strings.ReplaceAll(portID(1), "-", ""), "bogus", scratchID(1), "52:54:00:00:00:01"}},
		{"/v1/portgroups/", []string{pgID(1), strings.ToUpper(pgID(1)), strings.ReplaceAll(pgID(1), "-", ""), "pg-one", "PG-ONE", "bad name!", scratchID(1)}},
		{"/v1/chassis/", []string{chassisID(1), strings.ToUpper(chassisID(1)), strings.ReplaceAll(chassisID(1), "-", ""), "bogus", scratchID(1)}},
		{"/v1/allocations/", []string{allocID(1), strings.ToUpper(allocID(1)), "alloc-one", "bad name!", scratchID(1), "nope"}},
		{"/v1/deploy_templates/", []string{templateID(1), strings.ToUpper(templateID(1)), "CUSTOM_DT_ONE", "custom_dt_one", "bogus", scratchID(1)}},
		{"/v1/volume/connectors/", []string{connID(1), strings.ToUpper(connID(1)), "bogus", scratchID(1)}},
		{"/v1/volume/targets/", []string{targetID(1), strings.ReplaceAll(targetID(1), "-", ""), "bogus", scratchID(1)}},
		{"/v1/conductors/", []string{"{host}", "nope", "HOST"}},
		{"/v1/drivers/", []string{"fake-hardware", "nope", "FAKE-HARDWARE", "ipmi"}},
	} {
		for _, i := range x.ids {
			s.get(x.base+i, "", "1.4", "1.5", "latest")
			s.do("DELETE", x.base+i+"x", "latest", "")
		}
	}
	for _, sub := range []string{"states", "validate", "traits", "vifs", "history", "inventory", "allocation", "ports", "management/boot_device"} {
		for _, i := range []string{"nope", "bogus!", scratchID(1), strings.ToUpper(n1)} {
			s.get("/v1/nodes/"+i+"/"+sub, "", "latest")
		}
	}
	s.get("/v1/nodes/"+n1+"/history/"+scratchID(1), "latest")
	s.get("/v1/nodes/"+n1+"/history/bogus", "latest")
	s.get("/v1/nodes/validate", "latest", "1.1")
	s.get("/v1/nodes/validate?node_uuid="+n1, "latest", "1.1")
	s.get("/v1/nodes/validate?node=nope", "latest", "1.1")
	s.get("/v1/nodes/states/console/"+n1, "latest")
}

func (s *script) unknownArgs() {
	for _, p := range []string{"/v1/nodes", "/v1/nodes/detail", "/v1/nodes/" + n1, "/v1/nodes/" + n1 + "/states",
		"/v1/nodes/" + n1 + "/traits", "/v1/nodes/" + n1 + "/validate", "/v1/nodes/" + n1 + "/history",
		"/v1/ports", "/v1/ports/" + portID(1), "/v1/portgroups", "/v1/chassis", "/v1/chassis/" + chassisID(1),
		"/v1/allocations", "/v1/allocations/" + allocID(1), "/v1/deploy_templates", "/v1/volume", "/v1/volume/connectors",
		"/v1/conductors", "/v1/drivers", "/v1/drivers/ipmi", "/v1/drivers/ipmi/properties", "/v1/shards",
		"/v1/inspection_rules", "/v1/runbooks", "/v1/runbooks/rb-two", "/", "/v1"} {
		s.get(p+"?bogus=1", "latest")
		s.get(p+"?a=1&b=2&fields=uuid", "latest")
		s.get(p+"?%zz=1", "latest")
		s.get(p+"?", "latest")
	}
}

func (s *script) methods() {
	paths := []string{"/", "/v1", "/v1/nodes", "/v1/nodes/detail", "/v1/nodes/" + n2, "/v1/nodes/" + n2 + "/states",
		"/v1/nodes/" + n2 + "/states/power", "/v1/nodes/" + n2 + "/states/provision", "/v1/nodes/" + n2 + "/traits",
		"/v1/nodes/" + n2 + "/maintenance", "/v1/nodes/" + n2 + "/management/boot_device", "/v1/nodes/" + n2 + "/vifs",
		"/v1/nodes/" + n2 + "/validate", "/v1/nodes/" + n2 + "/history", "/v1/nodes/" + n2 + "/bios",
		"/v1/ports", "/v1/ports/detail", "/v1/ports/" + portID(3), "/v1/portgroups", "/v1/portgroups/" + pgID(2),
		"/v1/chassis", "/v1/chassis/" + chassisID(2), "/v1/allocations", "/v1/allocations/" + allocID(2),
		"/v1/deploy_templates", "/v1/deploy_templates/" + templateID(2), "/v1/volume", "/v1/volume/connectors",
		"/v1/volume/targets/" + targetID(2), "/v1/conductors", "/v1/drivers", "/v1/drivers/ipmi", "/v1/shards",
		"/v1/lookup", "/v1/heartbeat/" + n2, "/v1/events", "/v1/inspection_rules", "/v1/runbooks", "/v1/runbooks/" + runbookID(2),
		"/v1/runbooks/rb-two/traits", "/v1/nope", "/nope", "/v2"}
	for _, p := range paths {
		for _, m := range []string{"HEAD", "OPTIONS", "TRACE", "FOO"} {
			s.do(m, p, "latest", "")
		}
		// Writes that are wrong for the path: a body that never validates.
		for _, m := range []string{"PUT", "POST", "PATCH", "DELETE"} {
			s.do(m, p+"/x/y", "latest", `{"bogus": true}`)
		}
		s.do("HEAD", p, "1.1", "")
	}
	for _, p := range []string{"/v1/nodes", "/v1/chassis", "/v1/ports", "/v1/allocations", "/v1/deploy_templates", "/v1/volume/targets"} {
		for _, m := range []string{"PUT", "PATCH", "DELETE"} {
			s.do(m, p, "latest", "")
		}
	}
	for _, p := range []string{"/v1/nodes/" + n2, "/v1/chassis/" + chassisID(2), "/v1/ports/" + portID(3), "/v1/portgroups/pg-two"} {
		for _, m := range []string{"PUT", "POST"} {
			s.do(m, p, "latest", "{}")
		}
	}
}

func (s *script) jsonSuffix() {
	for _, p := range []string{"/v1.json", "/v1/nodes.json", "/v1/nodes/detail.json", "/v1/nodes/" + n1 + ".json",
		"/v1/nodes/node-1.json", "/v1/nodes/" + n1 + "/states.json", "/v1/ports.json", "/v1/ports/" + portID(1) + ".json",
		"/v1/portgroups/pg-one.json", "/v1/chassis.json", "/v1/drivers.json", "/v1/drivers/ipmi.json",
		"/v1/conductors.json", "/v1/allocations/alloc-one.json", "/v1/deploy_templates/CUSTOM_DT_ONE.json", "/nodes.json"} {
		s.get(p, "", "1.82", "1.83", "1.90", "1.91", "latest")
	}
}

// badBodies are create bodies that are not a JSON object, or not JSON.
// None has two unknown members: which of them a port's or portgroup's
// error names is chosen at random (Go map order), on every version.
var badBodies = []string{"", "   ", "{", "[]", "null", "1", `"str"`, "{}", `{"bogus": 1}`, "{} {}", "[{}]",
	"{\"driver\": \"\xff\xfe\"}", `{"a": 1,}`, `{'a': 1}`, `{"a": NaN}`,
	`{"a": 1e400}`, strings.Repeat("[", 30) + strings.Repeat("]", 30), `{"x": ` + strings.Repeat(`{"x": `, 30) + "1" + strings.Repeat("}", 31),
	`{"a": "\ud800"}`, "\xef\xbb\xbf{}"}

// typeValues are values of every JSON type, for a field's type check.
var typeValues = []any{1, 1.5, true, false, []any{}, []any{"a"}, obj{}, obj{"a": 1}, "x", "", nil, "true", "no", -1}

// createCase is a resource's create endpoint: a valid body (with a
// scratch UUID, so that whatever succeeds is deleted after) and the fields
// whose types are checked.
type createCase struct {
	path   string
	valid  func(i int) obj
	fields []string
}

func (s *script) badCreates() {
	big := `{"driver": "fake-hardware", "extra": {"x": "` + strings.Repeat("y", 1<<20) + `"}}`
	scratch := 0
	next := func() int { scratch++; return scratch }
	cases := []createCase{
		{"/v1/nodes", func(i int) obj { return obj{"uuid": scratchID(i), "driver": "fake-hardware"} },
			[]string{"automated_clean", "bios_interface", "boot_interface", "boot_mode", "chassis_uuid", "conductor_group",
				"console_enabled", "console_interface", "deploy_interface", "description", "driver", "driver_info", "extra",
				"inspect_interface", "instance_info", "instance_uuid", "lessee", "management_interface", "maintenance",
				"name", "network_data", "network_interface", "owner", "power_interface", "properties", "raid_interface",
				"rescue_interface", "resource_class", "retired", "retired_reason", "secure_boot", "shard",
				"storage_interface", "uuid", "vendor_interface", "protected", "protected_reason", "provision_state",
				"power_state", "traits", "firmware_interface", "parent_node", "links", "id", "created_at",
				"maintenance_reason", "reservation", "allocation_uuid", "conductor", "fault"}},
		{"/v1/ports", func(i int) obj {
			return obj{"uuid": scratchID(i), "node_uuid": n2, "address": fmt.Sprintf("52:54:00:aa:%02x:%02x", i/256, i%256)}
		}, []string{"uuid", "address", "node_uuid", "portgroup_uuid", "extra", "pxe_enabled", "local_link_connection",
			"physical_network", "is_smartnic", "internal_info", "created_at", "links", "name", "node"}},
		{"/v1/portgroups", func(i int) obj { return obj{"uuid": scratchID(i), "node_uuid": n2} },
			[]string{"uuid", "name", "address", "node_uuid", "extra", "standalone_ports_supported", "mode", "properties",
				"internal_info", "links", "ports"}},
		{"/v1/chassis", func(i int) obj { return obj{"uuid": scratchID(i)} },
			[]string{"uuid", "description", "extra", "nodes", "links", "created_at"}},
		{"/v1/deploy_templates", func(i int) obj {
			return obj{"uuid": scratchID(i), "name": fmt.Sprintf("CUSTOM_SCRATCH_%d", i),
				"steps": []any{obj{"interface": "deploy", "step": "s", "args": obj{}, "priority": 1}}}
		}, []string{"uuid", "name", "steps", "extra", "description", "links"}},
		{"/v1/volume/connectors", func(i int) obj {
			return obj{"uuid": scratchID(i), "node_uuid": n2, "type": "iqn", "connector_id": fmt.Sprintf("iqn.scratch.%d", i)}
		}, []string{"uuid", "node_uuid", "type", "connector_id", "extra", "links"}},
		{"/v1/volume/targets", func(i int) obj {
			return obj{"uuid": scratchID(i), "node_uuid": n2, "volume_type": "iscsi", "volume_id": fmt.Sprintf("v%d", i), "boot_index": 10 + i}
		}, []string{"uuid", "node_uuid", "volume_type", "volume_id", "boot_index", "properties", "extra", "links"}},
		{"/v1/allocations", func(i int) obj { return obj{"uuid": scratchID(i), "resource_class": "nomatch"} },
			[]string{"uuid", "name", "resource_class", "candidate_nodes", "traits", "extra", "owner", "node", "state", "links"}},
	}
	for _, c := range cases {
		for _, b := range badBodies {
			s.do("POST", c.path, "latest", b)
		}
		s.do("POST", c.path, "latest", big)
		s.do("POST", c.path+"?bogus=1", "latest", js(c.valid(next())))
		for _, f := range c.fields {
			for _, v := range typeValues {
				i := next()
				body := c.valid(i)
				body[f] = v
				s.create(c.path, "latest", js(body))
			}
		}
		// Every field at each version: what a version below the field's may not set.
		for _, v := range []string{"", "1.5", "1.20", "1.31", "1.33", "1.38", "1.40", "1.44", "1.45", "1.47", "1.49",
			"1.50", "1.51", "1.53", "1.58", "1.59", "1.60", "1.61", "1.64", "1.65", "1.66", "1.74", "1.75", "1.81", "latest"} {
			s.create(c.path, v, js(c.valid(next())))
		}
	}
	// Gated node fields, each at the versions around its gate.
	gated := []struct {
		field    string
		value    any
		versions []string
	}{
		{"name", "gated-name", []string{"1.4", "1.5", "1.9", "1.10"}},
		{"name", "Under_score.name~", []string{"1.9", "1.10"}},
		{"resource_class", "rc", []string{"1.20", "1.21"}},
		{"network_interface", "noop", []string{"1.19", "1.20"}},
		{"boot_interface", "fake", []string{"1.30", "1.31"}},
		{"storage_interface", "fake", []string{"1.32", "1.33"}},
		{"rescue_interface", "fake", []string{"1.37", "1.38"}},
		{"bios_interface", "fake", []string{"1.39", "1.40"}},
		{"conductor_group", "grp", []string{"1.45", "1.46"}},
		{"conductor_group", "", []string{"1.45", "1.46"}},
		{"automated_clean", false, []string{"1.46", "1.47"}},
		{"protected", true, []string{"1.47", "1.48", "latest"}},
		{"owner", "o", []string{"1.49", "1.50"}},
		{"description", "d", []string{"1.50", "1.51"}},
		{"retired", true, []string{"1.60", "1.61"}},
		{"lessee", "l", []string{"1.64", "1.65"}},
		{"network_data", obj{}, []string{"1.65", "1.66"}},
		{"boot_mode", "uefi", []string{"1.74", "1.75"}},
		{"secure_boot", true, []string{"1.74", "1.75"}},
		{"shard", "s", []string{"1.81", "1.82"}},
		{"driver", "nope", []string{"latest"}},
		{"deploy_interface", "nope", []string{"latest"}},
		{"inspect_interface", "inspector", []string{"latest"}},
		{"chassis_uuid", scratchID(999), []string{"latest"}},
		{"chassis_uuid", chassisID(2), []string{"latest"}},
		{"instance_uuid", instanceID(1), []string{"latest"}},
		{"name", "node-1", []string{"latest"}},
		{"name", "detail", []string{"latest"}},
		{"name", n2, []string{"latest"}},
		{"uuid", n1, []string{"latest"}},
		{"description", strings.Repeat("d", 4097), []string{"latest"}},
		{"resource_class", strings.Repeat("r", 81), []string{"latest"}},
	}
	for _, g := range gated {
		for _, v := range g.versions {
			i := next()
			body := obj{"uuid": scratchID(i), "driver": "fake-hardware", g.field: g.value}
			if g.field == "uuid" {
				body["uuid"] = g.value
			}
			s.do("POST", "/v1/nodes", v, js(body))
			s.do("DELETE", "/v1/nodes/"+scratchID(i), "latest", "")
		}
	}
	// Ports and portgroups: gated and related fields.
	portCases := []struct {
		body     obj
		versions []string
	}{
		{obj{"pxe_enabled": false}, []string{"1.18", "1.19"}},
		{obj{"local_link_connection": obj{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "p"}}, []string{"1.18", "1.19"}},
		{obj{"local_link_connection": obj{"network_type": "unmanaged"}}, []string{"1.63", "1.64"}},
		{obj{"local_link_connection": obj{"switch_id": "0123456789abcdef", "port_id": "p"}}, []string{"latest"}},
		{obj{"local_link_connection": obj{"switch_id": "bogus", "port_id": "p"}}, []string{"latest"}},
		{obj{"local_link_connection": obj{"port_id": "p"}}, []string{"latest"}},
		{obj{"local_link_connection": obj{"port_id": "p", "bogus": 1}}, []string{"latest"}},
		{obj{"local_link_connection": obj{"port_id": 1, "switch_id": "0a:1b:2c:3d:4e:5f"}}, []string{"latest"}},
		{obj{"portgroup_uuid": pgID(2)}, []string{"1.23", "1.24"}},
		{obj{"portgroup_uuid": pgID(1)}, []string{"latest"}},
		{obj{"portgroup_uuid": scratchID(999)}, []string{"latest"}},
		{obj{"physical_network": "physnet2"}, []string{"1.33", "1.34"}},
		{obj{"physical_network": strings.Repeat("p", 65)}, []string{"latest"}},
		{obj{"is_smartnic": true}, []string{"1.52", "1.53"}},
		{obj{"is_smartnic": true, "local_link_connection": obj{"port_id": "x", "hostname": "h"}}, []string{"latest"}},
		{obj{"address": "52:54:00:00:00:01"}, []string{"latest"}},
		{obj{"address": "bogus"}, []string{"latest"}},
		{obj{"address": "52:54:00:00:00:0A"}, []string{"latest"}},
		{obj{"address": "52-54-00-00-00-0b"}, []string{"latest"}},
		{obj{"node_uuid": scratchID(999)}, []string{"latest"}},
		{obj{"node_uuid": "bogus"}, []string{"latest"}},
		{obj{"node_uuid": n4}, []string{"latest"}},
	}
	for _, pc := range portCases {
		for _, v := range pc.versions {
			i := next()
			body := obj{"uuid": scratchID(i), "node_uuid": n2, "address": fmt.Sprintf("52:54:00:bb:%02x:%02x", i/256, i%256)}
			for k, val := range pc.body {
				body[k] = val
			}
			s.do("POST", "/v1/ports", v, js(body))
			s.do("DELETE", "/v1/ports/"+scratchID(i), "latest", "")
		}
	}
	pgCases := []struct {
		body     obj
		versions []string
	}{
		{obj{"mode": "balance-rr"}, []string{"1.25", "1.26"}},
		{obj{"properties": obj{"a": 1}}, []string{"1.25", "1.26"}},
		{obj{"name": "pg-one"}, []string{"latest"}},
		{obj{"name": "bad name"}, []string{"latest"}},
		{obj{"name": pgID(7)}, []string{"latest"}},
		{obj{"address": "52:54:00:00:01:01"}, []string{"latest"}},
		{obj{"address": "bogus"}, []string{"latest"}},
		{obj{"standalone_ports_supported": "false"}, []string{"latest"}},
		{obj{"node_uuid": scratchID(999)}, []string{"latest"}},
		{obj{}, []string{"1.22", "1.23"}},
	}
	for _, pc := range pgCases {
		for _, v := range pc.versions {
			i := next()
			body := obj{"uuid": scratchID(i), "node_uuid": n2}
			for k, val := range pc.body {
				body[k] = val
			}
			s.do("POST", "/v1/portgroups", v, js(body))
			s.do("DELETE", "/v1/portgroups/"+scratchID(i), "latest", "")
		}
	}
	// Deploy templates: the steps schema.
	for _, steps := range []any{nil, []any{}, "x", []any{"x"}, []any{obj{}},
		[]any{obj{"interface": "deploy", "step": "s", "args": obj{}}},
		[]any{obj{"interface": "nope", "step": "s", "args": obj{}, "priority": 1}},
		[]any{obj{"interface": "deploy", "step": "", "args": obj{}, "priority": 1}},
		[]any{obj{"interface": "deploy", "step": "s", "args": "x", "priority": 1}},
		[]any{obj{"interface": "deploy", "step": "s", "args": obj{}, "priority": -1}},
		[]any{obj{"interface": "deploy", "step": "s", "args": obj{}, "priority": 1.5}},
		[]any{obj{"interface": "deploy", "step": "s", "args": obj{}, "priority": "07"}},
		[]any{obj{"interface": "deploy", "step": "s", "args": obj{}, "priority": 1, "bogus": 1}},
		[]any{obj{"interface": "deploy", "step": "s", "args": obj{}, "priority": 1}, obj{"interface": "deploy", "step": "s", "args": obj{}, "priority": 2}},
	} {
		for _, name := range []any{"CUSTOM_STEPS", "bad name", "CUSTOM_DT_ONE", 1} {
			i := next()
			s.do("POST", "/v1/deploy_templates", "latest", js(obj{"uuid": scratchID(i), "name": name, "steps": steps}))
			s.do("DELETE", "/v1/deploy_templates/"+scratchID(i), "latest", "")
		}
	}
	for _, v := range []string{"1.54", "1.55"} {
		s.do("POST", "/v1/deploy_templates", v, js(obj{"name": "CUSTOM_V", "steps": []any{}}))
	}
	// Runbooks: the step schema (order, args optional), names by version.
	for _, steps := range []any{
		nil, "x", []any{}, []any{"x"}, []any{obj{"interface": "bios", "step": "s"}},
		[]any{obj{"interface": "boot", "step": "s", "order": 1}},
		[]any{obj{"interface": "bios", "step": "s", "order": -1}},
		[]any{obj{"interface": "bios", "step": "s", "order": "07", "args": obj{}}},
		[]any{obj{"interface": "bios", "step": "s", "priority": 1, "order": 1}},
		[]any{obj{"interface": "bios", "step": "s", "order": 1}, obj{"interface": "bios", "step": "s", "order": 2}},
	} {
		for _, name := range []any{"CUSTOM_RB", "rb-name", "bad name", "CUSTOM_A", nil} {
			for _, v := range []string{"1.92", "latest"} {
				i := next()
				s.do("POST", "/v1/runbooks", v, js(obj{"uuid": scratchID(i), "name": name, "steps": steps}))
				s.do("DELETE", "/v1/runbooks/"+scratchID(i), "latest", "")
			}
		}
	}
	for _, body := range []obj{{"owner": "p"}, {"public": true}, {"public": "yes"}, {"uuid": "bad"}, {"traits": []any{}}, {"description": "d"}} {
		body["name"], body["steps"] = "CUSTOM_RB_X", []any{obj{"interface": "bios", "step": "s", "order": 1}}
		for _, v := range []string{"1.91", "1.92", "latest"} {
			s.do("POST", "/v1/runbooks", v, js(body))
			s.do("DELETE", "/v1/runbooks/CUSTOM_RB_X", "latest", "")
		}
	}
	for _, rq := range []struct{ method, path, body string }{
		{"PUT", "/v1/runbooks/rb-two/traits/bad", ""}, {"PUT", "/v1/runbooks/rb-two/traits", ""},
		{"PUT", "/v1/runbooks/rb-two/traits", `{"traits": "x"}`}, {"PUT", "/v1/runbooks/rb-two/traits/CUSTOM_C", `{"traits": []}`},
		{"PUT", "/v1/runbooks/rb-two/traits/CUSTOM_C", ""}, {"DELETE", "/v1/runbooks/rb-two/traits/CUSTOM_C", ""},
		{"DELETE", "/v1/runbooks/rb-two/traits/CUSTOM_NONE", ""}, {"GET", "/v1/runbooks/bad!/traits", ""},
	} {
		for _, v := range []string{"1.92", "1.111", "latest"} {
			s.do(rq.method, rq.path, v, rq.body)
		}
	}
	// Volume: wrong node states and duplicates.
	for _, body := range []obj{
		{"node_uuid": n3, "type": "iqn", "connector_id": "iqn.n3"},
		{"node_uuid": n2, "type": "iqn", "connector_id": "wwpn:1"},
		{"node_uuid": n2, "type": "wwpn", "connector_id": "wwpn:1"},
		{"node_uuid": "bogus", "type": "iqn", "connector_id": "c"},
		{"node_uuid": scratchID(999), "type": "iqn", "connector_id": "c"},
	} {
		i := next()
		body["uuid"] = scratchID(i)
		s.do("POST", "/v1/volume/connectors", "latest", js(body))
		s.do("DELETE", "/v1/volume/connectors/"+scratchID(i), "latest", "")
	}
	for _, body := range []obj{
		{"node_uuid": n1, "volume_type": "iscsi", "volume_id": "dup", "boot_index": 0},
		{"node_uuid": n1, "volume_type": "iscsi", "volume_id": "bi", "boot_index": "1"},
		{"node_uuid": n1, "volume_type": "iscsi", "volume_id": "bi", "boot_index": 2.5},
		{"node_uuid": n1, "volume_type": "iscsi", "volume_id": "bi", "boot_index": 1e10},
	} {
		i := next()
		body["uuid"] = scratchID(i)
		s.do("POST", "/v1/volume/targets", "latest", js(body))
		s.do("DELETE", "/v1/volume/targets/"+scratchID(i), "latest", "")
	}
	for _, v := range []string{"1.31", "1.32"} {
		s.do("POST", "/v1/volume/connectors", v, js(obj{"node_uuid": n2, "type": "iqn", "connector_id": "x"}))
	}
	// A create without a UUID, removed at once by the UUID the server chose.
	for _, c := range []struct{ path, body string }{
		{"/v1/nodes", `{"driver": "fake-hardware", "name": "no-uuid"}`},
		{"/v1/chassis", `{"description": "no uuid"}`},
		{"/v1/ports", `{"node_uuid": "` + n2 + `", "address": "52:54:00:cc:00:01"}`},
		{"/v1/portgroups", `{"node_uuid": "` + n2 + `", "name": "no-uuid"}`},
		{"/v1/deploy_templates", `{"name": "CUSTOM_NO_UUID", "steps": [{"interface": "raid", "step": "x", "args": {}, "priority": 0}]}`},
		{"/v1/volume/targets", `{"node_uuid": "` + n2 + `", "volume_type": "fc", "volume_id": "nu", "boot_index": 5}`},
	} {
		s.add(step{method: "POST", path: c.path, version: "latest", body: c.body,
			capture: map[string]func(answer) string{"new": jsonField("uuid")}})
		s.get(c.path+"/{new}", "latest")
		s.do("DELETE", c.path+"/{new}", "latest", "")
	}
}

// precedence sends requests with two faults: which error answers is the
// order a resource checks in.
func (s *script) precedence() {
	for _, p := range listPaths {
		for _, q := range []string{"sort_key=bogus&fields=bogus", "sort_key=owner&fields=bogus", "sort_key=name&fields=owner",
			"sort_key=extra&fields=bogus", "sort_key=bogus&limit=0", "fields=bogus&marker=bogus", "sort_key=bogus&marker=" + scratchID(1),
			"fields=bogus&detail=true", "sort_dir=up&sort_key=bogus", "limit=x&sort_dir=up", "fields=owner&sort_key=lessee",
			"fields=bogus&node=nope", "sort_key=bogus&node=nope", "owner=x&node=nope", "node=nope&resource_class=x&fields=bogus"} {
			s.get(p+"?"+q, "1.1", "1.20", "1.52", "1.59", "latest")
		}
	}
	for _, p := range []string{"/v1/allocations/" + scratchID(1), "/v1/allocations/bad!", "/v1/nodes/" + scratchID(1),
		"/v1/nodes/bad!", "/v1/ports/" + scratchID(1), "/v1/portgroups/bad!", "/v1/chassis/bogus", "/v1/deploy_templates/" + scratchID(1)} {
		s.get(p+"?fields=bogus", "1.1", "1.7", "latest")
		s.get(p+"?fields=uuid&bogus=1", "latest")
	}
	s.get("/v1/nodes/"+n1+"/allocation?fields=bogus", "latest")
	// A port's or portgroup's error names one unknown member of several
	// at random: those bodies have one (known lists them).
	portKnown := []string{"uuid", "address", "node_uuid", "portgroup_uuid", "extra", "pxe_enabled",
		"local_link_connection", "physical_network", "is_smartnic"}
	pgKnown := []string{"uuid", "name", "address", "node_uuid", "extra", "standalone_ports_supported", "mode", "properties"}
	for _, c := range []struct {
		path  string
		valid obj
		known []string
	}{
		{"/v1/chassis", obj{"uuid": scratchID(500)}, nil},
		{"/v1/ports", obj{"uuid": scratchID(500), "node_uuid": n2, "address": "52:54:00:dd:00:01"}, portKnown},
		{"/v1/portgroups", obj{"uuid": scratchID(500), "node_uuid": n2}, pgKnown},
		{"/v1/volume/connectors", obj{"uuid": scratchID(500), "node_uuid": n2, "type": "iqn", "connector_id": "p"}, nil},
		{"/v1/deploy_templates", obj{"uuid": scratchID(500), "name": "CUSTOM_P", "steps": []any{}}, nil},
		{"/v1/allocations", obj{"uuid": scratchID(500), "resource_class": "x"}, nil},
		{"/v1/nodes", obj{"uuid": scratchID(500), "driver": "fake-hardware"}, nil},
	} {
		for _, bad := range []obj{{"aaa": 1, "description": 1}, {"zzz": 1, "description": 1}, {"aaa": 1, "extra": 1},
			{"zzz": 1, "extra": "x"}, {"zzz": 1, "node_uuid": nil}, {"address": 1, "zzz": 1}, {"node_uuid": 1, "pxe_enabled": "x"},
			{"uuid": "bad", "extra": 1}, {"name": 1, "extra": 1}, {"driver": nil, "zzz": 1}} {
			body := obj{}
			for k, v := range c.valid {
				body[k] = v
			}
			unknown := 0
			for k, v := range bad {
				body[k] = v
				if c.known != nil && !slices.Contains(c.known, k) {
					unknown++
				}
			}
			if unknown > 1 {
				continue
			}
			s.create(c.path, "latest", js(body))
		}
	}
}

// patchCase is a resource item to patch and what to try on it.
type patchCase struct {
	item     string
	fields   []string // fields replaced with values of every type
	internal []string
	versions []string
}

func (s *script) patches() {
	bad := []string{"", "{}", "[]", "[{}]", "null", `[{"op": "add"}]`, `[{"op": "move", "path": "/extra", "from": "/x"}]`,
		`[{"op": "test", "path": "/extra", "value": {}}]`, `[{"op": "replace", "path": "/extra"}]`,
		`[{"op": "add", "path": "extra", "value": 1}]`, `[{"op": "add", "path": "/", "value": 1}]`,
		`[{"op": "add", "path": "/a b", "value": 1}]`, `[{"op": 1, "path": "/extra"}]`, `[{"path": "/extra", "op": "remove", "x": 1}]`,
		`[{"op": "add", "path": "/nope", "value": 1}]`, `[{"op": "remove", "path": "/extra/nope"}]`,
		`[{"op": "replace", "path": "/extra/nope", "value": 1}]`, `[{"op": "add", "path": "/extra/a/b", "value": 1}]`,
		`[{"op": "add", "path": "/extra/k", "value": "v"}]`, `[{"op": "remove", "path": "/extra/k"}]`,
		`[{"op": "add", "path": "/extra/l", "value": [1, 2]}, {"op": "add", "path": "/extra/l/0", "value": 0}, {"op": "add", "path": "/extra/l/-", "value": 3}, {"op": "remove", "path": "/extra/l/1"}, {"op": "replace", "path": "/extra/l/5", "value": 3}]`,
		`[{"op": "add", "path": "/extra/l/01", "value": 0}]`, `[{"op": "add", "path": "/extra/t~1x", "value": 0}]`,
		`[{"op": "replace", "path": "/extra", "value": {}}]`, "[" + strings.Repeat(`{"op": "add", "path": "/extra/k", "value": 1},`, 1000) + `{"op": "remove", "path": "/extra/k"}]`,
	}
	cases := []patchCase{
		{"/v1/nodes/" + n3, []string{"automated_clean", "bios_interface", "boot_interface", "chassis_uuid", "conductor_group",
			"console_interface", "deploy_interface", "description", "driver", "driver_info", "extra", "inspect_interface",
			"instance_info", "instance_uuid", "lessee", "maintenance", "management_interface", "name", "network_data",
			"network_interface", "owner", "power_interface", "properties", "protected", "protected_reason", "raid_interface",
			"rescue_interface", "resource_class", "retired", "retired_reason", "shard", "storage_interface", "vendor_interface"},
			[]string{"uuid", "id", "created_at", "updated_at", "links", "provision_state", "power_state", "boot_mode",
				"secure_boot", "console_enabled", "traits", "reservation", "conductor", "allocation_uuid", "driver_internal_info",
				"firmware_interface", "ports", "maintenance_reason", "fault", "last_error", "target_provision_state"},
			[]string{"1.1", "1.20", "1.45", "1.50", "1.60", "1.64", "1.81", "latest"}},
		{"/v1/ports/" + portID(3), []string{"address", "node_uuid", "portgroup_uuid", "extra", "pxe_enabled",
			"local_link_connection", "physical_network", "is_smartnic"},
			[]string{"uuid", "id", "created_at", "updated_at", "links", "internal_info", "name"},
			[]string{"1.1", "1.18", "1.19", "1.23", "1.24", "1.33", "1.34", "1.52", "1.53", "1.63", "1.64", "latest"}},
		{"/v1/portgroups/" + pgID(2), []string{"name", "address", "node_uuid", "extra", "standalone_ports_supported", "mode", "properties"},
			[]string{"uuid", "id", "created_at", "updated_at", "links", "internal_info", "ports"},
			[]string{"1.23", "1.25", "1.26", "latest"}},
		{"/v1/chassis/" + chassisID(2), []string{"description", "extra"},
			[]string{"uuid", "id", "created_at", "updated_at", "links", "nodes"}, []string{"1.1", "latest"}},
		{"/v1/deploy_templates/" + templateID(2), []string{"name", "steps", "extra", "description"},
			[]string{"uuid", "id", "created_at", "updated_at", "links"}, []string{"1.55", "latest"}},
		{"/v1/runbooks/" + runbookID(2), []string{"name", "steps", "extra", "description", "disable_ramdisk", "public", "owner"},
			[]string{"uuid", "id", "created_at", "updated_at", "links", "traits"}, []string{"1.92", "1.112", "latest"}},
		{"/v1/volume/connectors/" + connID(2), []string{"node_uuid", "type", "connector_id", "extra"},
			[]string{"uuid", "id", "created_at", "updated_at", "links"}, []string{"1.32", "latest"}},
		{"/v1/volume/targets/" + targetID(2), []string{"node_uuid", "volume_type", "volume_id", "boot_index", "properties", "extra"},
			[]string{"uuid", "id", "created_at", "updated_at", "links"}, []string{"1.32", "latest"}},
		{"/v1/allocations/" + allocID(2), []string{"name", "extra", "resource_class", "owner", "traits", "candidate_nodes", "node_uuid", "state"},
			[]string{"uuid", "id", "created_at", "updated_at", "links"}, []string{"1.56", "1.57", "latest"}},
	}
	// Stand-in values that valid patches set, then undo.
	for _, c := range cases {
		for _, b := range bad {
			s.do("PATCH", c.item, "latest", b)
		}
		for _, v := range c.versions {
			for _, f := range append(append([]string{}, c.internal...), c.fields...) {
				for _, op := range []string{"add", "replace", "remove"} {
					p := obj{"op": op, "path": "/" + f}
					if op != "remove" {
						p["value"] = "x"
					}
					s.do("PATCH", c.item, v, js([]any{p}))
				}
				s.do("PATCH", c.item, v, js([]any{obj{"op": "add", "path": "/" + f + "/sub", "value": 1}}))
			}
			// Gates look at the first operation only (Ironic's quirk): put the field second too.
			for _, f := range c.fields {
				s.do("PATCH", c.item, v, js([]any{obj{"op": "add", "path": "/extra/first", "value": 1},
					obj{"op": "replace", "path": "/" + f, "value": nil}}))
			}
		}
		for _, f := range c.fields {
			for _, val := range typeValues {
				s.do("PATCH", c.item, "latest", js([]any{obj{"op": "replace", "path": "/" + f, "value": val}}))
			}
		}
		s.get(c.item, "latest")
	}
	// Node patches with meaning: interfaces and the driver, reset_interfaces, names, protection.
	for _, p := range []struct{ query, body, version string }{
		{"", `[{"op": "replace", "path": "/driver", "value": "ipmi"}]`, "latest"},
		{"?reset_interfaces=true", `[{"op": "replace", "path": "/driver", "value": "ipmi"}]`, "latest"},
		{"?reset_interfaces=true", `[{"op": "replace", "path": "/driver", "value": "fake-hardware"}]`, "1.44"},
		{"?reset_interfaces=true", `[{"op": "replace", "path": "/driver", "value": "fake-hardware"}]`, "1.45"},
		{"?reset_interfaces=true", `[{"op": "replace", "path": "/name", "value": "n"}]`, "latest"},
		{"?reset_interfaces=bogus", `[]`, "latest"},
		{"?bogus=1", `[]`, "latest"},
		{"", `[{"op": "replace", "path": "/deploy_interface", "value": "direct"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/deploy_interface", "value": "nope"}]`, "latest"},
		{"", `[{"op": "remove", "path": "/deploy_interface"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/deploy_interface", "value": "fake"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/name", "value": "node-1"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/name", "value": "bad name"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/name", "value": "Under_score"}]`, "1.9"},
		{"", `[{"op": "replace", "path": "/name", "value": "` + n2 + `"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/name", "value": "detail"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/name", "value": 7}]`, "latest"},
		{"", `[{"op": "replace", "path": "/name", "value": "node-3"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/protected", "value": true}]`, "latest"},
		{"", `[{"op": "replace", "path": "/protected_reason", "value": "why"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/retired", "value": true}, {"op": "replace", "path": "/retired_reason", "value": "r"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/retired", "value": false}]`, "latest"},
		{"", `[{"op": "replace", "path": "/retired_reason", "value": "r"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/maintenance", "value": false}]`, "latest"},
		{"", `[{"op": "replace", "path": "/maintenance", "value": "true"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/instance_uuid", "value": "` + instanceID(1) + `"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/instance_uuid", "value": "` + instanceID(3) + `"}]`, "latest"},
		{"", `[{"op": "remove", "path": "/instance_uuid"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/chassis_uuid", "value": "` + scratchID(9) + `"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/chassis_uuid", "value": "` + chassisID(1) + `"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/conductor_group", "value": "Bad Group"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/conductor_group", "value": "Mixed-Case"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/conductor_group", "value": ""}]`, "latest"},
		{"", `[{"op": "replace", "path": "/description", "value": "` + strings.Repeat("d", 4097) + `"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/network_data", "value": "x"}]`, "latest"},
		{"", `[{"op": "add", "path": "/properties/capabilities", "value": "boot_mode:bios"}]`, "latest"},
		{"", `[{"op": "add", "path": "/driver_info/ipmi_password", "value": "p"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/shard", "value": "s9"}]`, "1.81"},
		{"", `[{"op": "replace", "path": "/shard", "value": "s9"}]`, "1.82"},
		{"", `[{"op": "replace", "path": "/driver", "value": null}]`, "latest"},
		{"", `[{"op": "remove", "path": "/driver"}]`, "latest"},
		{"", `[{"op": "replace", "path": "/uuid", "value": "` + n3 + `"}]`, "latest"},
	} {
		s.do("PATCH", "/v1/nodes/"+n3+p.query, p.version, p.body)
	}
	s.do("PATCH", "/v1/nodes/node-3", "1.4", `[]`)
	s.do("PATCH", "/v1/nodes/node-3", "1.5", `[]`)
	s.do("PATCH", "/v1/nodes/"+scratchID(1), "latest", `[]`)
	s.do("PATCH", "/v1/nodes/"+n8, "latest", `[{"op": "replace", "path": "/protected", "value": true}]`)
	s.do("PATCH", "/v1/nodes/"+n8, "latest", `[{"op": "replace", "path": "/protected_reason", "value": "p"}]`)
	s.do("PATCH", "/v1/nodes/"+n8, "latest", `[{"op": "replace", "path": "/driver", "value": "ipmi"}]`)
	s.do("PATCH", "/v1/nodes/"+n8, "latest", `[{"op": "replace", "path": "/protected", "value": false}]`)
	// Ports and portgroups with meaning.
	for _, b := range []string{
		`[{"op": "replace", "path": "/address", "value": "52:54:00:00:00:01"}]`,
		`[{"op": "replace", "path": "/address", "value": "52-54-00-00-00-33"}]`,
		`[{"op": "replace", "path": "/portgroup_uuid", "value": "` + pgID(2) + `"}]`,
		`[{"op": "replace", "path": "/portgroup_uuid", "value": "` + pgID(1) + `"}]`,
		`[{"op": "replace", "path": "/node_uuid", "value": "` + n4 + `"}]`,
		`[{"op": "replace", "path": "/node_uuid", "value": "` + scratchID(1) + `"}]`,
		`[{"op": "add", "path": "/local_link_connection/network_type", "value": "managed"}]`,
		`[{"op": "add", "path": "/local_link_connection/switch_id", "value": "bogus"}]`,
		`[{"op": "replace", "path": "/pxe_enabled", "value": "yes"}]`,
		`[{"op": "replace", "path": "/physical_network", "value": "physnet9"}]`,
		`[{"op": "remove", "path": "/portgroup_uuid"}]`,
	} {
		s.do("PATCH", "/v1/ports/"+portID(3), "latest", b)
		s.do("PATCH", "/v1/ports/"+portID(3), "1.63", b)
	}
	s.do("PATCH", "/v1/portgroups/"+pgID(2), "latest", `[{"op": "replace", "path": "/name", "value": "pg-two"}]`)
	for _, b := range []string{
		`[{"op": "replace", "path": "/name", "value": "pg-one"}]`, `[{"op": "replace", "path": "/name", "value": "bad name"}]`,
		`[{"op": "replace", "path": "/address", "value": "52:54:00:00:01:01"}]`, `[{"op": "replace", "path": "/mode", "value": "balance-rr"}]`,
		`[{"op": "remove", "path": "/mode"}]`, `[{"op": "replace", "path": "/node_uuid", "value": "` + n1 + `"}]`,
		`[{"op": "replace", "path": "/name", "value": "pg-two"}]`,
	} {
		s.do("PATCH", "/v1/portgroups/pg-two", "latest", b)
		s.do("PATCH", "/v1/portgroups/pg-two", "1.25", b)
	}
}

func (s *script) nodeActions() {
	node := "/v1/nodes/" + n2
	for _, v := range []string{"", "1.11", "1.12", "latest"} {
		for _, b := range []string{"", "{}", `{"reason": "r"}`, `{"reason": 1}`, `{"bogus": 1}`, "[]", "{"} {
			s.do("PUT", node+"/maintenance", v, b)
		}
		s.do("PUT", node+"/maintenance?reason=query", v, "")
		s.do("PUT", node+"/maintenance?bogus=1", v, "")
		s.do("DELETE", node+"/maintenance", v, "")
		s.do("DELETE", node+"/maintenance?reason=x", v, "")
	}
	for _, b := range []string{`{"boot_device": "pxe"}`, `{"boot_device": "disk", "persistent": true}`,
		`{"boot_device": "bogus"}`, `{"boot_device": 1}`, `{}`, `{"boot_device": "pxe", "persistent": "maybe"}`,
		`{"boot_device": "pxe", "bogus": 1}`, "", "[]"} {
		s.do("PUT", node+"/management/boot_device", "latest", b)
		s.get(node+"/management/boot_device", "latest")
	}
	for _, v := range []string{"1.36", "1.37", "latest"} {
		for _, b := range []string{`{"traits": ["CUSTOM_X", "CUSTOM_Y"]}`, `{"traits": []}`, `{"traits": "x"}`, `{"traits": [1]}`,
			`{"traits": ["bad trait"]}`, `{"traits": ["CUSTOM_X"], "bogus": 1}`, `{}`, "", "[]",
			js(obj{"traits": func() []any {
				var t []any
				for i := range 51 {
					t = append(t, fmt.Sprintf("CUSTOM_T%d", i))
				}
				return t
			}()})} {
			s.do("PUT", node+"/traits", v, b)
			s.get(node+"/traits", v)
		}
		for _, t := range []string{"CUSTOM_ONE", "bad trait", "lower", "CUSTOM_ONE"} {
			s.do("PUT", node+"/traits/"+t, v, "")
			s.do("PUT", node+"/traits/"+t, v, `{"a": 1}`)
		}
		s.do("DELETE", node+"/traits/CUSTOM_ONE", v, "")
		s.do("DELETE", node+"/traits/CUSTOM_NONE", v, "")
		s.do("DELETE", node+"/traits", v, "")
	}
	for _, b := range []string{`{"enabled": true}`, `{"enabled": "false"}`, `{"enabled": "maybe"}`, `{}`, `{"enabled": null}`, `{"enabled": true, "x": 1}`} {
		s.do("PUT", node+"/states/console", "latest", b)
		s.waitNode(n2)
		s.get(node+"/states/console", "latest")
		s.do("PUT", "/v1/nodes/"+n4+"/states/console", "latest", b)
	}
	s.do("PUT", "/v1/nodes/states/console/"+n2, "latest", `{"enabled": false}`)
	for _, v := range []string{"1.11", "1.12", "latest"} {
		for _, b := range []string{`{}`, `{"logical_disks": [{"size_gb": 10, "raid_level": "1"}]}`,
			`{"logical_disks": [{"size_gb": "MAX", "raid_level": "0", "is_root_volume": true}]}`,
			`{"logical_disks": []}`, `{"logical_disks": [{"size_gb": -1, "raid_level": "1"}]}`,
			`{"logical_disks": [{"raid_level": "1"}]}`, `{"logical_disks": [{"size_gb": 1, "raid_level": "7"}]}`,
			`{"logical_disks": "x"}`, `{"bogus": 1}`, `[]`, `"x"`, ""} {
			s.do("PUT", node+"/states/raid", v, b)
		}
		s.do("PUT", "/v1/nodes/"+n4+"/states/raid", v, `{}`)
	}
	s.get(node, "latest")
	s.get(node+"/states", "1.11", "1.12", "1.74", "latest")
	s.get("/v1/nodes/"+n1+"/vifs", "1.27", "1.28", "latest")
	s.get("/v1/nodes/"+n2+"/vifs", "latest")
}

func (s *script) powerVerbs() {
	for _, v := range []string{"", "1.26", "1.27", "latest"} {
		for _, b := range []string{`{"target": "power on"}`, `{"target": "power off"}`, `{"target": "rebooting"}`,
			`{"target": "soft rebooting"}`, `{"target": "soft power off"}`, `{"target": "bogus"}`, `{"target": 1}`, `{}`,
			`{"target": "power on", "timeout": 5}`, `{"target": "power on", "timeout": 0}`, `{"target": "power on", "timeout": -1}`,
			`{"target": "power on", "timeout": "5"}`, `{"target": "power on", "timeout": 1.5}`, `{"target": "power on", "timeout": true}`,
			`{"target": "power off", "bogus": 1}`, "", "[]"} {
			s.power(n2, v, b)
		}
	}
	s.power("nope", "latest", `{"target": "power on"}`)
	s.power(n2, "latest", `{"target": "power off"}`)
}

// verbs are every provision target Ironic knows, and some it does not.
var verbs = []struct{ target, extra string }{
	{"bogus", ""}, {"manage", ""}, {"inspect", ""}, {"provide", ""}, {"deploy", ""}, {"rescue", `, "rescue_password": "pw"`},
	{"unrescue", ""}, {"rebuild", ""}, {"undeploy", ""}, {"manage", ""},
	{"clean", `, "clean_steps": [{"interface": "deploy", "step": "erase_devices"}]`}, {"adopt", ""}, {"abort", ""},
	{"provide", ""}, {"active", `, "configdrive": "abc"`}, {"deleted", ""}, {"unhold", ""}, {"service", ""},
}

func (s *script) provisionVerbs() {
	for _, v := range []string{"", "1.3", "1.4", "1.5", "1.6", "1.12", "1.13", "1.14", "1.15", "1.16", "1.17",
		"1.37", "1.38", "1.40", "1.41", "1.72", "1.73", "latest"} {
		for _, verb := range verbs {
			s.provision(n9, v, verb.target, verb.extra)
		}
		s.get("/v1/nodes/"+n9, v)
		// Back to manageable for the next version.
		for _, back := range []string{"unrescue", "undeploy", "manage", "abort", "manage"} {
			s.provision(n9, "latest", back, "")
		}
	}
	// Arguments: the wrong ones for a verb, and bad shapes.
	for _, extra := range []string{`, "configdrive": "x"`, `, "clean_steps": []`, `, "deploy_steps": []`,
		`, "rescue_password": "x"`, `, "disable_ramdisk": true`, `, "service_steps": []`, `, "runbook": "r"`, `, "bogus": 1`} {
		s.provision(n9, "latest", "provide", extra)
		s.provision(n9, "latest", "manage", "")
	}
	for _, steps := range []string{`null`, `[]`, `"x"`, `["x"]`, `[{}]`, `[{"interface": "deploy"}]`,
		`[{"interface": "nope", "step": "s"}]`, `[{"interface": "deploy", "step": ""}]`, `[{"interface": "deploy", "step": 1}]`,
		`[{"interface": "deploy", "step": "s", "args": "x"}]`, `[{"interface": "deploy", "step": "s", "bogus": 1}]`,
		`[{"interface": "bios", "step": "apply_configuration", "args": {"settings": []}}]`,
		`[{"interface": "raid", "step": "create_configuration"}]`} {
		s.provision(n9, "latest", "clean", `, "clean_steps": `+steps)
		s.provision(n9, "latest", "manage", "")
	}
	s.provision(n9, "latest", "provide", "")
	s.provision(n9, "latest", "deploy", "")
	s.provision(n9, "latest", "rescue", `, "rescue_password": ""`)
	s.provision(n9, "latest", "rescue", `, "rescue_password": "  "`)
	s.provision(n9, "latest", "rescue", "")
	for _, b := range []string{"", "{}", `{"target": 1}`, "[]", `{"target": "manage", "x": 1}`} {
		s.do("PUT", "/v1/nodes/"+n9+"/states/provision", "latest", b)
	}
	s.provision(n11, "", "manage", "")
	s.provision(n11, "1.4", "manage", "")
	s.provision(n6, "latest", "manage", "")
	s.provision(n3, "latest", "manage", "")
	s.provision("nope", "latest", "manage", "")
	for _, v := range []string{"1.1", "1.22", "latest"} {
		s.get("/v1/nodes/"+n9+"/history", v)
		s.get("/v1/nodes/"+n9+"/history?detail=true&limit=3", v)
		s.get("/v1/nodes/"+n9+"/history?marker="+scratchID(1), v)
	}
	s.get("/v1/nodes/"+n9+"/history?detail=bogus", "latest")
	s.get("/v1/nodes/"+n9+"/history?limit=0", "latest")
	s.get("/v1/nodes?provision_state=active", "latest")
	s.get("/v1/nodes/detail?associated=true", "latest")
}

func (s *script) allocations() {
	for _, v := range []string{"1.51", "1.52", "1.56", "1.57", "1.58", "1.59", "1.60", "latest"} {
		for _, body := range []obj{
			{"resource_class": "nomatch"},
			{"resource_class": "nomatch", "owner": "o"},
			{"node": n9},
			{"node": "nope"},
			{"node": n2, "resource_class": "other"},
			{"candidate_nodes": []any{"nope"}, "resource_class": "x"},
			{"candidate_nodes": []any{n2, "node-2"}, "resource_class": "gold"},
			{"name": "bad name", "resource_class": "x"},
			{"name": "alloc-one", "resource_class": "x"},
			{"traits": []any{"bad trait"}, "resource_class": "x"},
			{"resource_class": strings.Repeat("r", 81)},
			{},
		} {
			s.allocs++
			aid := id('5', s.allocs)
			body["uuid"] = aid
			s.do("POST", "/v1/allocations", v, js(body))
			s.waitAllocation(aid)
			s.get("/v1/allocations/"+aid, "latest")
			s.do("DELETE", "/v1/allocations/"+aid, "latest", "")
			s.waitNode(n9)
			s.waitNode(n2)
		}
		for _, b := range []string{`[{"op": "replace", "path": "/name", "value": "renamed"}]`,
			`[{"op": "replace", "path": "/name", "value": "alloc-one"}]`, `[{"op": "add", "path": "/extra/x", "value": 1}]`,
			`[{"op": "replace", "path": "/name", "value": "bad name"}]`, `[{"op": "replace", "path": "/owner", "value": "o"}]`,
			`[{"op": "remove", "path": "/name"}]`, `[{"op": "replace", "path": "/name", "value": "alloc-fail"}]`} {
			s.do("PATCH", "/v1/allocations/alloc-fail", v, b)
			s.do("PATCH", "/v1/allocations/"+allocID(2), v, b)
		}
		s.get("/v1/nodes/"+n7+"/allocation?fields=uuid,node_uuid", v)
		s.get("/v1/nodes/"+n2+"/allocation", v)
	}
	s.do("DELETE", "/v1/nodes/"+n8+"/allocation", "latest", "")
	s.do("DELETE", "/v1/allocations/"+allocID(3), "latest", "")
	s.do("DELETE", "/v1/nodes/"+n7+"/allocation", "1.51", "")
	s.do("DELETE", "/v1/nodes/"+n7+"/allocation", "latest", "")
	s.waitNode(n7)
	s.get("/v1/nodes/"+n7, "latest")
	s.get("/v1/allocations", "latest")
}

func (s *script) deletes() {
	for _, p := range []string{
		"/v1/chassis/" + chassisID(1), "/v1/portgroups/" + pgID(1), "/v1/nodes/" + n10, "/v1/nodes/" + n8,
		"/v1/nodes/" + n9, "/v1/ports/" + portID(1) + "?x=1", "/v1/volume/connectors/" + connID(1),
		"/v1/nodes/" + n5 + "?bogus=1", "/v1/nodes/nope", "/v1/nodes/bad!", "/v1/allocations/nope",
	} {
		s.do("DELETE", p, "latest", "")
	}
	s.power(n1, "latest", `{"target": "power on"}`)
	s.do("DELETE", "/v1/volume/connectors/"+connID(1), "latest", "")
	s.do("DELETE", "/v1/volume/targets/"+targetID(1), "latest", "")
	s.do("DELETE", "/v1/ports/"+portID(1), "latest", "")
	s.power(n1, "latest", `{"target": "power off"}`)
	for _, p := range []string{
		"/v1/volume/connectors/" + connID(1), "/v1/volume/targets/" + targetID(1), "/v1/ports/" + portID(2),
		"/v1/portgroups/" + pgID(1), "/v1/deploy_templates/CUSTOM_DT_TWO", "/v1/deploy_templates/" + templateID(2),
		"/v1/nodes/" + n4, "/v1/nodes/" + n4, "/v1/chassis/" + chassisID(2), "/v1/nodes/" + n3, "/v1/chassis/" + chassisID(2),
	} {
		s.do("DELETE", p, "latest", "")
	}
	for _, v := range []string{"1.22", "1.23", "1.31", "1.32", "1.54", "1.55"} {
		s.do("DELETE", "/v1/portgroups/pg-two", v, "")
		s.do("DELETE", "/v1/volume/targets/"+targetID(2), v, "")
		s.do("DELETE", "/v1/deploy_templates/"+templateID(1), v, "")
	}
}

func (s *script) finalState() {
	for _, p := range []string{"/v1/nodes/detail", "/v1/ports/detail", "/v1/portgroups/detail", "/v1/chassis/detail",
		"/v1/allocations", "/v1/deploy_templates/detail", "/v1/volume/connectors/detail", "/v1/volume/targets/detail", "/v1/shards"} {
		s.get(p, "1.1", "1.40", "latest")
	}
	for i := range bulkNodes {
		s.get("/v1/nodes/"+bulkID(i)+"/states", "latest")
	}
}
