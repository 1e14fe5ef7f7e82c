package lldp

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const fixtures = "../../testdata/ipa"

func ptr[T any](v T) *T { return &v }

func hx(s string) string { return hex.EncodeToString([]byte(s)) }

// Expected values are what ironic-inspector's LLDPBasicMgmtParser stores for
// the same TLVs.
func TestParse_TLVs(t *testing.T) {
	tests := []struct {
		name string
		tlvs []TLV
		want Processed
	}{
		{"chassis MAC", []TLV{{1, "04b8599f1a2b3c"}}, Processed{ChassisID: ptr("b8:59:9f:1a:2b:3c")}},
		{"chassis MAC with trailing bytes", []TLV{{1, "04B8599F1A2B3CFF"}}, Processed{ChassisID: ptr("b8:59:9f:1a:2b:3c")}},
		{"chassis component", []TLV{{1, "01" + hx("chassis-1")}}, Processed{ChassisID: ptr("chassis-1")}},
		{"chassis interface alias", []TLV{{1, "02" + hx("uplink")}}, Processed{ChassisID: ptr("uplink")}},
		{"chassis port component", []TLV{{1, "03" + hx("slot 1")}}, Processed{ChassisID: ptr("slot 1")}},
		{"chassis network address IPv4", []TLV{{1, "0501c0000201"}}, Processed{ChassisID: ptr("192.0.2.1")}},
		{"chassis network address IPv6", []TLV{{1, "050220010db8000000000000000000000001"}}, Processed{ChassisID: ptr("2001:db8::1")}},
		{"chassis interface name", []TLV{{1, "06" + hx("mgmt0")}}, Processed{ChassisID: ptr("mgmt0")}},
		{"chassis local", []TLV{{1, "07" + hx("sw01")}}, Processed{ChassisID: ptr("sw01")}},
		{"port interface alias", []TLV{{2, "01" + hx("to-server-7")}}, Processed{PortID: ptr("to-server-7")}},
		{"port component", []TLV{{2, "02" + hx("port 7")}}, Processed{PortID: ptr("port 7")}},
		{"port MAC", []TLV{{2, "03001122334455"}}, Processed{PortID: ptr("00:11:22:33:44:55")}},
		{"port network address", []TLV{{2, "0401c0000207"}}, Processed{PortID: ptr("192.0.2.7")}},
		{"port interface name", []TLV{{2, "0545746831"}}, Processed{PortID: ptr("Eth1")}},
		{"port local", []TLV{{2, "07" + hx("Gi1/0/7")}}, Processed{PortID: ptr("Gi1/0/7")}},
		{"TTL and end carry nothing", []TLV{{3, "0078"}, {0, ""}}, Processed{}},
		{"port description", []TLV{{4, hx("node uplink")}}, Processed{PortDescription: ptr("node uplink")}},
		{"empty port description", []TLV{{4, ""}}, Processed{PortDescription: ptr("")}},
		{"system name", []TLV{{5, "73773031"}}, Processed{SystemName: ptr("sw01")}},
		{"system description", []TLV{{6, hx("Arista EOS")}}, Processed{SystemDescription: ptr("Arista EOS")}},
		{
			"system capabilities",
			[]TLV{{7, "07fe0014"}},
			Processed{
				CapabilitiesSupport: []string{"Repeater", "Bridge", "WLAN", "Router", "Telephone", "DOCSIS cable device", "Station only", "C-Vlan", "S-Vlan", "TPMR"},
				CapabilitiesEnabled: []string{"Bridge", "Router"},
			},
		},
		{"system capabilities none", []TLV{{7, "00010000"}}, Processed{CapabilitiesSupport: []string{}, CapabilitiesEnabled: []string{}}},
		{
			"management addresses",
			[]TLV{{8, "0501c0000201020000000100"}, {8, "110220010db80000000000000000000000fe0200000001" + "00"}, {8, "07060011223344550200000000" + "00"}},
			Processed{MgmtAddresses: []string{"192.0.2.1", "2001:db8::fe", "00:11:22:33:44:55"}},
		},
		{"management address of another family", []TLV{{8, "0510" + "0102030405"}}, Processed{}},
		{"802.1 port VLAN ID", []TLV{{127, "0080c2010064"}}, Processed{PortUntaggedVLANID: ptr(100)}},
		{
			"802.1 port and protocol VLAN IDs",
			[]TLV{{127, "0080c20206" + "0064"}, {127, "0080c20200" + "00c8"}},
			Processed{PortProtocolVLANEnabled: ptr(true), PortProtocolVLANSupport: ptr(true), PortProtocolVLANIDs: []int{100, 200}},
		},
		{
			"802.1 VLAN names",
			[]TLV{{127, "0080c203" + "0064" + "04" + hx("prov")}, {127, "0080c203" + "0bb8" + "0a" + hx("tenant-a") + "0000"}},
			Processed{PortVLANs: []VLAN{{ID: 100, Name: "prov"}, {ID: 3000, Name: "tenant-a"}}},
		},
		{
			"802.1 protocol identities",
			[]TLV{{127, "0080c204" + "02" + "888e"}, {127, "0080c204" + "03" + "424203"}},
			Processed{ProtocolIdentities: []string{"888e", "424203"}},
		},
		{"802.1 management VID", []TLV{{127, "0080c206" + "0fa0"}}, Processed{PortManagementVLANID: ptr(4000)}},
		{
			"802.1 link aggregation",
			[]TLV{{127, "0080c207" + "03" + "000003e8"}},
			Processed{PortLinkAggregationEnabled: ptr(true), PortLinkAggregationSupport: ptr(true), PortLinkAggregationID: ptr(int64(1000))},
		},
		{
			"802.3 link aggregation, capable only",
			[]TLV{{127, "00120f03" + "01" + "00000000"}},
			Processed{PortLinkAggregationEnabled: ptr(false), PortLinkAggregationSupport: ptr(true), PortLinkAggregationID: ptr(int64(0))},
		},
		{
			"802.3 MAC/PHY configuration",
			[]TLV{{127, "00120f01" + "03" + "6c01" + "001e"}},
			Processed{
				PortAutonegotiationEnabled: ptr(true),
				PortAutonegotiationSupport: ptr(true),
				// upstream reports "10BASE-T fdx" from the hdx bit (0x4000) and
				// ignores the fdx bit (0x2000)
				PortPhysicalCapabilities: []string{"1000BASE-T fdx", "100BASE-TX fdx", "100BASE-TX hdx", "10BASE-T fdx", "10BASE-T hdx"},
				PortMAUType:              ptr("1000BASE-T full duplex"),
			},
		},
		{
			"802.3 MAC/PHY configuration, fdx bit only",
			[]TLV{{127, "00120f01" + "00" + "2000" + "0000"}},
			Processed{PortAutonegotiationEnabled: ptr(false), PortAutonegotiationSupport: ptr(false), PortPhysicalCapabilities: []string{}, PortMAUType: ptr("Unknown")},
		},
		{"802.3 max frame size", []TLV{{127, "00120f042328"}}, Processed{PortMTU: ptr(9000)}},
		{"unknown 802.1 and 802.3 subtypes", []TLV{{127, "0080c2050001"}, {127, "00120f0200"}}, Processed{}},
		{"unknown TLV type", []TLV{{42, "deadbeef"}}, Processed{}},
		{
			"first value wins, lists collect",
			[]TLV{{5, hx("first")}, {5, hx("second")}, {127, "0080c2010064"}, {127, "0080c20100c8"}, {8, "0501c0000201"}, {8, "0501c0000202"}},
			Processed{SystemName: ptr("first"), PortUntaggedVLANID: ptr(100), MgmtAddresses: []string{"192.0.2.1", "192.0.2.2"}},
		},
		{
			"802.1 link aggregation wins over a later 802.3 one",
			[]TLV{{127, "0080c207" + "03" + "00000001"}, {127, "00120f03" + "00" + "00000002"}},
			Processed{PortLinkAggregationEnabled: ptr(true), PortLinkAggregationSupport: ptr(true), PortLinkAggregationID: ptr(int64(1))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings := Parse(tt.tlvs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
			if len(warnings) != 0 && !strings.Contains(tt.name, "OUI") {
				t.Errorf("unexpected warnings: %q", warnings)
			}
		})
	}
}

func TestParse_SkipsMalformed(t *testing.T) {
	tests := []struct {
		name string
		tlv  TLV
		want string // substring of the warning
	}{
		{"odd hex", TLV{2, "0"}, "not hexadecimal"},
		{"not hex", TLV{5, "zz"}, "not hexadecimal"},
		{"empty chassis ID", TLV{1, ""}, "chassis ID: empty"},
		{"short chassis MAC", TLV{1, "0400112233"}, "MAC address needs 6 bytes, got 4"},
		{"unknown chassis subtype", TLV{1, "00" + hx("x")}, "chassis ID: unknown subtype 0"},
		{"chassis address of an unknown family", TLV{1, "0509" + "01020304"}, "unsupported address family 9"},
		{"short chassis IPv4", TLV{1, "0501c000"}, "IPv4 address needs 4 bytes"},
		{"agent circuit port ID", TLV{2, "06" + hx("circuit")}, "port ID: unsupported subtype 6"},
		{"bad UTF-8 port ID", TLV{2, "05ff"}, "not valid UTF-8"},
		{"bad UTF-8 system name", TLV{5, "c328"}, "not valid UTF-8"},
		{"capabilities too short", TLV{7, "0014"}, "expected 4 bytes, got 2"},
		{"capabilities too long", TLV{7, "0014001400"}, "expected 4 bytes, got 5"},
		{"management address too short", TLV{8, "05"}, "management address: too short"},
		{"management IPv6 too short", TLV{8, "1102" + "20010db8"}, "IPv6 address needs 16 bytes"},
		{"org-specific too short", TLV{127, "0080c2"}, "too short"},
		{"unknown OUI", TLV{127, "00014201" + "00"}, "organisationally unique ID 000142 not recognized"},
		{"port VLAN ID too short", TLV{127, "0080c20100"}, "802.1 port VLAN ID: too short"},
		{"protocol VLAN wrong length", TLV{127, "0080c202" + "06"}, "expected 3 bytes, got 1"},
		{"VLAN name longer than the TLV", TLV{127, "0080c203" + "0064" + "10" + hx("prov")}, "802.1 VLAN name: too short"},
		{"VLAN name bad UTF-8", TLV{127, "0080c203" + "0064" + "01" + "ff"}, "802.1 VLAN name: not valid UTF-8"},
		{"protocol identity longer than the TLV", TLV{127, "0080c204" + "05" + "888e"}, "protocol identity: too short"},
		{"management VID too short", TLV{127, "0080c206"}, "management VID: too short"},
		{"link aggregation wrong length", TLV{127, "0080c207" + "03"}, "802.1 link aggregation: expected 5 bytes, got 1"},
		{"MAC/PHY wrong length", TLV{127, "00120f01" + "03"}, "expected 5 bytes, got 1"},
		{"MAC/PHY MAU type out of range", TLV{127, "00120f01" + "03" + "6c01" + "0036"}, "invalid index for mau type"},
		{"MTU too short", TLV{127, "00120f04" + "23"}, "maximum frame size: too short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings := Parse([]TLV{tt.tlv, {5, hx("sw01")}})
			if diff := cmp.Diff(Processed{SystemName: ptr("sw01")}, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], tt.want) {
				t.Errorf("warnings %q, want one containing %q", warnings, tt.want)
			}
			if len(warnings) == 1 && !strings.HasPrefix(warnings[0], "TLV 0 (type ") {
				t.Errorf("warning %q does not name the TLV", warnings[0])
			}
		})
	}
}

// lldpRaw reads the lldp_raw of a fixture.
func lldpRaw(t testing.TB, name string) map[string][]TLV {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		LLDPRaw map[string][]TLV `json:"lldp_raw"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep.LLDPRaw
}

func TestParse_ReferenceExample(t *testing.T) {
	got, warnings := Parse(lldpRaw(t, "example.json")["eno1"])
	want := Processed{
		ChassisID:          ptr("b8:59:9f:1a:2b:3c"),
		PortID:             ptr("Ethernet1/12"),
		PortDescription:    ptr("node ulink"), // sic, in the reference payload
		SystemName:         ptr("leaf-r12a"),
		PortUntaggedVLANID: ptr(100),
		PortMTU:            ptr(9000),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
}

// The JSON is what upstream stores as all_interfaces.eth0.lldp_processed.
func TestParse_SmallPayloadJSON(t *testing.T) {
	got, warnings := Parse(lldpRaw(t, "small-2nic.json")["eth0"])
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var gotJSON, wantJSON any
	if err := json.Unmarshal(b, &gotJSON); err != nil {
		t.Fatal(err)
	}
	want := `{
	  "switch_chassis_id": "0c:8d:db:4f:2a:80",
	  "switch_port_id": "ge-0/0/7",
	  "switch_port_description": "lab node 57",
	  "switch_system_name": "sw-lab-01",
	  "switch_system_description": "Juniper Networks, Inc. ex2300-24t Ethernet Switch, kernel JUNOS 21.4R3",
	  "switch_capabilities_support": ["Bridge", "Router"],
	  "switch_capabilities_enabled": ["Bridge"],
	  "switch_mgmt_addresses": ["192.168.122.2"],
	  "switch_port_untagged_vlan_id": 100,
	  "switch_port_vlans": [{"name": "prov", "id": 100}, {"name": "storage", "id": 200}],
	  "switch_port_link_aggregation_enabled": false,
	  "switch_port_link_aggregation_support": true,
	  "switch_port_link_aggregation_id": 0,
	  "switch_port_autonegotiation_enabled": true,
	  "switch_port_autonegotiation_support": true,
	  "switch_port_physical_capabilities": ["100BASE-TX fdx", "100BASE-TX hdx", "10BASE-T fdx", "10BASE-T hdx"],
	  "switch_port_mau_type": "100BASE-TX full duplex",
	  "switch_port_mtu": 1518
	}`
	if err := json.Unmarshal([]byte(want), &wantJSON); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantJSON, gotJSON); diff != "" {
		t.Errorf("lldp_processed (-want +got):\n%s", diff)
	}

	var back Processed
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
}

func TestParse_MalformedPayload(t *testing.T) {
	got, warnings := Parse(lldpRaw(t, "lldp-malformed.json")["eth0"])
	want := Processed{ChassisID: ptr("sw-lab-01"), PortID: ptr("ge-0/0/7"), PortUntaggedVLANID: ptr(100)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if len(warnings) != 10 {
		t.Errorf("got %d warnings, want 10: %q", len(warnings), warnings)
	}
}

func TestParse_LargePayload(t *testing.T) {
	raw := lldpRaw(t, "large-40nic-24disk.json")
	if len(raw) != 40 {
		t.Fatalf("lldp_raw has %d interfaces", len(raw))
	}
	got, warnings := Parse(raw["ens1f1"])
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	want := Processed{
		ChassisID:                  ptr("00:1c:73:bb:00:01"),
		PortID:                     ptr("Ethernet3/1"),
		PortDescription:            ptr("server r12u17 nic 5"),
		SystemName:                 ptr("leaf-r12b"),
		SystemDescription:          ptr("Arista Networks EOS version 4.28.3M running on an Arista Networks DCS-7050SX3-48YC8"),
		CapabilitiesSupport:        []string{"Bridge", "Router"},
		CapabilitiesEnabled:        []string{"Bridge", "Router"},
		MgmtAddresses:              []string{"10.30.0.2"},
		PortUntaggedVLANID:         ptr(1),
		PortVLANs:                  []VLAN{{1, "default"}, {2000, "storage-0"}, {3000, "tenant-a"}},
		PortLinkAggregationEnabled: ptr(true),
		PortLinkAggregationSupport: ptr(true),
		PortLinkAggregationID:      ptr(int64(1000)),
		PortAutonegotiationEnabled: ptr(true),
		PortAutonegotiationSupport: ptr(true),
		PortPhysicalCapabilities:   []string{"1000BASE-T fdx", "100BASE-TX fdx", "100BASE-TX hdx", "10BASE-T fdx", "10BASE-T hdx"},
		PortMAUType:                ptr("1000BASE-T full duplex"),
		PortMTU:                    ptr(9216),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestProcessed_IsZero(t *testing.T) {
	if !(Processed{}).IsZero() {
		t.Error("empty Processed is not zero")
	}
	if (Processed{CapabilitiesSupport: []string{}}).IsZero() {
		t.Error("Processed with an empty received list is zero")
	}
}

func TestSplitPDU(t *testing.T) {
	// chassis MAC, port ifName "Eth1", TTL 120, end
	pdu, _ := hex.DecodeString("0207" + "04001122334455" + "0405" + "0545746831" + "0602" + "0078" + "0000" + "ffff")
	got, err := SplitPDU(pdu)
	if err != nil {
		t.Fatal(err)
	}
	want := []TLV{{1, "04001122334455"}, {2, "0545746831"}, {3, "0078"}, {0, ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SplitPDU (-want +got):\n%s", diff)
	}

	// a 9-bit length: an org-specific TLV of 300 bytes
	long := append([]byte{0xff, 0x2c}, make([]byte, 300)...)
	got, err = SplitPDU(long)
	if err != nil || len(got) != 1 || got[0].Type != 127 || len(got[0].Value) != 600 {
		t.Errorf("long TLV: got %d TLVs, err %v", len(got), err)
	}

	for _, bad := range []string{"02", "0207040011"} {
		b, _ := hex.DecodeString(bad)
		if _, err := SplitPDU(b); err == nil {
			t.Errorf("SplitPDU(%s): no error", bad)
		}
	}
}

func TestTLV_JSON(t *testing.T) {
	var tlvs []TLV
	if err := json.Unmarshal([]byte(`[[1, "04001122334455"], [0, ""]]`), &tlvs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]TLV{{1, "04001122334455"}, {0, ""}}, tlvs); diff != "" {
		t.Errorf("unmarshal (-want +got):\n%s", diff)
	}
	b, _ := json.Marshal(tlvs)
	if got, want := string(b), `[[1,"04001122334455"],[0,""]]`; got != want {
		t.Errorf("marshal: got %s, want %s", got, want)
	}
	for _, bad := range []string{`[1]`, `{"type":1}`, `["1","00"]`, `[1, 2]`, `[1,"00",3]`} {
		var tlv TLV
		if err := json.Unmarshal([]byte(bad), &tlv); err == nil {
			t.Errorf("unmarshal %s: no error", bad)
		}
	}
}
