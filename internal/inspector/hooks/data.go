package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"strconv"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/lldp"
)

// Data is the introspection data being processed: the report as the
// ramdisk sent it and the keys the hooks add, under upstream's names.
type Data struct {
	// Report is the typed payload. Hooks read it; root_disk_selection
	// drops skipped disks from Report.Inventory.Disks, as upstream does.
	Report *inventory.Report
	// Raw is the payload as generic JSON (see inventory.DecodeBytes), kept
	// in step with Report, unknown fields included.
	Raw map[string]any

	// Set by validate_interfaces.
	IPMIAddress   string       // ipmi_address: the BMC's IPv4 address, "" if unknown
	IPMIv6Address string       // ipmi_v6address
	AllInterfaces []*Interface // all_interfaces: every interface with a valid MAC
	Interfaces    []*Interface // interfaces: those add_ports selected
	MACs          []string     // macs: the MACs of Interfaces

	// RootDisk is root_disk: the ramdisk's choice, replaced by
	// root_disk_selection when the node has root device hints.
	RootDisk *inventory.Disk
	// LocalGB is local_gb, set by root_disk_selection.
	LocalGB *int64

	// Set by scheduler when the inventory has them.
	CPUs     int    // cpus
	CPUArch  string // cpu_arch
	MemoryMB int    // memory_mb

	// Extra is extra: the extra_hardware data as nested objects.
	Extra map[string]any

	rootDiskRaw any  // the raw form of RootDisk once hints chose it
	dropData    bool // extra_hardware consumed "data"
}

// Interface is an entry of all_interfaces.
type Interface struct {
	Name     string
	MAC      string // lower case
	IP       string // IPv4, else IPv6 without zone; "" if none
	ClientID string
	PXE      bool // the MAC is the boot interface's
	// LLDPProcessed is set by lldp_basic when the interface's TLVs said
	// anything.
	LLDPProcessed *lldp.Processed
}

// NewData wraps a decoded report for processing. raw may be nil, in which
// case it is derived from rep.
func NewData(rep *inventory.Report, raw map[string]any) (*Data, error) {
	if rep == nil {
		return nil, errors.New("no report")
	}
	if raw == nil {
		b, err := json.Marshal(rep)
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
	}
	return &Data{Report: rep, Raw: raw, RootDisk: rep.RootDisk}, nil
}

// inventory returns the report's inventory, as upstream's get_inventory:
// it must be there and list interfaces.
func (d *Data) inventory() (*inventory.Inventory, error) {
	inv := d.Report.Inventory
	if inv == nil {
		return nil, errors.New("Hardware inventory is empty or missing")
	}
	if len(inv.Interfaces) == 0 {
		return nil, errors.New("No network interfaces provided in the inventory")
	}
	return inv, nil
}

// Interface returns the entry of all_interfaces for a name.
func (d *Data) Interface(name string) *Interface {
	for _, iface := range d.AllInterfaces {
		if iface.Name == name {
			return iface
		}
	}
	return nil
}

// rawDisks returns the raw form of inventory.disks, index for index with
// Report.Inventory.Disks.
func (d *Data) rawDisks() []any {
	inv, _ := d.Raw["inventory"].(map[string]any)
	disks, _ := inv["disks"].([]any)
	return disks
}

// setRawDisks replaces the raw inventory.disks without touching the
// caller's original map.
func (d *Data) setRawDisks(disks []any) {
	inv, _ := d.Raw["inventory"].(map[string]any)
	inv = maps.Clone(inv)
	if inv == nil {
		inv = map[string]any{}
	}
	inv["disks"] = disks
	d.Raw = maps.Clone(d.Raw)
	d.Raw["inventory"] = inv
}

// Map returns the processed introspection data as upstream stores it and
// as rules see it: the raw payload plus the keys the hooks added. The
// result shares values with Raw; treat it as read-only.
func (d *Data) Map() map[string]any {
	m := maps.Clone(d.Raw)
	if m == nil {
		m = map[string]any{}
	}
	if d.AllInterfaces != nil {
		m["ipmi_address"] = nilIfEmpty(d.IPMIAddress)
		m["ipmi_v6address"] = nilIfEmpty(d.IPMIv6Address)
		m["all_interfaces"] = interfacesMap(d.AllInterfaces)
		m["interfaces"] = interfacesMap(d.Interfaces)
		macs := make([]any, len(d.MACs))
		for i, mac := range d.MACs {
			macs[i] = mac
		}
		m["macs"] = macs
	}
	if d.rootDiskRaw != nil {
		m["root_disk"] = d.rootDiskRaw
	}
	if d.LocalGB != nil {
		m["local_gb"] = json.Number(strconv.FormatInt(*d.LocalGB, 10))
	}
	if d.CPUs != 0 {
		m["cpus"] = json.Number(strconv.Itoa(d.CPUs))
	}
	if d.CPUArch != "" {
		m["cpu_arch"] = d.CPUArch
	}
	if d.MemoryMB != 0 {
		m["memory_mb"] = json.Number(strconv.Itoa(d.MemoryMB))
	}
	if d.dropData {
		delete(m, "data")
	}
	if d.Extra != nil {
		m["extra"] = d.Extra
	}
	return m
}

func interfacesMap(ifaces []*Interface) map[string]any {
	out := make(map[string]any, len(ifaces))
	for _, iface := range ifaces {
		e := map[string]any{
			"ip":        nilIfEmpty(iface.IP),
			"mac":       iface.MAC,
			"client_id": nilIfEmpty(iface.ClientID),
			"pxe":       iface.PXE,
		}
		if iface.LLDPProcessed != nil {
			e["lldp_processed"] = toJSONValue(iface.LLDPProcessed)
		}
		out[iface.Name] = e
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// toJSONValue converts v to generic JSON values, numbers as json.Number.
func toJSONValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return nil
	}
	return out
}
