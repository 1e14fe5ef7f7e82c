package plan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/google/go-cmp/cmp"
)

func TestNode_Patch(t *testing.T) {
	n := newNode(t, baremetal.JSON{"cpus": "8", "list": []any{"a"}})
	ops := []PatchOp{
		add("extra/rack", "r12"), // no leading slash, as upstream accepts
		{Op: "replace", Path: "/properties/cpus", Value: "16"},
		add("/properties/list/-", "b"),
		add("/properties/list/0", "z"),
		{Op: "remove", Path: "/properties/list/1"},
		add("/properties/a~1b", 1),
		add("/driver_info/ipmi_username", nil),
	}
	if err := n.Patch(ops...); err != nil {
		t.Fatal(err)
	}
	wantProps := map[string]any{"cpus": "16", "list": []any{"z", "b"}, "a/b": json.Number("1")}
	if diff := cmp.Diff(wantProps, n.Properties()); diff != "" {
		t.Errorf("properties (-want +got):\n%s", diff)
	}
	if v, ok := n.GetByPath("/extra/rack"); !ok || v != "r12" {
		t.Errorf("GetByPath(/extra/rack) = %v, %v", v, ok)
	}
	if v, ok := n.GetByPath("driver_info/ipmi_username"); !ok || v != nil {
		t.Errorf("GetByPath(driver_info/ipmi_username) = %v, %v", v, ok)
	}
	if _, ok := n.GetByPath("/extra/missing"); ok {
		t.Error("GetByPath found a missing key")
	}
	ops[0].Path = "/extra/rack"
	if diff := cmp.Diff(ops, n.Changes().NodePatch); diff != "" {
		t.Errorf("recorded ops (-want +got):\n%s", diff)
	}

	for _, bad := range []PatchOp{
		{Op: "replace", Path: "/properties/missing", Value: 1},
		{Op: "remove", Path: "/properties/missing"},
		add("/properties/nested/deep", 1),
		add("/properties/cpus/x", 1),
		add("/properties/list/7", 1),
		{Op: "move", Path: "/properties/cpus"},
	} {
		if err := n.Patch(bad); err == nil {
			t.Errorf("Patch(%+v): no error", bad)
		}
	}
	if got := len(n.Changes().NodePatch); got != len(ops) {
		t.Errorf("failed ops were recorded: %d ops", got)
	}
}

func TestNode_UpdateCapabilities(t *testing.T) {
	n := newNode(t, baremetal.JSON{"capabilities": "boot_mode:bios,cpu_vt:false,x:1:2"})
	err := n.UpdateCapabilities(Capability{"cpu_vt", "true"}, Capability{"boot_mode", nil}, Capability{"gpus", 2}, Capability{"flag", true}, Capability{"ratio", 1.0})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n.Properties()["capabilities"], "cpu_vt:true,x:1:2,gpus:2,flag:True,ratio:1.0"; got != want {
		t.Errorf("capabilities %q, want %q", got, want)
	}
}

func TestNode_PortsAndTraits(t *testing.T) {
	n := newNode(t, nil, bmPort("p1", "52:54:00:00:00:0A", true), bmPort("p2", "52:54:00:00:00:0b", false))
	n.traits, n.origTraits = []string{"CUSTOM_A", "CUSTOM_B"}, []string{"CUSTOM_A", "CUSTOM_B"}

	if n.CreatePort(PortCreate{Address: "52:54:00:00:00:0a"}) {
		t.Error("created a port over an existing one")
	}
	if !n.CreatePort(PortCreate{Address: "52:54:00:00:00:0C", PXEEnabled: true}) || !n.CreatePort(PortCreate{Address: "52:54:00:00:00:0d"}) {
		t.Fatal("CreatePort failed")
	}
	if err := n.PatchPort("52:54:00:00:00:0c", add("/local_link_connection/port_id", "Eth1")); err != nil {
		t.Fatal(err)
	}
	if err := n.PatchPort("52:54:00:00:00:0A", PatchOp{Op: "replace", Path: "/pxe_enabled", Value: false}); err != nil {
		t.Fatal(err)
	}
	if !n.DeletePort("52:54:00:00:00:0b") || !n.DeletePort("52:54:00:00:00:0d") || n.DeletePort("52:54:00:00:00:ff") {
		t.Error("DeletePort results")
	}
	if err := n.PatchPort("52:54:00:00:00:0b", add("/extra/x", 1)); err == nil {
		t.Error("patched a deleted port")
	}
	n.AddTrait("CUSTOM_C")
	n.AddTrait("CUSTOM_A")
	n.RemoveTrait("CUSTOM_B")
	n.RemoveTrait("CUSTOM_MISSING")

	want := Changes{
		CreatePorts:  []PortCreate{{Address: "52:54:00:00:00:0c", PXEEnabled: true, LocalLinkConnection: map[string]any{"port_id": "Eth1"}}},
		DeletePorts:  []PortRef{{UUID: "p2", Address: "52:54:00:00:00:0b"}},
		PatchPorts:   []PortPatch{{PortRef: PortRef{UUID: "p1", Address: "52:54:00:00:00:0a"}, Ops: []PatchOp{{Op: "replace", Path: "/pxe_enabled", Value: false}}}},
		AddTraits:    []string{"CUSTOM_C"},
		RemoveTraits: []string{"CUSTOM_B"},
	}
	if diff := cmp.Diff(want, n.Changes()); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	var addrs []string
	for _, p := range n.Ports() {
		addrs = append(addrs, p.Address)
	}
	if diff := cmp.Diff([]string{"52:54:00:00:00:0a", "52:54:00:00:00:0c"}, addrs); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
}

func TestChanges_JSON(t *testing.T) {
	c := Changes{NodePatch: []PatchOp{{Op: "remove", Path: "/extra/a"}, add("/extra/b", nil)}, ResetInterfaces: true}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"node_patch":[{"op":"remove","path":"/extra/a"},{"op":"add","path":"/extra/b","value":null}],"reset_interfaces":true}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	if !(Changes{}).IsZero() || c.IsZero() {
		t.Error("IsZero")
	}
	if !strings.Contains(string(b), "remove") {
		t.Error("lost the op")
	}
}

// newNode returns a node in inspect wait with properties and ports.
func newNode(t *testing.T, props baremetal.JSON, ports ...baremetal.Port) *Node {
	t.Helper()
	if props == nil {
		props = baremetal.JSON{}
	}
	n, err := New(baremetal.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", ProvisionState: "inspect wait", Properties: props}, ports)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func add(path string, value any) PatchOp { return PatchOp{Op: "add", Path: path, Value: value} }

func bmPort(uuid, mac string, pxe bool) baremetal.Port {
	return baremetal.Port{UUID: uuid, Address: mac, PXEEnabled: pxe}
}

func TestNode_SetDeleteExtend(t *testing.T) {
	n := newNode(t, baremetal.JSON{"root": map[string]any{"a": 1}, "list": []any{"x"}, "s": "str"},
		bmPort("3f1b0e5a-0000-4000-8000-000000000001", "52:54:00:00:00:01", true))
	steps := []struct {
		name string
		do   func() error
		ok   bool
	}{
		{"set a new nested key, creating the objects on the way", func() error {
			return n.Set([]string{"driver_info", "redfish", "system", "id"}, "/redfish/v1/Systems/1")
		}, true},
		{"set a top-level field", func() error { return n.Set([]string{"name"}, "node-1") }, true},
		{"set through a string", func() error { return n.Set([]string{"properties", "s", "x"}, 1) }, false},
		{"set a field rules may not change", func() error { return n.Set([]string{"provision_state"}, "active") }, false},
		{"delete an existing key", func() error { return n.Delete([]string{"properties", "root", "a"}) }, true},
		{"delete a missing key", func() error { return n.Delete([]string{"properties", "nope"}) }, false},
		{"extend a list", func() error { return n.Extend([]string{"properties", "list"}, "y", false) }, true},
		{"extend unique, already there", func() error { return n.Extend([]string{"properties", "list"}, "y", true) }, true},
		{"extend a missing list", func() error { return n.Extend([]string{"extra", "tags"}, "t", true) }, true},
		{"extend a string", func() error { return n.Extend([]string{"properties", "s"}, "t", false) }, false},
		{"set a port field by MAC", func() error {
			return n.SetPort("52:54:00:00:00:01", []string{"local_link_connection", "switch_id"}, "aa:bb:cc:dd:ee:ff")
		}, true},
		{"extend a port list", func() error { return n.ExtendPort("52:54:00:00:00:01", []string{"extra", "l"}, 1, false) }, true},
		{"delete a port field", func() error {
			return n.DeletePortField("52:54:00:00:00:01", []string{"local_link_connection", "switch_id"})
		}, true},
		{"set a port field ports do not have", func() error { return n.SetPort("52:54:00:00:00:01", []string{"node_uuid"}, "x") }, false},
	}
	for _, s := range steps {
		if err := s.do(); (err == nil) != s.ok {
			t.Errorf("%s: error %v, want ok %v", s.name, err, s.ok)
		}
	}
	if v, _ := n.Get([]string{"driver_info", "redfish", "system", "id"}); v != "/redfish/v1/Systems/1" {
		t.Errorf("driver_info = %v", n.Fields()["driver_info"])
	}
	if diff := cmp.Diff(map[string]any{"root": map[string]any{}, "list": []any{"x", "y"}, "s": "str"}, n.Properties(),
		cmp.Comparer(func(a, b json.Number) bool { return a == b })); diff != "" {
		t.Errorf("properties (-want +got):\n%s", diff)
	}
	if v, _ := n.Get([]string{"extra", "tags"}); !cmp.Equal(v, []any{"t"}) {
		t.Errorf("extra.tags = %v", v)
	}
	if mac, ok := n.PortAddress("3F1B0E5A-0000-4000-8000-000000000001"); ok {
		t.Errorf("a UUID in other case found %s", mac)
	}
	for _, id := range []string{"3f1b0e5a-0000-4000-8000-000000000001", "52:54:00:00:00:01", "52:54:00:00:00:01"} {
		if mac, ok := n.PortAddress(id); !ok || mac != "52:54:00:00:00:01" {
			t.Errorf("PortAddress(%s) = %s, %v", id, mac, ok)
		}
	}
	p, _ := n.PortFieldsOf("52:54:00:00:00:01")
	if diff := cmp.Diff(map[string]any{}, p["local_link_connection"]); diff != "" || !cmp.Equal(p["extra"], map[string]any{"l": []any{json.Number("1")}}) {
		t.Errorf("port: %v", p)
	}
	want := []PatchOp{
		add("/driver_info/redfish", map[string]any{}), add("/driver_info/redfish/system", map[string]any{}),
		add("/driver_info/redfish/system/id", "/redfish/v1/Systems/1"), add("/name", "node-1"),
		{Op: "remove", Path: "/properties/root/a"}, add("/properties/list", []any{"x", "y"}), add("/extra/tags", []any{"t"}),
	}
	if diff := cmp.Diff(want, n.Changes().NodePatch); diff != "" {
		t.Errorf("node patch (-want +got):\n%s", diff)
	}
	if got := n.Fields()["boot_interface"]; got != nil {
		t.Errorf("boot_interface of a node without interfaces: %v", got)
	}
	if _, ok := n.Fields()["description"]; !ok {
		t.Error("description is not in the node's fields")
	}
}
