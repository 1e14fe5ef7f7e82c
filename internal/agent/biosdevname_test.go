package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testdata/smbios/qemu-onboard-slot holds the SMBIOS tables of a QEMU 7.2
// (SeaBIOS) machine started with
//
//	-smbios type=1,manufacturer=FerroLab,product=lane-ipmi,serial=LAB-1,sku=SKU-LAB-1
//	-device virtio-net-pci,id=nic0,addr=0x4
//	-smbios type=41,designation=Onboard-LAN,kind=ethernet,instance=1,pcidev=nic0
//	-smbios file=type9.bin
//
// read from /sys/firmware/dmi/tables in the guest. QEMU 7.2 has no
// -smbios type=9, so the slot record (ID 3, segment 0, bus 0, device
// 5) was written by hand after DSP0134 7.10 and passed in with file=.

// pciTree builds root/sys with the captured tables and PCI functions
// (address → class), and network interfaces (name → PCI address).
func pciTree(t *testing.T, funcs map[string]string, bridges map[string]string, nics map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range []string{"smbios_entry_point", "DMI"} {
		b, err := os.ReadFile(filepath.Join("testdata/smbios/qemu-onboard-slot", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, root, "sys/firmware/dmi/tables/"+f, string(b))
	}
	parentOf := func(addr string) string {
		for br, sec := range bridges {
			if addr[5:7] == sec {
				return "pci0000:00/" + br
			}
		}
		return "pci0000:00"
	}
	for addr, class := range funcs {
		dev := filepath.Join("sys/devices", parentOf(addr), addr)
		writeFile(t, root, filepath.Join(dev, "class"), class+"\n")
		if sec, ok := bridges[addr]; ok {
			n, _ := strconv.ParseUint(sec, 16, 8)
			// the kernel prints it in decimal
			writeFile(t, root, filepath.Join(dev, "secondary_bus_number"), strconv.FormatUint(n, 10)+"\n")
		}
		link(t, root, filepath.Join("sys/bus/pci/devices", addr), filepath.Join(root, dev))
	}
	for name, addr := range nics {
		writeFile(t, root, filepath.Join("sys/class/net", name, "type"), "1\n")
		dev := filepath.Join(root, "sys/devices", parentOf(addr), addr)
		if strings.HasPrefix(name, "virtio") {
			// virtio_net's device is the virtio device on the PCI function
			dev = filepath.Join(dev, "virtio0")
			writeFile(t, dev, "modalias", "virtio:d00000001v00001AF4\n")
		}
		link(t, root, filepath.Join("sys/class/net", name, "device"), dev)
	}
	return root
}

func link(t *testing.T, root, rel, target string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func TestBIOSDevNames_OnboardAndSlotFromQEMUTables(t *testing.T) {
	root := pciTree(t,
		map[string]string{
			"0000:00:03.0": "0x020000", // a NIC SMBIOS says nothing about
			"0000:00:04.0": "0x020000", // type 41 instance 1
			"0000:00:05.0": "0x020000", // type 9 slot 3
			"0000:00:01.0": "0x060100", // ISA bridge
		}, nil,
		map[string]string{"eth0": "0000:00:03.0", "virtio4": "0000:00:04.0", "ens5": "0000:00:05.0"})
	smb, err := SMBIOS(root)
	if err != nil {
		t.Fatal(err)
	}
	got := BIOSDevNames(root, smb)
	want := map[string]string{"virtio4": "em1", "ens5": "p3p1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	sv, err := SystemVendor(smb)
	if err != nil {
		t.Fatal(err)
	}
	if sv.SKU != "SKU-LAB-1" || sv.SerialNumber != "LAB-1" {
		t.Errorf("system_vendor = %+v, want sku SKU-LAB-1", sv)
	}
}

// The slot's device is a bridge: every port behind it is in slot 3,
// numbered in PCI address order, and an SR-IOV virtual function takes its
// physical function's name with its index.
func TestBIOSDevNames_PortsBehindASlotBridgeAndVFs(t *testing.T) {
	root := pciTree(t,
		map[string]string{
			"0000:00:04.0": "0x020000",
			"0000:00:05.0": "0x060400",
			"0000:01:00.0": "0x020000",
			"0000:01:00.1": "0x020000",
			"0000:01:10.0": "0x020000",
		},
		map[string]string{"0000:00:05.0": "01"},
		map[string]string{"eno1": "0000:00:04.0", "p0": "0000:01:00.0", "p1": "0000:01:00.1", "vf0": "0000:01:10.0"})
	link(t, root, "sys/devices/pci0000:00/0000:00:05.0/0000:01:00.0/virtfn0", filepath.Join(root, "sys/devices/pci0000:00/0000:00:05.0/0000:01:10.0"))
	smb, err := SMBIOS(root)
	if err != nil {
		t.Fatal(err)
	}
	got := BIOSDevNames(root, smb)
	want := map[string]string{"eno1": "em1", "p0": "p3p1", "p1": "p3p2", "vf0": "p3p1_0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

// Without SMBIOS (or with tables that describe no NIC) nothing is named,
// as biosdevname prints nothing.
func TestBIOSDevNames_NothingWithoutSMBIOS(t *testing.T) {
	if got := BIOSDevNames(vmRoot, nil); len(got) != 0 {
		t.Errorf("names = %v", got)
	}
	root := t.TempDir()
	writeSMBIOS(t, root, []uint16{1024})
	smb, err := SMBIOS(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := BIOSDevNames(vmRoot, smb); len(got) != 0 {
		t.Errorf("names from tables without types 9/41 = %v", got)
	}
}
