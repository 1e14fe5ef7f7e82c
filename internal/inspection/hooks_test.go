package inspection

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/inspection/rules"
	"github.com/ferrometal/ferro/internal/testing/iparelease"
)

const testNode = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"

// run processes body with the hooks of a dialect on a node with props
// and ports; mut changes the options.
func run(t *testing.T, d Dialect, hooks []string, mut func(*Options), body string, props baremetal.JSON, ports ...*baremetal.Port) (*Result, error) {
	t.Helper()
	o := DefaultOptions(d)
	o.Hooks = hooks
	if mut != nil {
		mut(&o)
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if props == nil {
		props = baremetal.JSON{}
	}
	n := &baremetal.Node{UUID: testNode, Driver: "ipmi", ProvisionState: "inspect wait", Properties: props, Extra: baremetal.JSON{}}
	return p.Process(context.Background(), rep, Target{Node: n, Ports: ports})
}

func mustRun(t *testing.T, d Dialect, hooks []string, mut func(*Options), body string, props baremetal.JSON, ports ...*baremetal.Port) *Result {
	t.Helper()
	res, err := run(t, d, hooks, mut, body, props, ports...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// props is the node's properties once the changes are applied.
func props(t *testing.T, c plan.Changes, start baremetal.JSON) map[string]any {
	t.Helper()
	if start == nil {
		start = baremetal.JSON{}
	}
	n, err := plan.New(baremetal.Node{UUID: testNode, Properties: start}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range c.NodePatch {
		if err := n.Patch(op); err != nil {
			t.Fatal(err)
		}
	}
	return n.Properties()
}

func port(uuid, mac string, pxe bool, extra baremetal.JSON) *baremetal.Port {
	if extra == nil {
		extra = baremetal.JSON{}
	}
	return &baremetal.Port{UUID: uuid, Address: mac, PXEEnabled: pxe, Extra: extra, LocalLinkConnection: baremetal.JSON{}}
}

func report(inventory string, extra ...string) string {
	s := `{"inventory":` + inventory
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

const (
	eth0 = `{"name":"eth0","mac_address":"52:54:00:00:00:01","ipv4_address":"192.0.2.1","client_id":"ff:01"}`
	eth1 = `{"name":"eth1","mac_address":"52:54:00:00:00:02","ipv6_address":"fe80::2%eth1"}`
	eth2 = `{"name":"eth2","mac_address":"52:54:00:00:00:03","ipv4_address":"198.51.100.3"}`
	lo   = `{"name":"lo","mac_address":"00:00:00:00:00:00","ipv4_address":"127.0.0.1"}`
)

func inv(bootif string, ifaces ...string) string {
	return `{"interfaces":[` + strings.Join(ifaces, ",") + `],"boot":{"current_boot_mode":"uefi","pxe_interface":"` + bootif + `"},` +
		`"cpu":{"count":8,"architecture":"aarch64","flags":["aes","pse","vmx"]},"memory":{"total":1,"physical_mb":16384},` +
		`"disks":[{"name":"/dev/sda","size":107374182400,"serial":"A"},{"name":"/dev/sdb","size":2147483648,"serial":"B","rotational":true}]}`
}

// validate-interfaces and ports: plugin_data in Ironic's shape, and which
// interfaces become ports per add_ports.
func TestIronic_ValidateInterfacesAndPorts(t *testing.T) {
	vp := []string{"validate-interfaces", "ports"}
	body := report(inv("01-52-54-00-00-00-02", eth0, eth1, eth2, lo))
	res := mustRun(t, Ironic, vp, nil, body, nil)
	all := res.PluginData["all_interfaces"].(map[string]any)
	if len(all) != 4 {
		t.Fatalf("all_interfaces %v", all)
	}
	wantEth1 := map[string]any{"name": "eth1", "mac_address": "52:54:00:00:00:02", "ipv6_address": "fe80::2", "pxe_enabled": true}
	if diff := cmp.Diff(wantEth1, all["eth1"]); diff != "" {
		t.Errorf("all_interfaces.eth1 (-want +got):\n%s", diff)
	}
	if all["eth0"].(map[string]any)["pxe_enabled"] != false || all["eth0"].(map[string]any)["client_id"] != "ff:01" {
		t.Errorf("all_interfaces.eth0 %v", all["eth0"])
	}
	// pxe: the PXE NIC even without an IPv4 address (ironic-inspector
	// skips it), and it alone.
	if diff := cmp.Diff([]any{"52:54:00:00:00:02"}, res.PluginData["macs"]); diff != "" {
		t.Errorf("macs (-want +got):\n%s", diff)
	}
	if v := res.PluginData["valid_interfaces"].(map[string]any); len(v) != 1 || v["eth1"] == nil {
		t.Errorf("valid_interfaces %v", v)
	}
	if diff := cmp.Diff([]plan.PortCreate{{Address: "52:54:00:00:00:02", PXEEnabled: true}}, res.Changes.CreatePorts); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		add  string
		macs []any
	}{
		{"active", []any{"52:54:00:00:00:01", "52:54:00:00:00:02", "52:54:00:00:00:03"}},
		{"all", []any{"52:54:00:00:00:01", "52:54:00:00:00:02", "52:54:00:00:00:03"}},
	} {
		res := mustRun(t, Ironic, vp, func(o *Options) { o.AddPorts = tt.add }, body, nil)
		if diff := cmp.Diff(tt.macs, res.PluginData["macs"]); diff != "" {
			t.Errorf("add_ports=%s macs (-want +got):\n%s", tt.add, diff)
		}
	}
	// disabled creates none; keep_ports=present deletes the port of a MAC
	// the inventory lacks; update_pxe_enabled fixes every port; the
	// client-id comes along.
	res = mustRun(t, Ironic, vp, func(o *Options) { o.AddPorts, o.KeepPorts = AddPortsDisabled, KeepPortsPresent }, body, nil,
		port("p-old", "52:54:00:00:00:99", true, nil), port("p0", "52:54:00:00:00:01", true, nil), port("p1", "52:54:00:00:00:02", false, nil))
	want := plan.Changes{
		DeletePorts: []plan.PortRef{{UUID: "p-old", Address: "52:54:00:00:00:99"}},
		PatchPorts: []plan.PortPatch{
			{PortRef: plan.PortRef{UUID: "p0", Address: "52:54:00:00:00:01"}, Ops: []plan.PatchOp{
				{Op: "replace", Path: "/pxe_enabled", Value: false}, {Op: "add", Path: "/extra/client-id", Value: "ff:01"}}},
			{PortRef: plan.PortRef{UUID: "p1", Address: "52:54:00:00:00:02"}, Ops: []plan.PatchOp{{Op: "replace", Path: "/pxe_enabled", Value: true}}},
		},
	}
	if diff := cmp.Diff(want, res.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	// With keep_ports=added but nothing valid to add there is no expected
	// set, and Ironic deletes nothing.
	for _, tt := range []struct{ body, want string }{
		{report(`{"interfaces":[{"name":"x","mac_address":"zz"}]}`), "Inventory for node " + testNode + " is invalid: no valid network interfaces"},
		{report(inv("", lo)), `no network interfaces match the configuration (add_ports set to "pxe")`},
	} {
		_, err := run(t, Ironic, vp, nil, tt.body, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) ||
			!strings.HasPrefix(err.Error(), "Failed to inspect hardware. Reason: The following failures happened while running preprocess hooks for node "+testNode+":\nUnexpected exception InvalidNodeInventory during preprocess hook validate-interfaces: ") {
			t.Errorf("error %v, want %q", err, tt.want)
		}
	}
}

func TestIronic_Properties(t *testing.T) {
	body := report(inv("", eth0))
	res := mustRun(t, Ironic, []string{"architecture", "cpus", "memory"}, nil, body, baremetal.JSON{"cpus": "1"})
	if diff := cmp.Diff(map[string]any{"cpu_arch": "aarch64", "cpus": json.Number("8"), "memory_mb": json.Number("16384")},
		props(t, res.Changes, nil)); diff != "" {
		t.Errorf("properties (-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ hook, body, want string }{
		{"architecture", report(`{"interfaces":[` + eth0 + `],"cpu":{"count":1}}`),
			"Unexpected exception InvalidNodeInventory during processing for node: " + testNode + ". Error: Inventory for node " + testNode +
				" is invalid: Inventory has malformed or missing CPU architecture information: {'count': 1} for node " + testNode + "."},
		{"memory", report(`{"interfaces":[` + eth0 + `]}`), "Inventory has missing memory information: None for node " + testNode + "."},
	} {
		_, err := run(t, Ironic, []string{tt.hook}, nil, tt.body, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "Failed to inspect hardware. Reason: ") {
			t.Errorf("%s: %v, want %q", tt.hook, err, tt.want)
		}
	}
	// no CPU count leaves cpus alone
	res = mustRun(t, Ironic, []string{"cpus"}, nil, report(`{"interfaces":[`+eth0+`],"cpu":{"count":0}}`), nil)
	if len(res.Changes.NodePatch) != 0 {
		t.Errorf("cpus with count 0: %v", res.Changes.NodePatch)
	}
}

func TestIronic_RootDevice(t *testing.T) {
	body := report(inv("", eth0), `"root_disk":{"name":"/dev/sdb","size":2147483648}`)
	for _, tt := range []struct {
		name    string
		props   baremetal.JSON
		mut     func(*Options)
		localGB int64
		root    string
		wantErr string
	}{
		{name: "the ramdisk's root disk", localGB: 1, root: "/dev/sdb"},
		{name: "without spacing", mut: func(o *Options) { o.DiskPartitioningSpacing = false }, localGB: 2, root: "/dev/sdb"},
		{name: "hints", props: baremetal.JSON{"root_device": map[string]any{"serial": "A"}}, localGB: 99, root: "/dev/sda"},
		{name: "hints and skip_block_devices", props: baremetal.JSON{"root_device": map[string]any{"size": ">= 1"},
			"skip_block_devices": []any{map[string]any{"name": "/dev/sda"}}}, localGB: 1, root: "/dev/sdb"},
		{name: "no disk matches", props: baremetal.JSON{"root_device": map[string]any{"serial": "Z"}},
			wantErr: "Failed to inspect hardware. Reason: No disks satisfied root device hints for node " + testNode},
		{name: "invalid hints", props: baremetal.JSON{"root_device": map[string]any{"colour": "red"}},
			wantErr: "because they failed to validate. Error: The hints \"colour\" are invalid."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, Ironic, []string{"root-device"}, tt.mut, body, tt.props)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := props(t, res.Changes, tt.props)["local_gb"]; got != json.Number(jsonInt(tt.localGB)) {
				t.Errorf("local_gb %#v, want %d (an integer)", got, tt.localGB)
			}
			if res.PluginData["local_gb"] != json.Number(jsonInt(tt.localGB)) || res.PluginData["root_disk"].(map[string]any)["name"] != tt.root {
				t.Errorf("plugin_data local_gb %v root_disk %v", res.PluginData["local_gb"], res.PluginData["root_disk"])
			}
		})
	}
	res := mustRun(t, Ironic, []string{"root-device"}, nil, report(inv("", eth0)), nil)
	if props(t, res.Changes, nil)["local_gb"] != json.Number("0") {
		t.Errorf("diskless local_gb %v", props(t, res.Changes, nil)["local_gb"])
	}
}

func jsonInt(i int64) string { return number(i).String() }

func TestIronic_Capabilities(t *testing.T) {
	body := report(inv("", eth0), `"pci_devices":[{"vendor_id":"10de","product_id":"1eb8","bus":"0000:3b:00.0"},
		{"vendor_id":"10de","product_id":"1eb8","bus":"0000:3c:00.0"},{"vendor_id":"8086","product_id":"1521","numa_node_id":"-1"}]`)
	res := mustRun(t, Ironic, []string{"boot-mode", "cpu-capabilities", "pci-devices"}, func(o *Options) {
		o.PCIDeviceAliases = []string{`{"vendor_id":"10de","product_id":"1eb8","name":"t4"}`, `not json`}
	}, body, baremetal.JSON{"capabilities": "boot_mode:bios,other:x"})
	want := "boot_mode:uefi,other:x,cpu_vt:true,cpu_aes:true,cpu_hugepages:true,t4:2"
	if got := props(t, res.Changes, baremetal.JSON{"capabilities": "boot_mode:bios,other:x"})["capabilities"]; got != want {
		t.Errorf("capabilities %v, want %s", got, want)
	}
	// Malformed capabilities fail cpu-capabilities, as Ironic's ValueError.
	_, err := run(t, Ironic, []string{"cpu-capabilities"}, nil, body, baremetal.JSON{"capabilities": "nocolon"})
	if err == nil || !strings.Contains(err.Error(), "Unexpected exception ValueError during processing") {
		t.Errorf("malformed capabilities: %v", err)
	}
	// Without flags nothing happens.
	res = mustRun(t, Ironic, []string{"cpu-capabilities", "boot-mode"}, nil, report(`{"interfaces":[`+eth0+`],"cpu":{"count":1}}`), nil)
	if len(res.Changes.NodePatch) != 0 {
		t.Errorf("no flags, no boot: %v", res.Changes.NodePatch)
	}
}

func TestIronic_ExtraHardwareAndAccelerators(t *testing.T) {
	body := report(inv("", eth0), `"data":[["disk","sda","size","100"],["cpu","0","flags","x"],["short"]]`,
		`"pci_devices":[{"vendor_id":"10de","product_id":"1eb8","bus":"0000:3b:00.0"},{"vendor_id":"8086","product_id":"1521","bus":"0000:01:00.0"}]`)
	res := mustRun(t, Ironic, []string{"extra-hardware", "accelerators"}, nil, body, nil)
	want := map[string]any{"disk": map[string]any{"sda": map[string]any{"size": json.Number("100")}}, "cpu": map[string]any{"0": map[string]any{"flags": "x"}},
		"short": map[string]any{}}
	if diff := cmp.Diff(want, res.PluginData["extra"]); diff != "" {
		t.Errorf("extra (-want +got):\n%s", diff)
	}
	if _, ok := res.PluginData["data"]; ok {
		t.Error("data kept")
	}
	acc := props(t, res.Changes, nil)["accelerators"]
	wantAcc := []any{map[string]any{"vendor_id": "10de", "device_id": "1eb8", "type": "GPU", "device_info": "NVIDIA Corporation Tesla T4", "pci_address": "0000:3b:00.0"}}
	if diff := cmp.Diff(wantAcc, acc); diff != "" {
		t.Errorf("accelerators (-want +got):\n%s", diff)
	}
	// Ironic writes an empty list when none is known; the inspector nothing.
	none := report(inv("", eth0), `"pci_devices":[{"vendor_id":"8086","product_id":"1521","bus":"x"}]`)
	if got := props(t, mustRun(t, Ironic, []string{"accelerators"}, nil, none, nil).Changes, nil)["accelerators"]; !cmp.Equal(got, []any{}) {
		t.Errorf("Ironic, none known: %#v", got)
	}
	if c := mustRun(t, Inspector, []string{"accelerators"}, nil, none, nil).Changes; len(c.NodePatch) != 0 {
		t.Errorf("inspector, none known: %v", c.NodePatch)
	}
	// strict drops data that is not records
	res = mustRun(t, Ironic, []string{"extra-hardware"}, func(o *Options) { o.ExtraHardwareStrict = true }, report(inv("", eth0), `"data":[["a","b","c"]]`), nil)
	if _, ok := res.PluginData["data"]; ok || res.PluginData["extra"] != nil {
		t.Errorf("strict: %v", res.PluginData)
	}
}

// LLDP: parse-lldp fills plugin_data.parsed_lldp (what metal3 reads), and
// local-link-connection the ports, never overwriting what they have.
func TestIronic_LLDP(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ipa", "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	hooks := []string{"validate-interfaces", "parse-lldp", "local-link-connection"}
	res := mustRun(t, Ironic, hooks, nil, string(b), nil,
		port("p1", "3c:fd:fe:11:22:30", true, nil),
		&baremetal.Port{UUID: "p2", Address: "3c:fd:fe:11:22:31", LocalLinkConnection: baremetal.JSON{"port_id": "mine"}, Extra: baremetal.JSON{}})
	parsed := res.PluginData["parsed_lldp"].(map[string]any)
	eno1 := parsed["eno1"].(map[string]any)
	if eno1["switch_port_id"] != "Ethernet1/12" || eno1["switch_chassis_id"] == nil {
		t.Errorf("parsed_lldp.eno1 %v", eno1)
	}
	var llc map[string]any
	for _, pp := range res.Changes.PatchPorts {
		if pp.UUID == "p1" {
			llc = map[string]any{}
			for _, op := range pp.Ops {
				llc[strings.TrimPrefix(op.Path, "/local_link_connection/")] = op.Value
			}
		}
		if pp.UUID == "p2" {
			for _, op := range pp.Ops {
				if op.Path == "/local_link_connection/port_id" {
					t.Errorf("overwrote p2's port_id: %v", pp.Ops)
				}
			}
		}
	}
	if llc["port_id"] != "Ethernet1/12" || llc["switch_id"] != eno1["switch_chassis_id"] {
		t.Errorf("p1 local_link_connection %v", llc)
	}
	// The inspector's shape: lldp_processed inside all_interfaces.
	res = mustRun(t, Inspector, []string{"validate_interfaces", "lldp_basic"}, func(o *Options) { o.AddPorts = AddPortsAll }, string(b), nil)
	if lp := res.PluginData["all_interfaces"].(map[string]any)["eno1"].(map[string]any)["lldp_processed"]; lp == nil {
		t.Errorf("inspector all_interfaces.eno1 has no lldp_processed: %v", res.PluginData["all_interfaces"])
	}
	if _, ok := res.PluginData["parsed_lldp"]; ok {
		t.Error("the inspector's data has parsed_lldp")
	}
}

func TestIronic_PhysicalNetworkAndRAIDDevice(t *testing.T) {
	body := report(inv("", eth0, eth1, eth2))
	res := mustRun(t, Ironic, []string{"validate-interfaces", "physical-network"}, func(o *Options) {
		o.PhysicalNetworkCIDRMap = []string{"192.0.2.0/24:physnet-a", "fe80::/64:physnet-v6"}
	}, body, nil, port("p0", "52:54:00:00:00:01", true, nil), port("p1", "52:54:00:00:00:02", false, nil))
	if diff := cmp.Diff([]plan.PortPatch{{PortRef: plan.PortRef{UUID: "p0", Address: "52:54:00:00:00:01"},
		Ops: []plan.PatchOp{{Op: "add", Path: "/physical_network", Value: "physnet-a"}}}}, res.Changes.PatchPorts); diff != "" {
		t.Errorf("physical_network (-want +got; an IPv6 address with a scope does not count, as Ironic):\n%s", diff)
	}

	o := DefaultOptions(Ironic)
	o.Hooks = []string{"raid-device"}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := Decode([]byte(body))
	previous := map[string]any{"disks": []any{map[string]any{"name": "/dev/sda", "serial": "A"}}}
	n := &baremetal.Node{UUID: testNode, Properties: baremetal.JSON{}}
	res, err = p.Process(context.Background(), rep, Target{Node: n, Previous: func(context.Context) (*Previous, error) { return &Previous{Inventory: previous}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"serial": "B"}, props(t, res.Changes, nil)["root_device"]); diff != "" {
		t.Errorf("root_device (-want +got):\n%s", diff)
	}
	if res, _ := p.Process(context.Background(), rep, Target{Node: n}); len(res.Changes.NodePatch) != 0 {
		t.Error("raid-device without a previous inventory changed the node")
	}
}

// The ramdisk's error fails the report, in each dialect's words; its logs
// are kept apart, never in plugin_data.
func TestRamdiskErrorAndLogs(t *testing.T) {
	body := report(inv("", eth0), `"error":"disk on fire"`, `"logs":"bG9ncw=="`)
	res, err := run(t, Ironic, DefaultHooks, nil, body, nil)
	want := "Failed to inspect hardware. Reason: The following failures happened while running preprocess hooks for node " + testNode +
		":\nError in preprocess hook ramdisk-error: Failed to inspect hardware. Reason: Ramdisk reported error: disk on fire"
	if err == nil || err.Error() != want {
		t.Errorf("Ironic: %v\nwant %s", err, want)
	}
	if res == nil || res.Logs != "bG9ncw==" {
		t.Errorf("logs not kept on failure: %+v", res)
	}
	_, err = run(t, Inspector, []string{"ramdisk_error"}, nil, body, nil)
	if err == nil || err.Error() != "Preprocessing hook ramdisk_error: Ramdisk reported error: disk on fire" {
		t.Errorf("inspector: %v", err)
	}
	ok := mustRun(t, Ironic, DefaultHooks, nil, report(inv("", eth0), `"logs":"bG9ncw=="`), nil)
	if _, in := ok.PluginData["logs"]; in || ok.Logs != "bG9ncw==" {
		t.Errorf("logs in plugin_data or lost: %v %q", ok.PluginData, ok.Logs)
	}
}

// Rules run after the hooks and see what the caller adds; a rule that
// fails fails the report with its message, and nothing is to be applied.
func TestRules_AfterHooksAndFailureAppliesNothing(t *testing.T) {
	rule := func(body string) *rules.Rule {
		r, err := rules.Parse([]byte(body), false)
		if err != nil {
			t.Fatal(err)
		}
		r.UUID = "7a3e2b10-0000-4000-8000-000000000001"
		return r
	}
	seen := rule(`{"conditions":[{"op":"eq","args":{"values":["{plugin_data[hardware_changed]}","True"]}},
		{"op":"eq","args":{"values":["{plugin_data[macs][0]}","52:54:00:00:00:01"]}}],
		"actions":[{"op":"set-attribute","args":{"path":"/extra/changed","value":"{node.properties[cpu_arch]}"}}]}`)
	o := DefaultOptions(Ironic)
	o.Rules = staticRules{seen}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := Decode([]byte(report(inv("01-52-54-00-00-00-01", eth0))))
	res, err := p.Process(context.Background(), rep, Target{Node: &baremetal.Node{UUID: testNode}, PluginData: map[string]any{"hardware_changed": true}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{seen.UUID}, res.Rules); diff != "" {
		t.Errorf("rules applied (-want +got):\n%s", diff)
	}
	if last := res.Changes.NodePatch[len(res.Changes.NodePatch)-1]; last.Path != "/extra/changed" || last.Value != "aarch64" {
		t.Errorf("the rule did not see the hooks' cpu_arch: %+v", last)
	}

	o.Rules = staticRules{rule(`{"actions":[{"op":"add-trait","args":{"name":"CUSTOM_X"}},{"op":"fail","args":{"msg":"not this one"}}]}`)}
	p, _ = New(o)
	res, err = p.Process(context.Background(), rep, Target{Node: &baremetal.Node{UUID: testNode}})
	var f *Failure
	if res != nil || !errorsAs(err, &f) || f.Stage != StageRules || err.Error() != "Failed to inspect hardware. Reason: not this one" {
		t.Errorf("failing rule: %+v, %v", res, err)
	}
}

func errorsAs(err error, f **Failure) bool {
	v, ok := err.(*Failure)
	*f = v
	return ok
}

type staticRules []*rules.Rule

func (s staticRules) Rules(context.Context) ([]*rules.Rule, error) { return s, nil }

// Every IPA release's report goes through every Ironic hook.
func TestIronic_EveryIPARelease(t *testing.T) {
	all := HookNames(Ironic)
	// dependency order: validate-interfaces first
	hooks := []string{"ramdisk-error", "validate-interfaces"}
	for _, h := range all {
		if h != "ramdisk-error" && h != "validate-interfaces" {
			hooks = append(hooks, h)
		}
	}
	for _, rel := range iparelease.All(t) {
		t.Run(rel.Release, func(t *testing.T) {
			res := mustRun(t, Ironic, hooks, nil, string(rel.Body(t)), nil)
			p := props(t, res.Changes, nil)
			if p["cpu_arch"] != "x86_64" || p["cpus"] != json.Number("4") || p["memory_mb"] != json.Number("8192") || p["local_gb"] != json.Number("19") {
				t.Errorf("properties %v", p)
			}
			if len(res.Changes.CreatePorts) != 1 || res.Changes.CreatePorts[0].Address != rel.MACs[0] || !res.Changes.CreatePorts[0].PXEEnabled {
				t.Errorf("ports %+v", res.Changes.CreatePorts)
			}
			if _, ok := res.PluginData["parsed_lldp"]; ok != rel.AtLeast(9, 5) {
				t.Errorf("parsed_lldp present %v", ok)
			}
			if res.Logs == "" || res.PluginData["logs"] != nil {
				t.Error("logs not apart")
			}
			if !cmp.Equal(res.Inventory["pci_devices"], nil) || res.PluginData["pci_devices"] == nil {
				t.Error("pci_devices not in plugin_data")
			}
		})
	}
}

func TestNew_Errors(t *testing.T) {
	for _, tt := range []struct {
		d     Dialect
		hooks []string
		mut   func(*Options)
		want  string
	}{
		{Ironic, []string{"ports"}, nil, "Hook ports requires these missing hooks to be enabled before it: validate-interfaces"},
		{Ironic, []string{"validate-interfaces", "bogus", "local_link_connection"}, nil, "missing or failed to load: bogus, local_link_connection"},
		{Inspector, []string{"lldp_basic"}, nil, "processing hook lldp_basic requires validate_interfaces"},
		{Inspector, []string{"ports"}, nil, `unknown processing hook "ports"`},
		{Ironic, DefaultHooks, func(o *Options) { o.AddPorts = "some" }, `[inspector]add_ports: "some"`},
		{Inspector, []string{"validate_interfaces"}, func(o *Options) { o.AddPorts, o.KeepPorts = "disabled", "added" }, "add_ports set to disabled and keep_ports set to added"},
		{Inspector, nil, func(o *Options) { o.PCIDeviceAliases = []string{`{"vendor_id":"1"}`} }, "[pci_devices]alias"},
		{Ironic, []string{"accelerators"}, func(o *Options) { o.KnownAccelerators = []byte("pci_devices: [{vendor_id: '1'}]") }, "missing vendor_id or device_id"},
		{Ironic, nil, func(o *Options) { o.PhysicalNetworkCIDRMap = []string{"10.0.0.1/8:x"} }, "is not a network"},
	} {
		o := DefaultOptions(tt.d)
		o.Hooks = tt.hooks
		if tt.mut != nil {
			tt.mut(&o)
		}
		_, err := New(o)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %v: %v, want %q", tt.d, tt.hooks, err, tt.want)
		}
	}
}

// ironic-inspector's names run the same hooks with the inspector's
// results: strings, overwrite_existing, its data shape and selection.
func TestInspector_Dialect(t *testing.T) {
	body := report(inv("01-52-54-00-00-00-02", eth0, eth1, eth2), `"boot_interface":"01-52-54-00-00-00-01"`,
		`"root_disk":{"name":"/dev/sda","size":107374182400}`)
	hooks := []string{"ramdisk_error", "root_disk_selection", "scheduler", "validate_interfaces", "capabilities"}
	res := mustRun(t, Inspector, hooks, func(o *Options) { o.BootMode = true }, body, baremetal.JSON{"cpus": "2"})
	p := props(t, res.Changes, baremetal.JSON{"cpus": "2"})
	for k, want := range map[string]any{"cpus": "8", "cpu_arch": "aarch64", "memory_mb": "16384", "local_gb": "99",
		"capabilities": "boot_mode:uefi,cpu_vt:true,cpu_aes:true,cpu_hugepages:true"} {
		if p[k] != want {
			t.Errorf("properties[%s] = %#v, want %#v", k, p[k], want)
		}
	}
	// boot_interface (not inventory.boot) says which NIC booted; the
	// processed data has interfaces, ipmi_address and the scheduler's keys.
	if diff := cmp.Diff([]any{"52:54:00:00:00:01"}, res.PluginData["macs"]); diff != "" {
		t.Errorf("macs (-want +got):\n%s", diff)
	}
	wantEth0 := map[string]any{"ip": "192.0.2.1", "mac": "52:54:00:00:00:01", "client_id": "ff:01", "pxe": true}
	if diff := cmp.Diff(wantEth0, res.PluginData["interfaces"].(map[string]any)["eth0"]); diff != "" {
		t.Errorf("interfaces.eth0 (-want +got):\n%s", diff)
	}
	for _, k := range []string{"ipmi_address", "cpus", "cpu_arch", "memory_mb", "local_gb"} {
		if _, ok := res.PluginData[k]; !ok {
			t.Errorf("processed data lacks %s", k)
		}
	}
	// Without overwrite_existing set properties stay.
	res = mustRun(t, Inspector, hooks, func(o *Options) { o.OverwriteExisting = false }, body, baremetal.JSON{"cpus": "2"})
	if got := props(t, res.Changes, baremetal.JSON{"cpus": "2"})["cpus"]; got != "2" {
		t.Errorf("cpus overwritten: %v", got)
	}
	// A PXE NIC without an address is not selected by the inspector.
	_, err := run(t, Inspector, []string{"validate_interfaces"}, nil, report(inv("", `{"name":"eth9","mac_address":"52:54:00:00:00:09"}`), `"boot_interface":"01-52-54-00-00-00-09"`), nil)
	if err == nil || !strings.Contains(err.Error(), "Preprocessing hook validate_interfaces: No suitable interfaces found in eth9") {
		t.Errorf("PXE NIC without IP: %v", err)
	}
}

// Rules are offered what changed since the previous inspection under
// plugin_data[hardware_changes]: a rule that fails when a disk was removed
// fails this inspection with its message; a first inspection (nothing
// stored) offers no changes, counted, so that the same rule reads them;
// without rules the previous inventory is not even read.
func TestRules_SeeHardwareChanges(t *testing.T) {
	ruleYAML := `
- description: a disk went missing
  conditions:
    - op: "!eq"
      args: {values: ["{plugin_data[hardware_changes][removed]}", "0"]}
  actions:
    - op: log
      args: {msg: "removed: {plugin_data[hardware_changes][changes][0][id]}"}
    - op: fail
      args: {msg: "a disk was removed"}
`
	builtIn, err := rules.ParseBuiltIn([]byte(ruleYAML), "test")
	if err != nil {
		t.Fatal(err)
	}
	// Last time the machine had a third disk, serial C.
	var previousInv map[string]any
	if err := json.Unmarshal([]byte(strings.Replace(inv("", eth0),
		`"serial":"B","rotational":true}`, `"serial":"B","rotational":true},{"name":"/dev/sdc","size":2147483648,"serial":"C"}`, 1)), &previousInv); err != nil {
		t.Fatal(err)
	}
	process := func(t *testing.T, withRules bool, previous *Previous) (*Result, error, int) {
		o := DefaultOptions(Ironic)
		o.Hooks = []string{"validate-interfaces"}
		if withRules {
			o.BuiltInRules = builtIn
		}
		p, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Decode([]byte(report(inv("", eth0))))
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		n := &baremetal.Node{UUID: testNode, Driver: "ipmi", ProvisionState: "inspect wait", Properties: baremetal.JSON{}, Extra: baremetal.JSON{}}
		res, err := p.Process(context.Background(), rep, Target{Node: n, Previous: func(context.Context) (*Previous, error) {
			calls++
			return previous, nil
		}})
		return res, err, calls
	}

	_, err, calls := process(t, true, &Previous{Inventory: previousInv, PluginData: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "a disk was removed") || calls != 1 {
		t.Errorf("a disk gone: err %v, previous read %d times; want the rule's failure, read once", err, calls)
	}
	var f *Failure
	if !errors.As(err, &f) || f.Stage != StageRules {
		t.Errorf("the failure %v is not the rules'", err)
	}

	res, err, _ := process(t, true, nil)
	if err != nil {
		t.Fatalf("a first inspection: %v", err)
	}
	if hc, _ := res.PluginData["hardware_changes"].(map[string]any); hc == nil || hc["removed"] != 0 || len(hc["changes"].([]any)) != 0 || hc["previous_inspection"] != nil {
		t.Errorf("a first inspection offers %v; want no changes, counted", res.PluginData["hardware_changes"])
	}

	res, err, _ = process(t, true, &Previous{Inventory: map[string]any{}, PluginData: map[string]any{}})
	if err != nil {
		t.Fatalf("nothing removed: %v", err)
	}
	if hc, _ := res.PluginData["hardware_changes"].(map[string]any); hc == nil || hc["removed"] != 0 {
		t.Errorf("hardware_changes %v: want the changes counted, none removed", res.PluginData["hardware_changes"])
	}

	if _, err, calls := process(t, false, &Previous{Inventory: previousInv}); err != nil || calls != 0 {
		t.Errorf("without rules: err %v, previous read %d times; want it never read", err, calls)
	}
}
