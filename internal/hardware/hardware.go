// Package hardware reads a stored inventory (the agent's report as
// GET /v1/nodes/{node}/inventory returns it) as the machine it describes —
// CPUs, memory and its modules, disks, NICs with the switch port LLDP
// names, the BMC, the system and its firmware — and compares two of them
// (Compare). It is a leaf: the web view renders a Machine, the conductor
// records the Changes of a re-inspection.
//
// Only the agent's wire names are read (IPA's inventory, plugin_data's
// all_interfaces[].lldp_processed and dmi), so inventories stored by any
// ferro version, by the stock agent or by the out-of-band Redfish
// inspection read alike.
package hardware

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/lldp"
)

// Machine is what one inventory says about a machine.
type Machine struct {
	System   System
	Firmware Firmware
	CPU      CPU
	Memory   Memory
	Disks    []Disk
	NICs     []NIC
	BMC      BMC
	// BootMode is "bios" or "uefi" when the agent said.
	BootMode string
}

// System is the machine's SMBIOS identity.
type System struct {
	Manufacturer, Product, Serial, SKU string
}

// Firmware is the system firmware (BIOS or UEFI).
type Firmware struct {
	Vendor, Version, BuildDate string
}

// CPU is the processors as the agent counts them.
type CPU struct {
	Model        string
	Count        int // logical CPUs
	Sockets      int
	Architecture string
	FrequencyMHz string
}

// Memory is the installed memory.
type Memory struct {
	PhysicalMB int
	TotalBytes int64
	// Modules are the DIMMs from the agent's dmidecode data (IPA's dmi
	// collector), empty when it was not collected.
	Modules []MemoryModule
}

// MemoryModule is one populated memory slot.
type MemoryModule struct {
	Locator string // the slot, e.g. "DIMM_A1" (with the bank when given)
	Size    string // as dmidecode prints it, e.g. "16384 MB"
	Speed   string
	Type    string
	Serial  string
}

// Disk is one block device.
type Disk struct {
	Name       string
	Model      string
	Vendor     string
	SizeBytes  int64
	Rotational bool
	Serial     string
	WWN        string
	// Root is the disk root-device selection picked (plugin_data's root_disk).
	Root bool
}

// NIC is one network interface with what LLDP said of its switch port.
type NIC struct {
	Name      string
	MAC       string
	IPv4      string
	SpeedMbps int
	Driver    string
	PCI       string
	Carrier   bool
	PXE       bool // the interface the machine booted from
	Switch    SwitchPort
}

// SwitchPort is the far end of a NIC's cable, from LLDP.
type SwitchPort struct {
	ChassisID, SystemName, PortID, PortDescription string
	// UntaggedVLAN is 0 when not advertised.
	UntaggedVLAN int
	VLANs        []int
}

// Known reports whether LLDP said anything about the port.
func (s SwitchPort) Known() bool { return s.ChassisID != "" || s.PortID != "" || s.SystemName != "" }

// Switch names the switch: its system name, else its chassis ID.
func (s SwitchPort) Switch() string { return cmp.Or(s.SystemName, s.ChassisID) }

// BMC is the baseboard management controller as the agent read it.
type BMC struct {
	IPv4, IPv6, MAC string
}

// wire is the subset of IPA's report read here, by its wire names.
type wire struct {
	Interfaces []struct {
		Name        string      `json:"name"`
		MAC         string      `json:"mac_address"`
		IPv4        string      `json:"ipv4_address"`
		HasCarrier  bool        `json:"has_carrier"`
		LLDP        []lldp.TLV  `json:"lldp"`
		SpeedMbps   json.Number `json:"speed_mbps"`
		PCIAddress  string      `json:"pci_address"`
		Driver      string      `json:"driver"`
		BIOSDevName string      `json:"biosdevname"`
	} `json:"interfaces"`
	CPU *struct {
		ModelName    string      `json:"model_name"`
		Frequency    string      `json:"frequency"`
		Count        json.Number `json:"count"`
		Architecture string      `json:"architecture"`
		SocketCount  json.Number `json:"socket_count"`
	} `json:"cpu"`
	Disks []struct {
		Name       string      `json:"name"`
		Model      string      `json:"model"`
		Vendor     string      `json:"vendor"`
		Size       json.Number `json:"size"`
		Rotational bool        `json:"rotational"`
		WWN        string      `json:"wwn"`
		Serial     string      `json:"serial"`
	} `json:"disks"`
	Memory *struct {
		Total      json.Number `json:"total"`
		PhysicalMB json.Number `json:"physical_mb"`
	} `json:"memory"`
	BMCAddress   string `json:"bmc_address"`
	BMCV6Address string `json:"bmc_v6address"`
	BMCMAC       string `json:"bmc_mac"`
	SystemVendor *struct {
		ProductName  string `json:"product_name"`
		SerialNumber string `json:"serial_number"`
		Manufacturer string `json:"manufacturer"`
		SKU          any    `json:"sku"`
		Firmware     *struct {
			Vendor    string `json:"vendor"`
			Version   string `json:"version"`
			BuildDate string `json:"build_date"`
		} `json:"firmware"`
	} `json:"system_vendor"`
	Boot *struct {
		CurrentBootMode string `json:"current_boot_mode"`
		PXEInterface    string `json:"pxe_interface"`
	} `json:"boot"`
}

// pluginWire is the subset of plugin_data read here.
type pluginWire struct {
	RootDisk *struct {
		Name   string `json:"name"`
		Serial string `json:"serial"`
		WWN    string `json:"wwn"`
	} `json:"root_disk"`
	AllInterfaces map[string]struct {
		LLDPProcessed *lldpWire `json:"lldp_processed"`
	} `json:"all_interfaces"`
	LLDPRaw map[string][]lldp.TLV `json:"lldp_raw"`
	DMI     *struct {
		BIOS   map[string]any `json:"bios"`
		Memory struct {
			Devices []map[string]any `json:"devices"`
		} `json:"memory"`
	} `json:"dmi"`
}

type lldpWire struct {
	ChassisID       string `json:"switch_chassis_id"`
	PortID          string `json:"switch_port_id"`
	PortDescription string `json:"switch_port_description"`
	SystemName      string `json:"switch_system_name"`
	UntaggedVLAN    int    `json:"switch_port_untagged_vlan_id"`
	VLANs           []struct {
		ID int `json:"id"`
	} `json:"switch_port_vlans"`
}

// decode re-reads a free-form JSON object into v; what does not fit (a
// field of an unexpected type) is left out rather than failing the page or
// the comparison, so each part is decoded on its own.
func decode(m map[string]any, v any) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	_ = json.Unmarshal(b, v)
}

// Read returns the machine an inventory describes. A nil inventory is an
// empty machine.
func Read(inv *baremetal.Inventory) Machine {
	var m Machine
	if inv == nil {
		return m
	}
	var w wire
	decodeEach(inv.Inventory, &w)
	var p pluginWire
	decodeEach(inv.PluginData, &p)

	if v := w.SystemVendor; v != nil {
		m.System = System{Manufacturer: v.Manufacturer, Product: v.ProductName, Serial: v.SerialNumber}
		if s, ok := v.SKU.(string); ok {
			m.System.SKU = s
		}
		if f := v.Firmware; f != nil {
			m.Firmware = Firmware{Vendor: f.Vendor, Version: f.Version, BuildDate: f.BuildDate}
		}
	}
	if m.Firmware == (Firmware{}) && p.DMI != nil {
		m.Firmware = Firmware{Vendor: str(p.DMI.BIOS["Vendor"]), Version: str(p.DMI.BIOS["Version"]), BuildDate: str(p.DMI.BIOS["Release Date"])}
	}
	if c := w.CPU; c != nil {
		m.CPU = CPU{Model: c.ModelName, Count: atoi(c.Count), Sockets: atoi(c.SocketCount), Architecture: c.Architecture, FrequencyMHz: c.Frequency}
	}
	if mem := w.Memory; mem != nil {
		m.Memory.PhysicalMB = atoi(mem.PhysicalMB)
		m.Memory.TotalBytes, _ = mem.Total.Int64()
	}
	if p.DMI != nil {
		for _, d := range p.DMI.Memory.Devices {
			size := str(d["Size"])
			if size == "" || strings.HasPrefix(size, "No Module") || size == "0" {
				continue
			}
			loc := str(d["Locator"])
			if bank := str(d["Bank Locator"]); bank != "" && loc != "" {
				loc = bank + "/" + loc
			}
			if loc == "" {
				loc = str(d["Handle"])
			}
			m.Memory.Modules = append(m.Memory.Modules, MemoryModule{Locator: loc, Size: size,
				Speed: str(d["Speed"]), Type: str(d["Type"]), Serial: str(d["Serial Number"])})
		}
	}
	for _, d := range w.Disks {
		size, _ := d.Size.Int64()
		disk := Disk{Name: d.Name, Model: d.Model, Vendor: d.Vendor, SizeBytes: size, Rotational: d.Rotational, Serial: d.Serial, WWN: d.WWN}
		if r := p.RootDisk; r != nil {
			disk.Root = r.Name == d.Name && (r.Serial == "" || r.Serial == d.Serial)
		}
		m.Disks = append(m.Disks, disk)
	}
	pxe := ""
	if b := w.Boot; b != nil {
		m.BootMode = b.CurrentBootMode
		pxe = strings.ToLower(b.PXEInterface)
	}
	for _, i := range w.Interfaces {
		n := NIC{Name: i.Name, MAC: strings.ToLower(i.MAC), IPv4: i.IPv4, SpeedMbps: atoi(i.SpeedMbps),
			Driver: i.Driver, PCI: i.PCIAddress, Carrier: i.HasCarrier}
		n.PXE = pxe != "" && (pxe == n.MAC || pxe == strings.ToLower(i.Name))
		n.Switch = switchPort(p, i.Name, i.LLDP)
		m.NICs = append(m.NICs, n)
	}
	m.BMC = BMC{IPv4: w.BMCAddress, IPv6: w.BMCV6Address, MAC: strings.ToLower(w.BMCMAC)}
	if m.BMC.IPv4 == "0.0.0.0" {
		m.BMC.IPv4 = ""
	}
	if m.BMC.IPv6 == "::/0" {
		m.BMC.IPv6 = ""
	}
	return m
}

// decodeEach decodes the object, and when a field has an unexpected shape
// decodes the others one at a time, so that field loses only itself.
func decodeEach(m map[string]any, v any) {
	if m == nil {
		return
	}
	b, err := json.Marshal(m)
	if err != nil || json.Unmarshal(b, v) == nil {
		return
	}
	for k, val := range m {
		decode(map[string]any{k: val}, v)
	}
}

// switchPort is what the inspector's lldp_basic hook stored for the
// interface, else what its raw TLVs (in the inventory or lldp_raw) say.
func switchPort(p pluginWire, name string, tlvs []lldp.TLV) SwitchPort {
	if ai, ok := p.AllInterfaces[name]; ok && ai.LLDPProcessed != nil {
		l := ai.LLDPProcessed
		s := SwitchPort{ChassisID: l.ChassisID, SystemName: l.SystemName, PortID: l.PortID,
			PortDescription: l.PortDescription, UntaggedVLAN: l.UntaggedVLAN}
		for _, v := range l.VLANs {
			s.VLANs = append(s.VLANs, v.ID)
		}
		return s
	}
	if len(tlvs) == 0 {
		tlvs = p.LLDPRaw[name]
	}
	if len(tlvs) == 0 {
		return SwitchPort{}
	}
	parsed, _ := lldp.Parse(tlvs)
	var s SwitchPort
	setStr := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	setStr(&s.ChassisID, parsed.ChassisID)
	setStr(&s.SystemName, parsed.SystemName)
	setStr(&s.PortID, parsed.PortID)
	setStr(&s.PortDescription, parsed.PortDescription)
	if parsed.PortUntaggedVLANID != nil {
		s.UntaggedVLAN = *parsed.PortUntaggedVLANID
	}
	for _, v := range parsed.PortVLANs {
		s.VLANs = append(s.VLANs, v.ID)
	}
	return s
}

// RootDisk returns the disk root-device selection picked, or nil.
func (m Machine) RootDisk() *Disk {
	for i := range m.Disks {
		if m.Disks[i].Root {
			return &m.Disks[i]
		}
	}
	return nil
}

func str(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case nil:
		return ""
	default:
		return fmt.Sprint(s)
	}
}

func atoi(n json.Number) int {
	i, err := strconv.Atoi(n.String())
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil {
			return 0
		}
		return int(f)
	}
	return i
}

// Size formats a byte count for people, in binary units: "960 GB" is
// written "894.3 GiB".
func Size(b int64) string {
	const unit = 1024
	if b < unit {
		return strconv.FormatInt(b, 10) + " B"
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit && exp < 5; n /= unit {
		div *= unit
		exp++
	}
	v := float64(b) / float64(div)
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + string("KMGTPE"[exp]) + "iB"
}

// sortedVLANs is a copy of vs in order, for comparison and display.
func sortedVLANs(vs []int) []int {
	out := slices.Clone(vs)
	slices.Sort(out)
	return slices.Compact(out)
}
