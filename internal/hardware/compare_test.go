package hardware

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// base is a machine as the stock agent's example report describes it.
func base() Machine {
	return Machine{
		System:   System{Manufacturer: "Dell Inc.", Product: "PowerEdge R6515", Serial: "7XK2M93"},
		Firmware: Firmware{Vendor: "Dell Inc.", Version: "2.14.1", BuildDate: "03/12/2024"},
		CPU:      CPU{Model: "AMD EPYC 7313 16-Core Processor", Count: 32, Sockets: 1, Architecture: "x86_64"},
		Memory: Memory{PhysicalMB: 131072, Modules: []MemoryModule{
			{Locator: "A1", Size: "65536 MB", Serial: "M1"}, {Locator: "A2", Size: "65536 MB", Serial: "M2"}}},
		Disks: []Disk{
			{Name: "/dev/nvme0n1", SizeBytes: 960197124096, WWN: "eui.3634", Serial: "S64F"},
			{Name: "/dev/sda", SizeBytes: 4000787030016, WWN: "0x5000c500", Serial: "ZC1A"},
		},
		NICs: []NIC{
			{Name: "eno1", MAC: "3c:fd:fe:11:22:30", Switch: SwitchPort{SystemName: "sw1", PortID: "Eth1/1", VLANs: []int{100, 200}}},
			{Name: "eno2", MAC: "3c:fd:fe:11:22:31"},
		},
		BMC: BMC{IPv4: "198.51.100.121", MAC: "3c:fd:fe:11:22:99"},
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name   string
		change func(m *Machine)
		want   []Change
	}{
		{name: "same machine", change: func(*Machine) {}},
		{
			name:   "system serial",
			change: func(m *Machine) { m.System.Serial = "8YL3N04" },
			want:   []Change{{Component: "system", Change: "changed", Field: "serial", Old: "7XK2M93", New: "8YL3N04"}},
		},
		{
			name:   "firmware updated",
			change: func(m *Machine) { m.Firmware.Version, m.Firmware.BuildDate = "2.15.0", "06/01/2024" },
			want: []Change{
				{Component: "firmware", Change: "changed", Field: "version", Old: "2.14.1", New: "2.15.0"},
				{Component: "firmware", Change: "changed", Field: "build_date", Old: "03/12/2024", New: "06/01/2024"},
			},
		},
		{
			name:   "firmware not reported (out-of-band) is no change",
			change: func(m *Machine) { m.Firmware = Firmware{} },
		},
		{
			name:   "CPU replaced",
			change: func(m *Machine) { m.CPU.Model, m.CPU.Count = "AMD EPYC 7443", 48 },
			want: []Change{
				{Component: "cpu", Change: "changed", Field: "model", Old: "AMD EPYC 7313 16-Core Processor", New: "AMD EPYC 7443"},
				{Component: "cpu", Change: "changed", Field: "count", Old: "32", New: "48"},
			},
		},
		{
			name: "DIMM missing",
			change: func(m *Machine) {
				m.Memory.PhysicalMB = 65536
				m.Memory.Modules = m.Memory.Modules[:1]
			},
			want: []Change{
				{Component: "memory", Change: "changed", Field: "total", Old: "131072 MiB", New: "65536 MiB"},
				{Component: "memory_module", ID: "A2", Change: "removed", Old: "65536 MB, serial M2"},
			},
		},
		{
			name:   "DIMM swapped for another",
			change: func(m *Machine) { m.Memory.Modules[1].Serial = "M9" },
			want:   []Change{{Component: "memory_module", ID: "A2", Change: "changed", Field: "serial", Old: "M2", New: "M9"}},
		},
		{
			name:   "modules not collected this time: no module change",
			change: func(m *Machine) { m.Memory.Modules = nil },
		},
		{
			name: "disk removed, the other renamed",
			change: func(m *Machine) {
				m.Disks = []Disk{{Name: "/dev/nvme1n1", SizeBytes: 960197124096, WWN: "eui.3634", Serial: "S64F"}}
			},
			want: []Change{
				{Component: "disk", ID: "0x5000c500", Change: "removed", Old: "/dev/sda, 3.6 TiB, serial ZC1A"},
				{Component: "disk", ID: "eui.3634", Change: "changed", Field: "name", Old: "/dev/nvme0n1", New: "/dev/nvme1n1"},
			},
		},
		{
			name: "disk replaced by a bigger one in the same slot",
			change: func(m *Machine) {
				m.Disks[1] = Disk{Name: "/dev/sda", SizeBytes: 8001563222016, WWN: "0x5000c5ff", Serial: "ZC9Z"}
			},
			want: []Change{
				{Component: "disk", ID: "0x5000c500", Change: "removed", Old: "/dev/sda, 3.6 TiB, serial ZC1A"},
				{Component: "disk", ID: "0x5000c5ff", Change: "added", New: "/dev/sda, 7.3 TiB, serial ZC9Z"},
			},
		},
		{
			name: "disks without WWN or serial are told apart by name",
			change: func(m *Machine) {
				m.Disks = []Disk{{Name: "/dev/vda", SizeBytes: 10 << 30}}
			},
			want: []Change{
				{Component: "disk", ID: "/dev/nvme0n1", Change: "removed", Old: "/dev/nvme0n1, 894.3 GiB, serial S64F"},
				{Component: "disk", ID: "/dev/sda", Change: "removed", Old: "/dev/sda, 3.6 TiB, serial ZC1A"},
				{Component: "disk", ID: "/dev/vda", Change: "added", New: "/dev/vda, 10 GiB"},
			},
		},
		{
			name: "disk grew (a virtual disk resized)",
			change: func(m *Machine) {
				m.Disks[0].SizeBytes = 2 * 960197124096
			},
			want: []Change{{Component: "disk", ID: "eui.3634", Change: "changed", Field: "size", Old: "894.3 GiB", New: "1.7 TiB"}},
		},
		{
			name:   "NIC moved to another switch port",
			change: func(m *Machine) { m.NICs[0].Switch.PortID = "Eth1/7" },
			want: []Change{{Component: "nic", ID: "3c:fd:fe:11:22:30", Change: "changed", Field: "switch_port",
				Old: "sw1 port Eth1/1", New: "sw1 port Eth1/7"}},
		},
		{
			name:   "NIC's VLANs changed",
			change: func(m *Machine) { m.NICs[0].Switch.VLANs = []int{200, 300} },
			want: []Change{{Component: "nic", ID: "3c:fd:fe:11:22:30", Change: "changed", Field: "vlans",
				Old: "100,200", New: "200,300"}},
		},
		{
			name:   "NIC lost its LLDP neighbour",
			change: func(m *Machine) { m.NICs[0].Switch = SwitchPort{} },
			want: []Change{{Component: "nic", ID: "3c:fd:fe:11:22:30", Change: "changed", Field: "switch_port",
				Old: "sw1 port Eth1/1"}},
		},
		{
			name: "NIC replaced",
			change: func(m *Machine) {
				m.NICs[1] = NIC{Name: "eno2", MAC: "b8:ce:f6:00:00:01", Switch: SwitchPort{ChassisID: "aa:bb:cc:dd:ee:ff", PortID: "7"}}
			},
			want: []Change{
				{Component: "nic", ID: "3c:fd:fe:11:22:31", Change: "removed", Old: "eno2"},
				{Component: "nic", ID: "b8:ce:f6:00:00:01", Change: "added", New: "eno2, on aa:bb:cc:dd:ee:ff port 7"},
			},
		},
		{
			name:   "BMC readdressed",
			change: func(m *Machine) { m.BMC.IPv4 = "198.51.100.122" },
			want:   []Change{{Component: "bmc", Change: "changed", Field: "ipv4_address", Old: "198.51.100.121", New: "198.51.100.122"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := base()
			tt.change(&cur)
			got := Compare(base(), cur)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	if got := Summary(nil); got != "no hardware changes" {
		t.Errorf("Summary(nil) = %q", got)
	}
	got := Summary([]Change{
		{Component: "disk", ID: "0x5000c500", Change: "removed", Old: "/dev/sda, 3.6 TiB"},
		{Component: "nic", ID: "3c:fd:fe:11:22:30", Change: "changed", Field: "switch_port", Old: "sw1 port 1", New: "sw1 port 7"},
	})
	want := `2 hardware changes: disk 0x5000c500 removed (/dev/sda, 3.6 TiB); NIC 3c:fd:fe:11:22:30 switch port changed from "sw1 port 1" to "sw1 port 7"`
	if got != want {
		t.Errorf("Summary =\n%s\nwant\n%s", got, want)
	}
}

func TestPluginData_IsPlainJSON(t *testing.T) {
	pd := PluginData("2026-01-02T03:04:05Z", []Change{{Component: "disk", ID: "w", Change: "removed", Old: "/dev/sdb, 10 GiB"}})
	b, err := json.Marshal(pd)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"added":0,"changed":0,"changes":[{"change":"removed","component":"disk","id":"w","old":"/dev/sdb, 10 GiB"}],"previous_inspection":"2026-01-02T03:04:05Z","removed":1}`
	if string(b) != want {
		t.Errorf("plugin data = %s\nwant %s", b, want)
	}
}

// TestRead_StockAgentReport reads the stock agent's example report as the
// inspector stores it: the inventory, and the rest as plugin_data with the
// lldp_basic hook's lldp_processed and IPA's dmi collector's modules.
func TestRead_StockAgentReport(t *testing.T) {
	raw, err := os.ReadFile("../../test/inspection/testdata/ipa-payload-example.json")
	if err != nil {
		t.Fatal(err)
	}
	var report map[string]any
	if err := json.Unmarshal(raw, &report); err != nil {
		t.Fatal(err)
	}
	inv := report["inventory"].(map[string]any)
	delete(report, "inventory")
	report["all_interfaces"] = map[string]any{"eno1": map[string]any{"lldp_processed": map[string]any{
		"switch_chassis_id": "64:64:9b:31:12:00", "switch_system_name": "tor-a", "switch_port_id": "xe-0/0/12",
		"switch_port_vlans": []any{map[string]any{"id": 100, "name": "prov"}}, "switch_port_untagged_vlan_id": 100}}}
	report["dmi"] = map[string]any{"memory": map[string]any{"devices": []any{
		map[string]any{"Locator": "A1", "Bank Locator": "P0", "Size": "65536 MB", "Speed": "3200 MT/s", "Serial Number": "X1"},
		map[string]any{"Locator": "A2", "Size": "No Module Installed"},
	}}}
	report["root_disk"] = map[string]any{"name": "/dev/nvme0n1", "serial": "S64FNE0R602432"}
	m := Read(&baremetal.Inventory{Inventory: inv, PluginData: report})

	if m.System.Serial != "7XK2M93" || m.Firmware.Version != "2.14.1" || m.CPU.Count != 32 || m.CPU.Sockets != 1 {
		t.Errorf("system/firmware/cpu = %+v %+v %+v", m.System, m.Firmware, m.CPU)
	}
	if m.Memory.PhysicalMB != 131072 || len(m.Memory.Modules) != 1 || m.Memory.Modules[0].Locator != "P0/A1" {
		t.Errorf("memory = %+v", m.Memory)
	}
	if len(m.Disks) != 2 || m.Disks[1].SizeBytes != 4000787030016 || m.Disks[1].WWN != "0x5000c500a1b2c3d4" {
		t.Errorf("disks = %+v", m.Disks)
	}
	if root := m.RootDisk(); root == nil || root.Name != "/dev/nvme0n1" {
		t.Errorf("root disk = %+v", root)
	}
	want := SwitchPort{ChassisID: "64:64:9b:31:12:00", SystemName: "tor-a", PortID: "xe-0/0/12", UntaggedVLAN: 100, VLANs: []int{100}}
	if diff := cmp.Diff(want, m.NICs[0].Switch); diff != "" {
		t.Errorf("eno1 switch port (-want +got):\n%s", diff)
	}
	if !m.NICs[0].PXE || m.NICs[1].PXE || m.NICs[0].SpeedMbps != 10000 {
		t.Errorf("NICs = %+v", m.NICs)
	}
	if m.BMC.IPv4 != "198.51.100.121" || m.BMC.IPv6 != "" || m.BMC.MAC != "3c:fd:fe:11:22:99" {
		t.Errorf("BMC = %+v", m.BMC)
	}
}

// TestRead_RawLLDP reads the switch port from the inventory's own TLVs
// when no hook processed them.
func TestRead_RawLLDP(t *testing.T) {
	inv := map[string]any{"interfaces": []any{map[string]any{"name": "eth0", "mac_address": "52:54:00:00:00:01",
		// chassis ID (MAC), port ID (interface name "swp3"), system name "lab-switch"
		"lldp": []any{[]any{1, "04525400aabbcc"}, []any{2, "0573777033"}, []any{5, "6c61622d737769746368"}}}}}
	m := Read(&baremetal.Inventory{Inventory: inv})
	want := SwitchPort{ChassisID: "52:54:00:aa:bb:cc", PortID: "swp3", SystemName: "lab-switch"}
	if diff := cmp.Diff(want, m.NICs[0].Switch); diff != "" {
		t.Errorf("switch port (-want +got):\n%s", diff)
	}
}

// TestRead_ToleratesOddShapes: a field of an unexpected type loses only
// itself, and nothing panics on an empty or nil inventory.
func TestRead_ToleratesOddShapes(t *testing.T) {
	_ = Read(nil)
	_ = Read(&baremetal.Inventory{})
	m := Read(&baremetal.Inventory{Inventory: map[string]any{
		"cpu":   "not an object",
		"disks": []any{map[string]any{"name": "/dev/sda", "size": 1024}},
	}})
	if len(m.Disks) != 1 || m.Disks[0].SizeBytes != 1024 {
		t.Errorf("disks = %+v", m.Disks)
	}
}

func TestSize(t *testing.T) {
	for b, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 10 << 30: "10 GiB", 960197124096: "894.3 GiB"} {
		if got := Size(b); got != want {
			t.Errorf("Size(%d) = %q, want %q", b, got, want)
		}
	}
}
