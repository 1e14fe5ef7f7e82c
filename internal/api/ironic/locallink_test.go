package ironic

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The messages are what Ironic master's schema gives through Python's
// jsonschema (4.26) for the same bodies (keys in sorted order, as
// encoding/json sends them and pyRepr prints them).
func TestValidateLocalLink_IronicMessages(t *testing.T) {
	const anyOf = " is not valid under any of the given schemas. Possible root cause: "
	for _, c := range []struct {
		llc  map[string]any
		want string // "" when valid
	}{
		{map[string]any{}, ""},
		{map[string]any{"port_id": "p", "switch_id": "aa:bb:cc:dd:ee:ff"}, ""},
		{map[string]any{"port_id": "p", "hostname": "h"}, ""},
		{map[string]any{"network_type": "unmanaged"}, ""},
		{map[string]any{"port_id": "p", "vtep-logical-switch": "l", "vtep-physical-switch": "s"}, ""},
		{map[string]any{"port_id": "p", "switch_id": "aa:bb:cc:dd:ee:ff", "vtep-logical-switch": "l", "vtep-physical-switch": "s"}, ""},
		{map[string]any{"network_type": "unmanaged", "vtep-logical-switch": "l", "vtep-physical-switch": "s"}, ""},
		{map[string]any{"port_id": "p", "vtep-logical-switch": "l"},
			"{'port_id': 'p', 'vtep-logical-switch': 'l'}" + anyOf + "'vtep-physical-switch' is a dependency of 'vtep-logical-switch'"},
		{map[string]any{"port_id": "p", "vtep-physical-switch": "s"},
			"{'port_id': 'p', 'vtep-physical-switch': 's'}" + anyOf + "'vtep-logical-switch' is a dependency of 'vtep-physical-switch'"},
		{map[string]any{"vtep-logical-switch": "l", "vtep-physical-switch": "s"},
			"{'vtep-logical-switch': 'l', 'vtep-physical-switch': 's'}" + anyOf + "'port_id' is a required property"},
		{map[string]any{"port_id": "p", "vtep-logical-switch": 5, "vtep-physical-switch": "s"},
			"{'port_id': 'p', 'vtep-logical-switch': 5, 'vtep-physical-switch': 's'}" + anyOf + "'switch_id' is a required property"},
		{map[string]any{"network_type": "unmanaged", "vtep-logical-switch": "l"},
			"{'network_type': 'unmanaged', 'vtep-logical-switch': 'l'}" + anyOf + "'vtep-physical-switch' is a dependency of 'vtep-logical-switch'"},
		{map[string]any{"port_id": "p", "vlan": 3},
			"{'port_id': 'p', 'vlan': 3}" + anyOf + "Additional properties are not allowed ('vlan' was unexpected)"},
		{map[string]any{"a": 1, "b": 2, "port_id": "p"},
			"{'a': 1, 'b': 2, 'port_id': 'p'}" + anyOf + "Additional properties are not allowed ('a', 'b' were unexpected)"},
		{map[string]any{"port_id": "p"}, "{'port_id': 'p'}" + anyOf + "'switch_id' is a required property"},
		{map[string]any{"port_id": 5, "switch_id": "aa:bb:cc:dd:ee:ff"},
			"{'port_id': 5, 'switch_id': 'aa:bb:cc:dd:ee:ff'}" + anyOf + "'hostname' is a required property"},
		{map[string]any{"port_id": nil, "switch_id": "aa"}, "{'port_id': None, 'switch_id': 'aa'}" + anyOf + "'hostname' is a required property"},
		{map[string]any{"network_type": "bogus", "port_id": "p", "switch_id": "aa:bb:cc:dd:ee:ff"},
			"{'network_type': 'bogus', 'port_id': 'p', 'switch_id': 'aa:bb:cc:dd:ee:ff'}" + anyOf + "'hostname' is a required property"},
		{map[string]any{"network_type": 5}, "{'network_type': 5}" + anyOf + "'port_id' is a required property"},
		{map[string]any{"hostname": 5, "network_type": "managed"}, "{'hostname': 5, 'network_type': 'managed'}" + anyOf + "'port_id' is a required property"},
		// Only the unmanaged branch refuses "managed": best_match descends to it.
		{map[string]any{"network_type": "managed"}, "'managed' is not one of ['unmanaged']"},
		{map[string]any{"network_type": "managed", "port_id": "p"}, "'managed' is not one of ['unmanaged']"},
		{map[string]any{"network_type": "managed", "vtep-physical-switch": "s"}, "'managed' is not one of ['unmanaged']"},
	} {
		got := ""
		if err := validateLocalLink(c.llc); err != nil {
			got = err.(*apiError).msg
		}
		want := c.want
		if want != "" {
			want = "Schema error for local_link_connection: " + want
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%v (-want +got):\n%s", c.llc, d)
		}
	}
}

func TestPorts_OVNVTEPGatedAsIronicMaster(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "vtep"}), "uuid")
	vtep := map[string]any{"port_id": "p1", "vtep-logical-switch": "ls", "vtep-physical-switch": "ps"}
	body := func(mac string, llc map[string]any) map[string]any {
		return map[string]any{"node_uuid": id, "address": mac, "local_link_connection": llc}
	}

	// Create: 406 below 1.90 and from 1.105 (the feature's removal), and
	// nothing is made.
	before := e.snapshot()
	for _, v := range []string{"1.89", "1.105", "1.115"} {
		e.must(406, "POST", "/v1/ports", v, body("52:54:00:00:10:01", vtep))
	}
	// A half pair is a schema error at every version.
	for _, v := range []string{"1.89", "1.90", "1.105"} {
		f := e.must(400, "POST", "/v1/ports", v, body("52:54:00:00:10:01",
			map[string]any{"port_id": "p1", "vtep-logical-switch": "ls"})).fault(t)
		if want := "Schema error for local_link_connection: {'port_id': 'p1', 'vtep-logical-switch': 'ls'} is not valid under any of the given schemas. Possible root cause: 'vtep-physical-switch' is a dependency of 'vtep-logical-switch'"; f["faultstring"] != want {
			t.Errorf("%s: %v", v, f["faultstring"])
		}
	}
	if d := cmp.Diff(before, e.snapshot()); d != "" {
		t.Fatalf("refused creates changed the store:\n%s", d)
	}

	p90 := e.must(201, "POST", "/v1/ports", "1.90", body("52:54:00:00:10:01", vtep)).json(t)
	e.must(201, "POST", "/v1/ports", "1.104", body("52:54:00:00:10:02", vtep))
	if d := cmp.Diff(vtep, p90["local_link_connection"]); d != "" {
		t.Errorf("1.90 create answer (-want +got):\n%s", d)
	}
	path := "/v1/ports/" + str(p90, "uuid")

	// Shown at 1.90–1.104; outside, the member stays but is empty.
	for v, want := range map[string]any{"1.89": map[string]any{}, "1.90": vtep, "1.104": vtep, "1.105": map[string]any{}, "1.115": map[string]any{}} {
		if d := cmp.Diff(want, e.must(200, "GET", path, v, nil).json(t)["local_link_connection"]); d != "" {
			t.Errorf("GET at %s (-want +got):\n%s", v, d)
		}
		got := e.must(200, "GET", "/v1/ports?fields=local_link_connection&address=52:54:00:00:10:01", v, nil).json(t)["ports"].([]any)
		if d := cmp.Diff(want, got[0].(map[string]any)["local_link_connection"]); d != "" {
			t.Errorf("list at %s (-want +got):\n%s", v, d)
		}
	}

	// PATCH is not gated (Ironic checks the create body only): a 1.105
	// client may set the pair, and then sees {}.
	other := e.must(201, "POST", "/v1/ports", "1.115", body("52:54:00:00:10:03", nil)).json(t)
	opath := "/v1/ports/" + str(other, "uuid")
	got := e.must(200, "PATCH", opath, "1.105", []map[string]any{{"op": "add", "path": "/local_link_connection", "value": vtep}}).json(t)
	if d := cmp.Diff(map[string]any{}, got["local_link_connection"]); d != "" {
		t.Errorf("1.105 PATCH answer (-want +got):\n%s", d)
	}
	if d := cmp.Diff(vtep, e.must(200, "GET", opath, "1.100", nil).json(t)["local_link_connection"]); d != "" {
		t.Errorf("after the PATCH, 1.100 sees (-want +got):\n%s", d)
	}
	before = e.snapshot()
	e.must(400, "PATCH", opath, "1.100", []map[string]any{{"op": "remove", "path": "/local_link_connection/vtep-physical-switch"}})
	if d := cmp.Diff(before, e.snapshot()); d != "" {
		t.Fatalf("a refused PATCH changed the store:\n%s", d)
	}
}
