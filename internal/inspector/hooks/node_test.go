package hooks

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
