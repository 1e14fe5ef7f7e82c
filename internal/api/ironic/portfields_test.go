package ironic

import (
	"fmt"
	"strings"
	"testing"
)

// The port fields of Ironic master, each from its version (1.88 name,
// 1.97 description, 1.100 vendor, 1.101 category, 1.111
// available_for_dynamic_portgroup, default true): below it not shown, not
// writable (406); at it written, shown and patched.
func TestPorts_MasterFields(t *testing.T) {
	e := newEnv(t)
	nid := str(e.createNode(map[string]any{"name": "pf"}), "uuid")
	fields := []struct {
		name  string
		min   int
		value any
	}{
		{"name", 88, "eth0"}, {"description", 97, "first NIC"}, {"vendor", 100, "intel"},
		{"category", 101, "fast"}, {"available_for_dynamic_portgroup", 111, false},
	}
	for i, f := range fields {
		below, at := fmt.Sprintf("1.%d", f.min-1), fmt.Sprintf("1.%d", f.min)
		mac := fmt.Sprintf("52:54:00:00:10:%02x", i)
		e.must(406, "POST", "/v1/ports", below, map[string]any{"node_uuid": nid, "address": mac, f.name: f.value})
		p := e.must(201, "POST", "/v1/ports", at, map[string]any{"node_uuid": nid, "address": mac, f.name: f.value}).json(t)
		if fmt.Sprint(p[f.name]) != fmt.Sprint(f.value) {
			t.Errorf("%s at %s: %v", f.name, at, p)
		}
		id := str(p, "uuid")
		if got := e.must(200, "GET", "/v1/ports/"+id, below, nil).json(t); got[f.name] != nil {
			t.Errorf("%s shown at %s: %v", f.name, below, got)
		}
		e.must(406, "GET", "/v1/ports/"+id+"?fields="+f.name, below, nil)
		e.must(406, "PATCH", "/v1/ports/"+id, below, []map[string]any{{"op": "remove", "path": "/" + f.name}})
		patched := e.must(200, "PATCH", "/v1/ports/"+id, at, []map[string]any{{"op": "remove", "path": "/" + f.name}}).json(t)
		want := "<nil>"
		if f.name == "available_for_dynamic_portgroup" {
			want = "true" // its default
		}
		if fmt.Sprint(patched[f.name]) != want {
			t.Errorf("%s removed: %v", f.name, patched[f.name])
		}
	}
	// Every port is available for dynamic portgroups unless it says not.
	p := e.must(201, "POST", "/v1/ports", "1.111", map[string]any{"node_uuid": nid, "address": "52:54:00:00:10:ff"}).json(t)
	if p["available_for_dynamic_portgroup"] != true {
		t.Errorf("default: %v", p)
	}
	for _, tc := range []struct {
		field string
		n     int
	}{{"description", 256}, {"vendor", 33}, {"category", 81}} {
		f := e.must(400, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": nid, "address": "52:54:00:00:11:00", tc.field: strings.Repeat("x", tc.n)}).fault(t)
		if !strings.Contains(fmt.Sprint(f["faultstring"]), "maximum character requirement") {
			t.Errorf("%s too long: %v", tc.field, f)
		}
	}
}

// The portgroup fields of Ironic master: 1.102 physical_network, 1.103
// category (writable), 1.111 dynamic_portgroup (read-only, false).
func TestPortgroups_MasterFields(t *testing.T) {
	e := newEnv(t)
	nid := str(e.createNode(map[string]any{"name": "pgf"}), "uuid")
	for i, f := range []struct {
		name string
		min  int
	}{{"physical_network", 102}, {"category", 103}} {
		below, at := fmt.Sprintf("1.%d", f.min-1), fmt.Sprintf("1.%d", f.min)
		e.must(406, "POST", "/v1/portgroups", below, map[string]any{"node_uuid": nid, f.name: "x"})
		pg := e.must(201, "POST", "/v1/portgroups", at, map[string]any{"node_uuid": nid, "name": fmt.Sprintf("pg%d", i), f.name: "x"}).json(t)
		if pg[f.name] != "x" {
			t.Errorf("%s at %s: %v", f.name, at, pg)
		}
		if got := e.must(200, "GET", "/v1/portgroups/"+str(pg, "uuid"), below, nil).json(t); got[f.name] != nil {
			t.Errorf("%s shown at %s: %v", f.name, below, got)
		}
		e.must(200, "PATCH", "/v1/portgroups/"+str(pg, "uuid"), at, []map[string]any{{"op": "replace", "path": "/" + f.name, "value": "y"}})
	}
	pg := e.must(201, "POST", "/v1/portgroups", "latest", map[string]any{"node_uuid": nid}).json(t)
	if pg["dynamic_portgroup"] != false {
		t.Errorf("dynamic_portgroup: %v", pg)
	}
	if got := e.must(200, "GET", "/v1/portgroups/"+str(pg, "uuid"), "1.110", nil).json(t); got["dynamic_portgroup"] != nil {
		t.Errorf("dynamic_portgroup at 1.110: %v", got)
	}
	e.must(400, "POST", "/v1/portgroups", "latest", map[string]any{"node_uuid": nid, "dynamic_portgroup": true})
	e.must(400, "POST", "/v1/portgroups", "latest", map[string]any{"node_uuid": nid, "category": strings.Repeat("c", 81)})
}

// Ports (1.82) and portgroups (1.106) filter by their nodes' shards, and
// both by their nodes' conductor groups; each filter is exclusive with the
// others as in Ironic.
func TestPortsAndPortgroups_ShardAndConductorGroupFilters(t *testing.T) {
	e := newEnv(t)
	a := str(e.createNode(map[string]any{"name": "sa", "shard": "s1", "conductor_group": "g1"}), "uuid")
	b := str(e.createNode(map[string]any{"name": "sb", "shard": "s2"}), "uuid")
	e.must(201, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": a, "address": "52:54:00:00:20:01"})
	e.must(201, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": b, "address": "52:54:00:00:20:02"})
	e.must(201, "POST", "/v1/portgroups", "latest", map[string]any{"node_uuid": a, "name": "pga"})
	e.must(201, "POST", "/v1/portgroups", "latest", map[string]any{"node_uuid": b, "name": "pgb"})
	count := func(path, version, key string) int {
		return len(e.must(200, "GET", path, version, nil).json(t)[key].([]any))
	}
	for _, tc := range []struct {
		path, version, key string
		want               int
	}{
		{"/v1/ports?shard=s1", "1.82", "ports", 1},
		{"/v1/ports?shard=s1,s2", "1.82", "ports", 2},
		{"/v1/ports?conductor_groups=G1", "1.82", "ports", 1},
		{"/v1/portgroups?shard=s2", "1.106", "portgroups", 1},
		{"/v1/portgroups?conductor_groups=g1", "1.99", "portgroups", 1},
		{"/v1/portgroups?conductor_groups=nope", "1.99", "portgroups", 0},
	} {
		if n := count(tc.path, tc.version, tc.key); n != tc.want {
			t.Errorf("%s at %s: %d, want %d", tc.path, tc.version, n, tc.want)
		}
	}
	e.must(406, "GET", "/v1/ports?shard=s1", "1.81", nil)
	e.must(406, "GET", "/v1/portgroups?shard=s1", "1.105", nil)
	e.must(403, "GET", "/v1/ports?shard=s1&node="+a, "latest", nil)
	e.must(400, "GET", "/v1/ports?conductor_groups=g1&node="+a, "latest", nil)
	e.must(400, "GET", "/v1/portgroups?shard=s1&node="+a, "latest", nil)
}

// From 1.88 a port is found by its name too (Ironic master's Port.get);
// names are unique.
func TestPorts_ByName(t *testing.T) {
	e := newEnv(t)
	nid := str(e.createNode(map[string]any{"name": "bn"}), "uuid")
	p := e.must(201, "POST", "/v1/ports", "1.88", map[string]any{"node_uuid": nid, "address": "52:54:00:00:30:01", "name": "eth0"}).json(t)
	if got := e.must(200, "GET", "/v1/ports/eth0", "1.88", nil).json(t); got["uuid"] != p["uuid"] {
		t.Errorf("by name: %v", got)
	}
	if f := e.must(400, "GET", "/v1/ports/eth0", "1.87", nil).fault(t); !strings.Contains(fmt.Sprint(f["faultstring"]), "Expected a UUID but received eth0") {
		t.Errorf("by name at 1.87: %v", f)
	}
	if f := e.must(404, "GET", "/v1/ports/eth9", "1.88", nil).fault(t); f["faultstring"] != "Port eth9 could not be found." {
		t.Errorf("unknown name: %v", f)
	}
	e.must(400, "GET", "/v1/ports/a:b", "1.88", nil)
	e.must(200, "PATCH", "/v1/ports/eth0", "1.97", []map[string]any{{"op": "add", "path": "/description", "value": "d"}})
	if f := e.must(409, "POST", "/v1/ports", "1.88", map[string]any{"node_uuid": nid, "address": "52:54:00:00:30:02", "name": "eth0"}).fault(t); f["faultstring"] != "A port with name eth0 already exists." {
		t.Errorf("duplicate name: %v", f)
	}
	e.must(204, "DELETE", "/v1/ports/eth0", "1.88", nil)
}

// ?description_contains= selects ports by a part of their description.
func TestPorts_DescriptionContains(t *testing.T) {
	e := newEnv(t)
	nid := str(e.createNode(map[string]any{"name": "dc"}), "uuid")
	e.must(201, "POST", "/v1/ports", "1.97", map[string]any{"node_uuid": nid, "address": "52:54:00:00:50:01", "description": "Uplink A"})
	e.must(201, "POST", "/v1/ports", "1.97", map[string]any{"node_uuid": nid, "address": "52:54:00:00:50:02", "description": "storage"})
	e.must(201, "POST", "/v1/ports", "1.97", map[string]any{"node_uuid": nid, "address": "52:54:00:00:50:03"})
	for q, want := range map[string]int{"uplink": 1, "a": 2, "": 3, "nope": 0} {
		if n := len(e.must(200, "GET", "/v1/ports?description_contains="+q, "1.97", nil).json(t)["ports"].([]any)); n != want {
			t.Errorf("description_contains=%s: %d, want %d", q, n, want)
		}
	}
}
