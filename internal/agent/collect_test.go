package agent

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/google/go-cmp/cmp"
)

// testdata/vm is a /proc and /sys tree shaped like a QEMU machine's: a
// virtio NIC with carrier and an e1000 without, a virtio-blk disk, a SCSI
// disk on virtio-scsi, a small ATA disk, loop and zram devices.
const vmRoot = "testdata/vm"

func TestCPU_ReadsCpuinfo(t *testing.T) {
	cpu, err := CPU(vmRoot)
	if err != nil {
		t.Fatal(err)
	}
	want := &inventory.CPU{
		ModelName: "AMD EPYC 7B13", Frequency: "2445.406", Count: 2,
		Architecture: unameArch("amd64"), Flags: []string{"fpu", "vme", "de", "pse", "tsc", "msr", "pae"}, SocketCount: 1,
	}
	want.Architecture = cpu.Architecture // the test host's GOARCH
	if diff := cmp.Diff(want, cpu); diff != "" {
		t.Errorf("cpu (-want +got):\n%s", diff)
	}
}

func TestCPU_MaxFrequencyFromCpufreq(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 1200.000\n")
	writeFile(t, root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3500000\n")
	cpu, err := CPU(root)
	if err != nil {
		t.Fatal(err)
	}
	if cpu.Frequency != "3500.0000" || cpu.Count != 1 {
		t.Errorf("cpu = %+v", cpu)
	}
}

func TestCPU_MissingCpuinfoFails(t *testing.T) {
	if _, err := CPU(t.TempDir()); err == nil {
		t.Fatal("no error")
	}
}

func TestMemory_TotalFromMeminfoPhysicalFromSMBIOS(t *testing.T) {
	m, err := Memory(vmRoot, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Total != 466124*1024 || m.PhysicalMB != 0 {
		t.Errorf("memory = %+v", m)
	}
	root := t.TempDir()
	writeSMBIOS(t, root, []uint16{256, 512})
	smb, err := SMBIOS(root)
	if err != nil {
		t.Fatal(err)
	}
	m, err = Memory(vmRoot, smb)
	if err != nil {
		t.Fatal(err)
	}
	if m.PhysicalMB != 768 {
		t.Errorf("physical_mb = %d, want 768", m.PhysicalMB)
	}
}

func TestSystemVendor_FromSMBIOSType1And0(t *testing.T) {
	root := t.TempDir()
	writeSMBIOS(t, root, []uint16{1024})
	smb, err := SMBIOS(root)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := SystemVendor(smb)
	if err != nil {
		t.Fatal(err)
	}
	want := &inventory.SystemVendor{
		Manufacturer: "FerroLab", ProductName: "VM-1", SerialNumber: "SER123", SKU: "SKU9",
		Firmware: &inventory.Firmware{Vendor: "SeaBIOS", Version: "1.16.2", BuildDate: "04/01/2014"},
	}
	if diff := cmp.Diff(want, sv); diff != "" {
		t.Errorf("system_vendor (-want +got):\n%s", diff)
	}
}

func TestSMBIOS_AbsentIsNotFound(t *testing.T) {
	if _, err := SMBIOS(vmRoot); !errors.Is(err, errNotFound) {
		t.Errorf("err = %v, want errNotFound", err)
	}
}

func TestDisks_WholeDisksWithSysfsAttributes(t *testing.T) {
	disks, err := Disks(vmRoot)
	if err != nil {
		t.Fatal(err)
	}
	want := []inventory.Disk{
		{Name: "/dev/sda", Model: "QEMU HARDDISK", Vendor: "QEMU", Size: 10485760 * 512, Serial: "SCSI2",
			WWN: "0x5000c500a1b2c3d4", HCTL: "0:0:0:0", ByPath: "/dev/disk/by-path/pci-0000:00:05.0-scsi-0:0:0:0",
			LogicalSectors: 512, PhysicalSectors: 512},
		{Name: "/dev/sdb", Model: "SMALL", Vendor: "ATA", Size: 2097152 * 512, Rotational: true, HCTL: "1:0:0:0"},
		{Name: "/dev/vda", Vendor: "0x1af4", Size: 20971520 * 512, Rotational: true, Serial: "VBLK1",
			ByPath: "/dev/disk/by-path/pci-0000:00:04.0", LogicalSectors: 512, PhysicalSectors: 4096},
	}
	if diff := cmp.Diff(want, disks); diff != "" {
		t.Errorf("disks (-want +got):\n%s", diff)
	}
}

func TestRootDisk_SmallestAtLeast4GiB(t *testing.T) {
	disks, err := Disks(vmRoot)
	if err != nil {
		t.Fatal(err)
	}
	rd := RootDisk(disks)
	if rd == nil || rd.Name != "/dev/sda" {
		t.Errorf("root disk = %+v, want /dev/sda (5 GiB; sdb is 1 GiB)", rd)
	}
	if RootDisk(disks[1:2]) != nil {
		t.Error("a 1 GiB disk was chosen as root disk")
	}
}

func TestInterfaces_PhysicalOnly(t *testing.T) {
	ifs, err := Interfaces(vmRoot, func(name string) (string, string) {
		if name == "eth0" {
			return "10.0.2.15", "fec0::1"
		}
		return "", ""
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []inventory.Interface{
		{Name: "eth0", MACAddress: "52:54:00:12:34:56", IPv4Address: "10.0.2.15", IPv6Address: "fec0::1", HasCarrier: true,
			Vendor: "0x1af4", Product: "0x0001", Driver: "virtio_net", PCIAddress: "virtio0"},
		{Name: "eth1", MACAddress: "52:54:00:ab:cd:ef", Vendor: "0x8086", Product: "0x100e", Driver: "e1000",
			PCIAddress: "0000:00:06.0", SpeedMbps: 1000},
	}
	if diff := cmp.Diff(want, ifs); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
}

func TestPCIDevices_IDsWithoutPrefix(t *testing.T) {
	devs, err := PCIDevices(vmRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 4 {
		t.Fatalf("%d devices, want 4: %+v", len(devs), devs)
	}
	e := devs[3]
	if e.Bus != "0000:00:06.0" || e.VendorID != "8086" || e.ProductID != "100e" || e.Class != "020000" || e.Revision != "03" || e.NUMANodeID != nil {
		t.Errorf("e1000 = %+v", e)
	}
	if devs[0].NUMANodeID == nil || *devs[0].NUMANodeID != 0 {
		t.Errorf("numa node of %s = %v", devs[0].Bus, devs[0].NUMANodeID)
	}
}

func TestBoot_UEFIWhenEFIExposed(t *testing.T) {
	if b := Boot(vmRoot, "01-52-54-00-12-34-56"); b.CurrentBootMode != "bios" || b.PXEInterface != "01-52-54-00-12-34-56" {
		t.Errorf("boot = %+v", b)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys/firmware/efi"), 0o755); err != nil {
		t.Fatal(err)
	}
	if b := Boot(root, ""); b.CurrentBootMode != "uefi" {
		t.Errorf("boot = %+v", b)
	}
}

func TestModules_MatchDevicesAndFollowers(t *testing.T) {
	ml := ParseModuleList("# header\n" +
		"k/virtio.ko\t\t\n" +
		"k/virtio_pci.ko\tvirtio\tpci:v00001AF4d*sv*sd*bc*sc*i*\n" +
		"k/failover.ko\t\t\n" +
		"k/virtio_net.ko\tvirtio,failover\tvirtio:d00000001v*\n" +
		"k/e1000.ko\t\tpci:v00008086d0000100Esv*sd*bc*sc*i*\n" +
		"k/igb.ko\t\tpci:v00008086d000010C9sv*sd*bc*sc*i*\n" +
		"k/ipmi_msghandler.ko\t\t\n" +
		"k/ipmi_si.ko\tipmi_msghandler\tacpi*:IPI0001:* platform:dmi-ipmi-si\n" +
		"k/ipmi_devintf.ko\tipmi_msghandler\t\n" +
		"k/nvme_core.ko\tipmi_msghandler\t\n" +
		"k/sd_mod.ko\tscsi_mod\tscsi:t-0x00* scsi:t-0x07*\n" +
		"k/scsi_mod.ko\t\t\n")
	got := ml.Matching(Modaliases(vmRoot))
	want := []string{"virtio", "virtio_pci", "failover", "virtio_net", "e1000", "ipmi_msghandler", "ipmi_si", "ipmi_devintf"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modules (-want +got):\n%s", diff)
	}
	if got := ml.Matching(nil); len(got) != 0 {
		t.Errorf("no device: %v", got)
	}
}

func TestCollect_FailingCollectorGoesToError(t *testing.T) {
	root := t.TempDir()
	// no /proc/cpuinfo, no /sys/block: two failures, the rest collected
	writeFile(t, root, "proc/meminfo", "MemTotal: 1024 kB\n")
	f := &Failures{}
	p, _ := ParseCmdline("BOOTIF=01-52-54-00-12-34-56 ipa-inspection-collectors=default,pci-devices,lldp,logs")
	host := Host{Root: root,
		BMC: func(context.Context) (*BMC, error) { return nil, errors.New("ipmi: device busy") },
		LLDP: func(ctx context.Context, names []string, d time.Duration) (map[string][]inventory.TLV, error) {
			return nil, nil
		},
	}
	rep := Collect(context.Background(), slog.New(slog.DiscardHandler), host, p, f)
	rep.Error = f.Error()
	if rep.Error == nil {
		t.Fatal("no error reported")
	}
	for _, want := range []string{"cpuinfo", "block devices", "ipmi: device busy", "PCI devices"} {
		if !strings.Contains(*rep.Error, want) {
			t.Errorf("error %q does not mention %q", *rep.Error, want)
		}
	}
	if rep.Inventory.Memory == nil || rep.Inventory.Memory.Total != 1024*1024 {
		t.Errorf("memory = %+v", rep.Inventory.Memory)
	}
	if rep.Inventory.Boot.PXEInterface != "01-52-54-00-12-34-56" || rep.BootInterface != "01-52-54-00-12-34-56" {
		t.Errorf("boot = %+v", rep.Inventory.Boot)
	}
	// what ferro's inspector decodes
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := inventory.DecodeBytes(b, inventory.Limits{}); err != nil {
		t.Errorf("inventory.DecodeBytes: %v\n%s", err, b)
	}
}

func TestCollect_FixtureReportDecodes(t *testing.T) {
	f := &Failures{}
	p, _ := ParseCmdline("BOOTIF=01-52-54-00-12-34-56")
	lldp := map[string][]inventory.TLV{"eth0": {{Type: 1, Value: "04525400123456"}}}
	host := Host{Root: vmRoot,
		BMC: func(context.Context) (*BMC, error) {
			return &BMC{Address: "192.0.2.10", V6Address: "::/0", MAC: "52:54:00:00:00:01"}, nil
		},
		LLDP: func(ctx context.Context, names []string, d time.Duration) (map[string][]inventory.TLV, error) {
			if strings.Join(names, ",") != "eth0,eth1" || d != DefaultLLDPTimeout {
				t.Errorf("lldp on %v for %v", names, d)
			}
			return lldp, nil
		},
	}
	rep := Collect(context.Background(), slog.New(slog.DiscardHandler), host, p, f)
	if e := f.Error(); e != nil {
		t.Fatalf("errors: %s", *e)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := inventory.DecodeBytes(b, inventory.Limits{})
	if err != nil {
		t.Fatalf("inventory.DecodeBytes: %v", err)
	}
	if got.Inventory.BMCAddress != "192.0.2.10" || got.RootDisk.Name != "/dev/sda" || len(got.PCIDevices) != 4 ||
		got.LLDPRaw["eth0"][0].Value != "04525400123456" || len(got.Inventory.Disks) != 3 || got.Inventory.CPU.Count != 2 {
		t.Errorf("decoded report: %s", b)
	}
	if c := got.Configuration.Collectors; strings.Join(c, ",") != "default,pci-devices,lldp" {
		t.Errorf("collectors = %v", c)
	}
}

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeSMBIOS writes an SMBIOS 3.0 entry point and tables (type 0 BIOS,
// type 1 system, one type 17 per DIMM size in MB, type 127) laid out by
// the DMTF spec (DSP0134), as the kernel exposes them in
// /sys/firmware/dmi/tables; u-root's parser reads them back.
func writeSMBIOS(t *testing.T, root string, dimmMB []uint16) {
	t.Helper()
	var tables []byte
	table := func(typ byte, handle uint16, formatted []byte, strs ...string) {
		hdr := []byte{typ, byte(4 + len(formatted)), byte(handle), byte(handle >> 8)}
		tables = append(tables, hdr...)
		tables = append(tables, formatted...)
		for _, s := range strs {
			tables = append(tables, s...)
			tables = append(tables, 0)
		}
		if len(strs) == 0 {
			tables = append(tables, 0)
		}
		tables = append(tables, 0)
	}
	// type 0: vendor(1) version(2) segment(2 bytes) date(3) rom size, characteristics(8), ext(2), versions(4)
	bios := []byte{1, 2, 0x00, 0xe8, 3, 0}
	bios = append(bios, make([]byte, 8+2+4)...)
	table(0, 0, bios, "SeaBIOS", "1.16.2", "04/01/2014")
	// type 1: manufacturer(1) product(2) version(3) serial(4) uuid(16) wake-up, sku(5) family(6)
	sys := []byte{1, 2, 3, 4}
	sys = append(sys, make([]byte, 16)...)
	sys = append(sys, 6, 5, 6)
	table(1, 0x100, sys, "FerroLab", "VM-1", "pc-i440fx", "SER123", "SKU9", "Virtual")
	for i, mb := range dimmMB {
		// type 17 up to its 2.3 fields (0x1b bytes): size at 0x0c
		md := make([]byte, 0x1b-4)
		binary.LittleEndian.PutUint16(md[0x0c-4:], mb)
		table(17, uint16(0x1100+i), md)
	}
	table(127, 0x7f00, nil)
	entry := []byte("_SM3_")
	entry = append(entry, 0, 0x18, 3, 0, 0, 1, 0)
	entry = binary.LittleEndian.AppendUint32(entry, uint32(len(tables)))
	entry = binary.LittleEndian.AppendUint64(entry, 0)
	var sum byte
	for _, c := range entry {
		sum += c
	}
	entry[5] = -sum
	writeFile(t, root, "sys/firmware/dmi/tables/smbios_entry_point", string(entry))
	writeFile(t, root, "sys/firmware/dmi/tables/DMI", string(tables))
}

// With ipa-collect-lldp=1 the TLVs also go where IPA's
// list_network_interfaces puts them and ironic-inspector's lldp_basic and
// Ironic read them: inventory.interfaces[].lldp, a list of [type, hex
// value] pairs (IPA's collect_lldp_data hexlifies each value). lldp_raw is
// kept when the lldp collector runs; one capture serves both.
func TestCollect_CollectLLDPPutsTLVsOnTheInterfaces(t *testing.T) {
	tlvs := []inventory.TLV{{Type: 1, Value: "04525400123456"}, {Type: 2, Value: "0565746830"}, {Type: 0, Value: ""}}
	for _, tc := range []struct {
		cmdline string
		raw     bool
	}{
		{"ipa-collect-lldp=1 ipa-inspection-collectors=default", false},
		{"ipa-collect-lldp=1", true}, // the default collectors include lldp
	} {
		t.Run(tc.cmdline, func(t *testing.T) {
			p, err := ParseCmdline("BOOTIF=01-52-54-00-12-34-56 " + tc.cmdline)
			if err != nil || !p.CollectLLDP {
				t.Fatalf("ParseCmdline: %+v %v", p, err)
			}
			captures := 0
			host := Host{Root: vmRoot,
				LLDP: func(context.Context, []string, time.Duration) (map[string][]inventory.TLV, error) {
					captures++
					return map[string][]inventory.TLV{"eth0": tlvs}, nil
				},
			}
			f := &Failures{}
			rep := Collect(context.Background(), slog.New(slog.DiscardHandler), host, p, f)
			if e := f.Error(); e != nil {
				t.Fatalf("errors: %s", *e)
			}
			if captures != 1 {
				t.Errorf("%d LLDP captures, want 1", captures)
			}
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var wire struct {
				Inventory struct {
					Interfaces []struct {
						Name string `json:"name"`
						LLDP []any  `json:"lldp"`
					} `json:"interfaces"`
				} `json:"inventory"`
				LLDPRaw map[string]any `json:"lldp_raw"`
			}
			if err := json.Unmarshal(b, &wire); err != nil {
				t.Fatal(err)
			}
			for _, ifc := range wire.Inventory.Interfaces {
				if ifc.Name != "eth0" {
					if ifc.LLDP != nil {
						t.Errorf("%s: lldp %v from no frame", ifc.Name, ifc.LLDP)
					}
					continue
				}
				want := []any{[]any{1.0, "04525400123456"}, []any{2.0, "0565746830"}, []any{0.0, ""}}
				if diff := cmp.Diff(want, ifc.LLDP); diff != "" {
					t.Errorf("eth0 lldp, IPA's [type, hex] pairs (-want +got):\n%s", diff)
				}
			}
			if (wire.LLDPRaw != nil) != tc.raw {
				t.Errorf("lldp_raw = %v, want it %v", wire.LLDPRaw, tc.raw)
			}
		})
	}
}
