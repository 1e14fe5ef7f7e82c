package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const fixtures = "../../testdata/ipa"

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecode_ReferenceExample(t *testing.T) {
	rep, raw, err := Decode(bytes.NewReader(readFixture(t, "example.json")), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	inv := rep.Inventory
	if got, want := len(inv.Interfaces), 2; got != want {
		t.Fatalf("interfaces: got %d, want %d", got, want)
	}
	if diff := cmp.Diff(&CPU{
		ModelName: "AMD EPYC 7313 16-Core Processor", Frequency: "3000.0", Count: 32,
		Architecture: "x86_64", Flags: []string{"fpu", "pse", "svm", "aes", "pdpe1gb", "avx2"}, SocketCount: 1,
	}, inv.CPU); diff != "" {
		t.Errorf("cpu (-want +got):\n%s", diff)
	}
	if got, want := inv.Disks[1], (Disk{
		Name: "/dev/sda", Model: "ST4000NM0035", Size: 4000787030016, Rotational: true,
		WWN: "0x5000c500a1b2c3d4", Serial: "ZC1ABCDE", Vendor: "ATA", WWNWithExtension: "0x5000c500a1b2c3d4",
		HCTL: "2:0:0:0", ByPath: "/dev/disk/by-path/pci-0000:00:17.0-ata-1",
		LogicalSectors: 512, PhysicalSectors: 4096, Tran: "sata",
	}); got != want {
		t.Errorf("disk 1: got %+v, want %+v", got, want)
	}
	if rep.Error != nil {
		t.Errorf("error: got %q, want nil", *rep.Error)
	}
	if got, want := rep.BootInterface, "01-3c-fd-fe-11-22-30"; got != want {
		t.Errorf("boot_interface: got %q, want %q", got, want)
	}
	if got, want := rep.LLDPRaw["eno1"][1], (TLV{Type: 2, Value: "0545746865726e6574312f3132"}); got != want {
		t.Errorf("lldp_raw eno1[1]: got %+v, want %+v", got, want)
	}
	if got, want := inv.Memory.PhysicalMB, 131072; got != want {
		t.Errorf("memory.physical_mb: got %d, want %d", got, want)
	}
	// The raw form keeps numbers exact and the fields as sent.
	rawInv := raw["inventory"].(map[string]any)
	if got, want := rawInv["memory"].(map[string]any)["total"], json.Number("135089270784"); got != want {
		t.Errorf("raw memory.total: got %#v, want %#v", got, want)
	}
	if _, ok := rawInv["disks"].([]any)[0].(map[string]any)["vendor"]; !ok {
		t.Error("raw disk 0 lost its null vendor")
	}
}

func TestDecode_Fixtures(t *testing.T) {
	for _, name := range []string{"example.json", "small-2nic.json", "large-40nic-24disk.json", "ramdisk-error.json", "lldp-malformed.json"} {
		t.Run(name, func(t *testing.T) {
			rep, raw, err := DecodeBytes(readFixture(t, name), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Inventory == nil || len(rep.Inventory.Interfaces) == 0 || raw == nil {
				t.Fatalf("decoded an empty report: %+v", rep)
			}
		})
	}
}

func TestDecode_LargePayload(t *testing.T) {
	rep, _, err := DecodeBytes(readFixture(t, "large-40nic-24disk.json"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rep.Inventory.Interfaces); got != 40 {
		t.Errorf("interfaces: got %d, want 40", got)
	}
	if got := len(rep.Inventory.Disks); got != 24 {
		t.Errorf("disks: got %d, want 24", got)
	}
	if got := len(rep.LLDPRaw); got != 40 {
		t.Errorf("lldp_raw interfaces: got %d, want 40", got)
	}
	if got := len(rep.PCIDevices); got != 4 {
		t.Errorf("pci_devices: got %d, want 4", got)
	}
	if !json.Valid(rep.Data) {
		t.Errorf("data is not kept as JSON: %s", rep.Data)
	}
}

func TestDecode_Rejects(t *testing.T) {
	tests := []struct {
		file string
		want string // substring of the error
		is   error
	}{
		{file: "bad/malformed.json", want: "invalid JSON"},
		{file: "bad/too-deep.json", want: "more than 25 levels", is: ErrTooDeep},
		{file: "bad/wrong-types.json", want: "inventory.cpu.count: expected integer, got string"},
		{file: "bad/wrong-type-disk-size.json", want: "inventory.disks[1].size: expected integer, got string"},
		{file: "bad/wrong-type-interfaces.json", want: "inventory.interfaces: expected array, got object"},
		{file: "bad/missing-inventory.json", want: "inventory: required"},
		{file: "bad/missing-interfaces.json", want: "inventory.interfaces: required"},
		{file: "bad/lldp-not-pairs.json", want: "lldp_raw.eth0[1]: expected [type, hex] pair"},
		{file: "bad/not-object.json", want: "report: expected object, got array"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, _, err := DecodeBytes(readFixture(t, tt.file), Limits{})
			if err == nil {
				t.Fatal("decoded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
		})
	}
}

func TestDecode_WrongTypesNameTheField(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{`{"inventory":{"interfaces":[{"name":"eth0","mac_address":5}]}}`, "inventory.interfaces[0].mac_address: expected string, got number"},
		{`{"inventory":{"interfaces":[],"disks":[{"size":1.5}]}}`, "inventory.disks[0].size: expected integer, got number 1.5"},
		{`{"inventory":{"interfaces":[],"disks":[{"size":1e30}]}}`, "inventory.disks[0].size: expected integer, got number 1e30"},
		{`{"inventory":{"interfaces":[],"disks":[{"size":99999999999999999999}]}}`, "inventory.disks[0].size: integer 99999999999999999999 out of range"},
		{`{"inventory":{"interfaces":[],"disks":[{"rotational":"yes"}]}}`, "inventory.disks[0].rotational: expected boolean, got string"},
		{`{"inventory":{"interfaces":[],"memory":{"total":"1G"}}}`, "inventory.memory.total: expected integer, got string"},
		{`{"inventory":{"interfaces":[],"cpu":{"flags":"vmx aes"}}}`, "inventory.cpu.flags: expected array, got string"},
		{`{"inventory":{"interfaces":[],"system_vendor":{"firmware":{"version":2}}}}`, "inventory.system_vendor.firmware.version: expected string, got number"},
		{`{"inventory":{"interfaces":[]},"error":false}`, "error: expected string, got boolean"},
		{`{"inventory":{"interfaces":[]},"configuration":{"managers":[{"name":1}]}}`, "configuration.managers[0].name: expected string, got number"},
		{`{"inventory":{"interfaces":[]},"lldp_raw":{"eth0":[["1","00"]]}}`, "lldp_raw.eth0[0]: TLV type: expected integer"},
		{`{"inventory":{"interfaces":[]},"lldp_raw":["eth0"]}`, "lldp_raw: expected object, got array"},
		{`{"inventory":{"interfaces":[]},"pci_devices":[{"vendor_id":1}]}`, "pci_devices[0].vendor_id: expected string, got number"},
		{`{"inventory":"none"}`, "inventory: expected object, got string"},
		{`{"inventory":null}`, "inventory: required"},
		{`{"inventory":{"interfaces":null}}`, "inventory.interfaces: required"},
		{`{"inventory":{"interfaces":[]}} {}`, "data after the top-level object"},
		{``, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, _, err := DecodeBytes([]byte(tt.body), Limits{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDecode_ToleratesNullsAndUnknownFields(t *testing.T) {
	body := `{"inventory":{"interfaces":[{"name":"eth0","mac_address":"52:54:00:12:34:56","ipv4_address":null,
	  "speed_mbps":null,"lldp":null,"new_field":{"x":[1,2]}}],"cpu":null,"disks":null,"memory":{"total":1,"physical_mb":null},
	  "future":true},"error":null,"root_disk":null,"numa_topology":{"ram":[{"numa_node":0}]},"shiny":"new"}`
	rep, raw, err := DecodeBytes([]byte(body), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := &Report{
		Inventory: &Inventory{
			Interfaces: []Interface{{Name: "eth0", MACAddress: "52:54:00:12:34:56"}},
			Memory:     &Memory{Total: 1},
		},
		NUMATopology: json.RawMessage(`{"ram":[{"numa_node":0}]}`),
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if raw["shiny"] != "new" {
		t.Errorf("raw lost an unknown field: %v", raw)
	}
}

func TestDecode_DepthLimit(t *testing.T) {
	nest := func(n int) string {
		return `{"inventory":{"interfaces":[]},"data":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + "}"
	}
	if _, _, err := DecodeBytes([]byte(nest(25)), Limits{}); err != nil {
		t.Errorf("depth 25: %v", err)
	}
	if _, _, err := DecodeBytes([]byte(nest(26)), Limits{}); !errors.Is(err, ErrTooDeep) {
		t.Errorf("depth 26: got %v, want ErrTooDeep", err)
	}
	if _, _, err := DecodeBytes([]byte(nest(6)), Limits{MaxDepth: 5}); !errors.Is(err, ErrTooDeep) {
		t.Errorf("depth 6 with MaxDepth 5: got %v, want ErrTooDeep", err)
	}
	// Brackets inside strings do not count.
	quoted := `{"inventory":{"interfaces":[]},"logs":"` + strings.Repeat(`[{\"`, 50) + `"}`
	if _, _, err := DecodeBytes([]byte(quoted), Limits{}); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
}

func TestDecode_MaxBytes(t *testing.T) {
	body := readFixture(t, "small-2nic.json")
	if _, _, err := Decode(bytes.NewReader(body), Limits{MaxBytes: int64(len(body))}); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	if _, _, err := Decode(bytes.NewReader(body), Limits{MaxBytes: int64(len(body) - 1)}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: got %v, want ErrTooLarge", err)
	}
}

func TestReport_RoundTrip(t *testing.T) {
	rep, _, err := DecodeBytes(readFixture(t, "large-40nic-24disk.json"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := DecodeBytes(b, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rep, again); diff != "" {
		t.Errorf("round trip (-first +second):\n%s", diff)
	}
}

// A body of many small values decodes to far more memory than its size, so
// their number is bounded.
func TestDecode_ValueLimit(t *testing.T) {
	body := func(n int, extra string) []byte {
		return []byte(`{"inventory":{"interfaces":[]},"data":[` + strings.Repeat("{},", n-1) + `{}]` + extra + `}`)
	}
	if _, _, err := DecodeBytes(body(900, ""), Limits{MaxValues: 1000}); err != nil {
		t.Errorf("900 values with MaxValues 1000: %v", err)
	}
	if _, _, err := DecodeBytes(body(2000, ""), Limits{MaxValues: 1000}); !errors.Is(err, ErrTooMany) {
		t.Errorf("2000 values: got %v, want ErrTooMany", err)
	}
	// Invalid JSON after the values: the fast parser gives up and the
	// limit is checked before encoding/json runs.
	if _, _, err := DecodeBytes(body(2000, `,"s":tru`), Limits{MaxValues: 1000}); !errors.Is(err, ErrTooMany) {
		t.Errorf("2000 values, invalid JSON: got %v, want ErrTooMany", err)
	}
}

// sku is ferro-agent's addition to IPA's system_vendor: a string is
// decoded, anything else (a custom hardware manager's) is kept in the raw
// data and does not refuse the report.
func TestDecode_SKUIsLenient(t *testing.T) {
	for _, tc := range []struct {
		sku  string
		want string
	}{{`"SKU-1"`, "SKU-1"}, {`42`, ""}, {`{"a":1}`, ""}, {`null`, ""}} {
		body := `{"inventory":{"interfaces":[],"system_vendor":{"manufacturer":"M","sku":` + tc.sku + `}}}`
		rep, raw, err := DecodeBytes([]byte(body), Limits{})
		if err != nil {
			t.Errorf("sku %s: %v", tc.sku, err)
			continue
		}
		if rep.Inventory.SystemVendor.SKU != tc.want || rep.Inventory.SystemVendor.Manufacturer != "M" {
			t.Errorf("sku %s: system_vendor = %+v", tc.sku, rep.Inventory.SystemVendor)
		}
		sv := raw["inventory"].(map[string]any)["system_vendor"].(map[string]any)
		if _, kept := sv["sku"]; !kept {
			t.Errorf("sku %s: not kept in the raw data", tc.sku)
		}
	}
	// a known field of the wrong type is still refused
	if _, _, err := DecodeBytes([]byte(`{"inventory":{"interfaces":[],"system_vendor":{"manufacturer":1}}}`), Limits{}); err == nil {
		t.Error("manufacturer 1 accepted")
	}
}

// IPA 9.8 and later send numa_node_id as sysfs' text ("-1" when the
// device has no NUMA affinity); ferro-agent sends an integer. Ironic and
// ironic-inspector accept whatever comes, so a value that is neither is
// kept in the raw data and does not refuse the report.
func TestDecode_NUMANodeIDAsStringOrInteger(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  *int
	}{
		{`"-1"`, ptr(-1)}, {`"0"`, ptr(0)}, {`"3"`, ptr(3)}, {`1`, ptr(1)}, {`-1`, ptr(-1)},
		{`null`, nil}, {`"n/a"`, nil}, {`""`, nil}, {`1.5`, nil}, {`{"x":1}`, nil},
	} {
		body := `{"inventory":{"interfaces":[]},"pci_devices":[{"vendor_id":"8086","product_id":"1521","numa_node_id":` + tc.value + `}]}`
		rep, raw, err := DecodeBytes([]byte(body), Limits{})
		if err != nil {
			t.Errorf("numa_node_id %s: %v", tc.value, err)
			continue
		}
		if diff := cmp.Diff(tc.want, rep.PCIDevices[0].NUMANodeID); diff != "" || rep.PCIDevices[0].VendorID != "8086" {
			t.Errorf("numa_node_id %s: decoded %+v (-want +got):\n%s", tc.value, rep.PCIDevices[0], diff)
		}
		dev := raw["pci_devices"].([]any)[0].(map[string]any)
		if _, kept := dev["numa_node_id"]; !kept {
			t.Errorf("numa_node_id %s: not kept in the raw data", tc.value)
		}
	}
}

func ptr[T any](v T) *T { return &v }
