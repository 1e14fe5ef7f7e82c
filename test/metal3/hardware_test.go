package metal3_test

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/inventory"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

// hardwareDetails is the part of a BareMetalHost's status.hardwareDetails
// BMO fills from GET /v1/nodes/{n}/inventory (hardwaredetails.
// GetHardwareDetails), in the same units.
type hardwareDetails struct {
	cpu          cpu
	ramMebibytes int
	nics         []nic
	storage      []storage
	hostname     string
	vendor       [3]string // manufacturer, product name, serial number
	bios         [3]string // vendor, version, build date
	// pluginDataErr is why plugin_data could not be read as Ironic's
	// standard plugin data (BMO logs it and goes on without it).
	pluginDataErr error
}

type cpu struct {
	arch, model string
	clockMHz    float64
	count       int
	flags       []string
}

type nic struct {
	name, model, mac, ip string
	speedGbps            int
	pxe                  bool
	lldp                 *lldp
	pciAddress           string
}

type lldp struct{ switchID, portID, switchSystemName string }

type storage struct {
	name           string
	alternateNames []string
	rotational     bool
	kind           string // HDD, SSD, NVME
	sizeBytes      int64
	model, serial  string
}

// buildHardwareDetails reads the inventory answer the way BMO does: the
// inventory for CPU, RAM, disks, NICs and vendor; plugin_data's
// all_interfaces[name].pxe_enabled and parsed_lldp[name] for the NICs'
// PXE flag and switch.
func buildHardwareDetails(data *nodes.InventoryData) hardwareDetails {
	std, err := data.PluginData.AsStandardData()
	inv := data.Inventory
	d := hardwareDetails{
		ramMebibytes:  inv.Memory.PhysicalMb,
		hostname:      inv.Hostname,
		vendor:        [3]string{inv.SystemVendor.Manufacturer, inv.SystemVendor.ProductName, inv.SystemVendor.SerialNumber},
		bios:          [3]string{inv.SystemVendor.Firmware.Vendor, inv.SystemVendor.Firmware.Version, inv.SystemVendor.Firmware.BuildDate},
		pluginDataErr: err,
	}
	freq, _ := strconv.ParseFloat(strings.TrimSpace(inv.CPU.Frequency), 64)
	flags := slices.Clone(inv.CPU.Flags)
	slices.Sort(flags)
	d.cpu = cpu{arch: inv.CPU.Architecture, model: inv.CPU.ModelName, clockMHz: math.Round(freq), count: inv.CPU.Count, flags: flags}
	for _, iface := range inv.Interfaces {
		base := nic{
			name:       iface.Name,
			model:      strings.TrimLeft(iface.Vendor+" "+iface.Product, " "),
			mac:        iface.MACAddress,
			speedGbps:  iface.SpeedMbps / 1000,
			pxe:        std.AllInterfaces[iface.Name].PXEEnabled,
			lldp:       switchOf(std.ParsedLLDP[iface.Name]),
			pciAddress: iface.PCIAddress,
		}
		// One entry per address family: an IPv4 (or no) address, then the
		// IPv6 one if there is one.
		if iface.IPV4Address != "" || iface.IPV6Address == "" {
			n := base
			n.ip = iface.IPV4Address
			d.nics = append(d.nics, n)
		}
		if iface.IPV6Address != "" {
			n := base
			n.ip = iface.IPV6Address
			d.nics = append(d.nics, n)
		}
	}
	for _, disk := range inv.Disks {
		s := storage{name: disk.Name, rotational: disk.Rotational, sizeBytes: disk.Size, model: disk.Model, serial: disk.Serial}
		if disk.Name != "" {
			s.alternateNames = append(s.alternateNames, disk.Name)
		}
		if disk.ByPath != "" {
			s.name = disk.ByPath
			s.alternateNames = append(s.alternateNames, disk.ByPath)
		}
		switch {
		case disk.Rotational:
			s.kind = "HDD"
		case strings.HasPrefix(disk.Name, "/dev/nvme"):
			s.kind = "NVME"
		default:
			s.kind = "SSD"
		}
		d.storage = append(d.storage, s)
	}
	return d
}

// switchOf is the LLDP BMO shows: the three string fields, nil when none
// is set. (BMO also reads switch_port_vlans and
// switch_port_untagged_vlan_id, but with type assertions that never match
// decoded JSON: []map[string]any and int. VLANs never reach the host.)
func switchOf(parsed inventory.ParsedLLDP) *lldp {
	if parsed == nil {
		return nil
	}
	str := func(k string) string { s, _ := parsed[k].(string); return s }
	l := &lldp{switchID: str("switch_chassis_id"), portID: str("switch_port_id"), switchSystemName: str("switch_system_name")}
	if *l == (lldp{}) {
		return nil
	}
	return l
}

func (n nic) String() string {
	return fmt.Sprintf("%s %s ip=%s pxe=%v lldp=%v", n.name, n.mac, n.ip, n.pxe, n.lldp)
}
