package hooks

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/lldp"
	"github.com/google/go-cmp/cmp"
)

func TestLLDPBasic(t *testing.T) {
	d := loadData(t, "small-2nic.json")
	n := newNode(t, nil)
	run(t, build(t, DefaultConfig(), "validate_interfaces", "lldp_basic"), d, n)
	if !n.Changes().CreatePorts[0].PXEEnabled || len(n.Changes().NodePatch) != 0 {
		t.Errorf("unexpected changes: %+v", n.Changes())
	}
	if d.Interface("eth1").LLDPProcessed != nil {
		t.Errorf("eth1 sent no TLVs but has lldp_processed")
	}
	got := d.Map()["all_interfaces"].(map[string]any)["eth0"].(map[string]any)["lldp_processed"].(map[string]any)
	want := map[string]any{
		"switch_chassis_id":                    "0c:8d:db:4f:2a:80",
		"switch_port_id":                       "ge-0/0/7",
		"switch_port_description":              "lab node 57",
		"switch_system_name":                   "sw-lab-01",
		"switch_system_description":            "Juniper Networks, Inc. ex2300-24t Ethernet Switch, kernel JUNOS 21.4R3",
		"switch_capabilities_support":          []any{"Bridge", "Router"},
		"switch_capabilities_enabled":          []any{"Bridge"},
		"switch_mgmt_addresses":                []any{"192.168.122.2"},
		"switch_port_untagged_vlan_id":         json.Number("100"),
		"switch_port_vlans":                    []any{map[string]any{"id": json.Number("100"), "name": "prov"}, map[string]any{"id": json.Number("200"), "name": "storage"}},
		"switch_port_link_aggregation_enabled": false,
		"switch_port_link_aggregation_support": true,
		"switch_port_link_aggregation_id":      json.Number("0"),
		"switch_port_autonegotiation_enabled":  true,
		"switch_port_autonegotiation_support":  true,
		"switch_port_physical_capabilities":    []any{"100BASE-TX fdx", "100BASE-TX hdx", "10BASE-T fdx", "10BASE-T hdx"},
		"switch_port_mau_type":                 "100BASE-TX full duplex",
		"switch_port_mtu":                      json.Number("1518"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lldp_processed (-want +got):\n%s", diff)
	}
}

// The inventory's lldp (ipa-collect-lldp) is used when lldp_raw has nothing.
func TestLLDPBasic_InventoryLLDP(t *testing.T) {
	d := decodeData(t, []byte(`{"inventory":{"interfaces":[{"name":"eth0","mac_address":"52:54:00:00:00:01","ipv4_address":"192.0.2.1",
		"lldp":[[1,"04001122334455"],[2,"0545746831"],[5,"73773031"]]}]},"lldp_raw":{"eth0":[]}}`))
	run(t, build(t, DefaultConfig(), "validate_interfaces", "lldp_basic"), d, newNode(t, nil))
	p := d.Interface("eth0").LLDPProcessed
	if p == nil || *p.ChassisID != "00:11:22:33:44:55" || *p.PortID != "Eth1" || *p.SystemName != "sw01" {
		t.Errorf("lldp_processed %+v", p)
	}
}

func TestLocalLinkConnection(t *testing.T) {
	// example.json, eno1: chassis MAC b8:59:9f:1a:2b:3c, port Ethernet1/12,
	// system name leaf-r12a. eno2 has no LLDP.
	eno1 := "3c:fd:fe:11:22:30"
	tests := []struct {
		name    string
		hooks   []string
		fixture string
		ports   []baremetal.Port
		want    Changes
	}{
		{
			name:  "from lldp_processed, on an existing port",
			hooks: []string{"validate_interfaces", "lldp_basic", "local_link_connection"},
			ports: []baremetal.Port{bmPort("p1", eno1, true)},
			want: Changes{PatchPorts: []PortPatch{{PortRef: PortRef{UUID: "p1", Address: eno1}, Ops: []PatchOp{
				add("/local_link_connection/switch_id", "b8:59:9f:1a:2b:3c"),
				add("/local_link_connection/port_id", "Ethernet1/12"),
				add("/local_link_connection/switch_info", "leaf-r12a"),
			}}}},
		},
		{
			name:  "from lldp_raw without lldp_basic",
			hooks: []string{"validate_interfaces", "local_link_connection"},
			ports: []baremetal.Port{bmPort("p1", eno1, true)},
			want: Changes{PatchPorts: []PortPatch{{PortRef: PortRef{UUID: "p1", Address: eno1}, Ops: []PatchOp{
				add("/local_link_connection/switch_id", "b8:59:9f:1a:2b:3c"),
				add("/local_link_connection/port_id", "Ethernet1/12"),
				add("/local_link_connection/switch_info", "leaf-r12a"),
			}}}},
		},
		{
			name:  "into a port the plan creates",
			hooks: []string{"validate_interfaces", "lldp_basic", "local_link_connection"},
			want: Changes{CreatePorts: []PortCreate{{Address: eno1, PXEEnabled: true, LocalLinkConnection: map[string]any{
				"switch_id": "b8:59:9f:1a:2b:3c", "port_id": "Ethernet1/12", "switch_info": "leaf-r12a",
			}}}},
		},
		{
			name:  "never overwrites what the operator set",
			hooks: []string{"validate_interfaces", "lldp_basic", "local_link_connection"},
			ports: []baremetal.Port{{UUID: "p1", Address: eno1, PXEEnabled: true, LocalLinkConnection: baremetal.JSON{"switch_id": "aa:aa:aa:aa:aa:aa", "port_id": "xe-0/0/1"}}},
			want: Changes{PatchPorts: []PortPatch{{PortRef: PortRef{UUID: "p1", Address: eno1}, Ops: []PatchOp{
				add("/local_link_connection/switch_info", "leaf-r12a"),
			}}}},
		},
		{
			name:    "a chassis ID that is not a MAC gives no switch_id",
			hooks:   []string{"validate_interfaces", "lldp_basic", "local_link_connection"},
			fixture: "lldp-malformed.json",
			ports:   []baremetal.Port{bmPort("p1", "52:54:00:12:34:56", true)},
			want: Changes{PatchPorts: []PortPatch{{PortRef: PortRef{UUID: "p1", Address: "52:54:00:12:34:56"}, Ops: []PatchOp{
				add("/local_link_connection/port_id", "ge-0/0/7"),
			}}}},
		},
		{
			name:    "nor from raw TLVs",
			hooks:   []string{"validate_interfaces", "local_link_connection"},
			fixture: "lldp-malformed.json",
			ports:   []baremetal.Port{bmPort("p1", "52:54:00:12:34:56", true)},
			want: Changes{PatchPorts: []PortPatch{{PortRef: PortRef{UUID: "p1", Address: "52:54:00:12:34:56"}, Ops: []PatchOp{
				add("/local_link_connection/port_id", "ge-0/0/7"),
			}}}},
		},
		{
			name:  "no port, no patch",
			hooks: []string{"validate_interfaces", "local_link_connection"},
			ports: []baremetal.Port{bmPort("p2", "3c:fd:fe:11:22:31", false)},
			want: Changes{CreatePorts: []PortCreate{{Address: eno1, PXEEnabled: true, LocalLinkConnection: map[string]any{
				"switch_id": "b8:59:9f:1a:2b:3c", "port_id": "Ethernet1/12", "switch_info": "leaf-r12a",
			}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fixture := tt.fixture
			if fixture == "" {
				fixture = "example.json"
			}
			n := newNode(t, nil, tt.ports...)
			run(t, build(t, DefaultConfig(), tt.hooks...), loadData(t, fixture), n)
			if diff := cmp.Diff(tt.want, n.Changes()); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

// The whole default pipeline on the 40-NIC server with add_ports=all and
// keep_ports=present, as upstream recommends for port sync.
func TestDefaultPipeline_LargePayload(t *testing.T) {
	cfg := DefaultConfig()
	cfg.AddPorts, cfg.KeepPorts = "all", "present"
	d := loadData(t, "large-40nic-24disk.json")
	stale := bmPort("p-old", "3c:fd:fe:ff:00:00", false)
	n := newNode(t, baremetal.JSON{"capabilities": "boot_option:local"}, bmPort("p0", "3c:fd:fe:a0:00:00", false), stale)
	run(t, build(t, cfg, Default...), d, n)
	c := n.Changes()

	if len(c.CreatePorts) != 39 {
		t.Fatalf("created %d ports, want 39", len(c.CreatePorts))
	}
	for i, p := range c.CreatePorts {
		if p.PXEEnabled || p.LocalLinkConnection["switch_id"] == nil || p.LocalLinkConnection["port_id"] == nil || p.LocalLinkConnection["switch_info"] == nil {
			t.Errorf("port %d: %+v", i, p)
		}
	}
	if diff := cmp.Diff(PortCreate{Address: "3c:fd:fe:a0:00:27", LocalLinkConnection: map[string]any{
		"switch_id": "00:1c:73:bb:00:01", "port_id": "Ethernet20/1", "switch_info": "leaf-r12b",
	}}, c.CreatePorts[38]); diff != "" {
		t.Errorf("last port (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]PortRef{{UUID: "p-old", Address: "3c:fd:fe:ff:00:00"}}, c.DeletePorts); diff != "" {
		t.Errorf("deleted ports (-want +got):\n%s", diff)
	}
	wantPatch := []PortPatch{{PortRef: PortRef{UUID: "p0", Address: "3c:fd:fe:a0:00:00"}, Ops: []PatchOp{
		{Op: "replace", Path: "/pxe_enabled", Value: true},
		add("/local_link_connection/switch_id", "00:1c:73:aa:00:01"),
		add("/local_link_connection/port_id", "Ethernet1/1"),
		add("/local_link_connection/switch_info", "leaf-r12a"),
	}}}
	if diff := cmp.Diff(wantPatch, c.PatchPorts); diff != "" {
		t.Errorf("port patches (-want +got):\n%s", diff)
	}
	wantNode := []PatchOp{
		add("/properties/local_gb", "446"),
		add("/properties/cpus", "64"),
		add("/properties/cpu_arch", "x86_64"),
		add("/properties/memory_mb", "524288"),
		add("/properties/capabilities", "boot_option:local,cpu_vt:true,cpu_aes:true,cpu_hugepages:true,cpu_hugepages_1g:true,cpu_txt:true"),
	}
	if diff := cmp.Diff(wantNode, c.NodePatch); diff != "" {
		t.Errorf("node patch (-want +got):\n%s", diff)
	}
	if len(d.Map()["all_interfaces"].(map[string]any)) != 40 {
		t.Errorf("all_interfaces lost entries")
	}
}

// lldp_processed is built from the parsed fields directly; it must be what
// encoding the lldp.Processed and decoding it again gives, every field set
// or none, empty lists kept.
func TestLLDPProcessedValue_MatchesJSONRoundTrip(t *testing.T) {
	for name, p := range processedCases(t) {
		t.Run(name, func(t *testing.T) {
			want := toJSONValue(&p)
			if diff := cmp.Diff(want, any(lldpProcessedValue(&p))); diff != "" {
				t.Errorf("(-round trip +direct):\n%s", diff)
			}
		})
	}
}

// processedCases are lldp.Processed values that exercise every field.
func processedCases(t *testing.T) map[string]lldp.Processed {
	s, n, n64, yes := "x", 7, int64(1<<40), true
	full := lldp.Processed{}
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch p := f.Addr().Interface().(type) {
		case **string:
			*p = &s
		case **int:
			*p = &n
		case **int64:
			*p = &n64
		case **bool:
			*p = &yes
		case *[]string:
			*p = []string{"a", "b-c"}
		case *[]int:
			*p = []int{1, -2}
		case *[]lldp.VLAN:
			*p = []lldp.VLAN{{ID: 100, Name: "prov"}, {}}
		default:
			t.Fatalf("field %s: type %s not covered by this test", v.Type().Field(i).Name, f.Type())
		}
	}
	return map[string]lldp.Processed{
		"full":          full,
		"none":          {},
		"empty lists":   {CapabilitiesSupport: []string{}, PortVLANs: []lldp.VLAN{}, PortProtocolVLANIDs: []int{}},
		"escaped text":  {SystemName: ptr("<sw & \"r12\">\u2028"), PortVLANs: []lldp.VLAN{{ID: 1, Name: "café"}}},
		"invalid UTF-8": {SystemName: ptr("sw\xff01"), MgmtAddresses: []string{"\xfe"}},
	}
}

func ptr[T any](v T) *T { return &v }
