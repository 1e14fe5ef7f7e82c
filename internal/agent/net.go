package agent

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ferrometal/ferro/internal/inventory"
)

// AddrFunc returns an interface's first IPv4 and IPv6 address, "" for none.
type AddrFunc func(name string) (v4, v6 string)

// Interfaces lists the physical network interfaces under
// root/sys/class/net (those with a device link, as IPA does), sorted by
// name. addrs fills in the addresses; nil leaves them empty.
func Interfaces(root string, addrs AddrFunc) ([]inventory.Interface, error) {
	base := filepath.Join(root, "sys/class/net")
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("list network interfaces: %w", err)
	}
	ifs := []inventory.Interface{}
	for _, e := range entries {
		name := e.Name()
		dir := filepath.Join(base, name)
		if !exists(filepath.Join(dir, "device")) {
			continue // lo, bridges, bonds, VLANs
		}
		mac := readString(filepath.Join(dir, "address"))
		if mac == "" {
			continue
		}
		ifc := inventory.Interface{
			Name:       name,
			MACAddress: strings.ToLower(mac),
			// carrier cannot be read while the link is down: no carrier.
			HasCarrier: readString(filepath.Join(dir, "carrier")) == "1",
			Vendor:     readString(filepath.Join(dir, "device/vendor")),
			Product:    readString(filepath.Join(dir, "device/device")),
			Driver:     linkBase(filepath.Join(dir, "device/driver")),
			PCIAddress: linkBase(filepath.Join(dir, "device")),
		}
		if s, ok := readInt(filepath.Join(dir, "speed")); ok && s > 0 {
			ifc.SpeedMbps = int(s)
		}
		if addrs != nil {
			ifc.IPv4Address, ifc.IPv6Address = addrs(name)
		}
		ifs = append(ifs, ifc)
	}
	sort.Slice(ifs, func(i, j int) bool { return ifs[i].Name < ifs[j].Name })
	return ifs, nil
}

// SystemAddrs is the AddrFunc of the running system. IPv6 prefers a global
// address over a link-local one.
func SystemAddrs(name string) (v4, v6 string) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return "", ""
	}
	as, err := ifi.Addrs()
	if err != nil {
		return "", ""
	}
	for _, a := range as {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip4 := ipn.IP.To4(); ip4 != nil {
			if v4 == "" {
				v4 = ip4.String()
			}
			continue
		}
		if v6 == "" || (strings.HasPrefix(v6, "fe80:") && !ipn.IP.IsLinkLocalUnicast()) {
			v6 = ipn.IP.String()
		}
	}
	return v4, v6
}

// PCIDevices lists root/sys/bus/pci/devices in the pci-devices collector's
// shape: IDs and class in hex without "0x".
func PCIDevices(root string) ([]inventory.PCIDevice, error) {
	base := filepath.Join(root, "sys/bus/pci/devices")
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("list PCI devices: %w", err)
	}
	devs := []inventory.PCIDevice{}
	for _, e := range entries {
		dir := filepath.Join(base, e.Name())
		vendor, device := hexID(readString(filepath.Join(dir, "vendor"))), hexID(readString(filepath.Join(dir, "device")))
		if vendor == "" || device == "" {
			continue
		}
		d := inventory.PCIDevice{
			VendorID:  vendor,
			ProductID: device,
			Class:     hexID(readString(filepath.Join(dir, "class"))),
			Revision:  hexID(readString(filepath.Join(dir, "revision"))),
			Bus:       e.Name(),
		}
		if n, ok := readInt(filepath.Join(dir, "numa_node")); ok && n >= 0 {
			v := int(n)
			d.NUMANodeID = &v
		}
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].Bus < devs[j].Bus })
	return devs, nil
}

// Boot says how the machine booted: UEFI when the kernel exposes EFI
// variables, else BIOS; pxe_interface is the raw BOOTIF, as IPA sends it.
func Boot(root, bootIF string) *inventory.Boot {
	mode := "bios"
	if exists(filepath.Join(root, "sys/firmware/efi")) {
		mode = "uefi"
	}
	return &inventory.Boot{CurrentBootMode: mode, PXEInterface: bootIF}
}

// Hostname is the kernel's host name, or "" when unset ("(none)").
func Hostname(root string) string {
	h := readString(filepath.Join(root, "proc/sys/kernel/hostname"))
	if h == "(none)" {
		return ""
	}
	return h
}
