package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

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
	return d.mapWith(func(p *lldp.Processed) any { return lldpProcessedValue(p) })
}

// mapWith is Map with lldp_processed made by lldpValue.
func (d *Data) mapWith(lldpValue func(*lldp.Processed) any) map[string]any {
	m := maps.Clone(d.Raw)
	if m == nil {
		m = map[string]any{}
	}
	if d.AllInterfaces != nil {
		m["ipmi_address"] = nilIfEmpty(d.IPMIAddress)
		m["ipmi_v6address"] = nilIfEmpty(d.IPMIv6Address)
		// interfaces is a subset of all_interfaces: their entries are
		// built once and shared.
		entries := make(map[*Interface]map[string]any, len(d.AllInterfaces))
		m["all_interfaces"] = interfacesMap(d.AllInterfaces, entries, lldpValue)
		m["interfaces"] = interfacesMap(d.Interfaces, entries, lldpValue)
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

func interfacesMap(ifaces []*Interface, entries map[*Interface]map[string]any, lldpValue func(*lldp.Processed) any) map[string]any {
	out := make(map[string]any, len(ifaces))
	for _, iface := range ifaces {
		if e, ok := entries[iface]; ok {
			out[iface.Name] = e
			continue
		}
		e := map[string]any{
			"ip":        nilIfEmpty(iface.IP),
			"mac":       iface.MAC,
			"client_id": nilIfEmpty(iface.ClientID),
			"pxe":       iface.PXE,
		}
		if iface.LLDPProcessed != nil {
			e["lldp_processed"] = lldpValue(iface.LLDPProcessed)
		}
		entries[iface] = e
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

// lldpProcessedValue is toJSONValue(p) built from p's fields, without
// encoding and decoding it: a 40-NIC report has 40 of them. Like
// lldp.Processed.MarshalJSON it writes the fields that are not nil, under
// their JSON names; a field of a type plainValue does not know goes
// through toJSONValue.
func lldpProcessedValue(p *lldp.Processed) map[string]any {
	v := reflect.ValueOf(p).Elem()
	fields := processedFields()
	out := make(map[string]any, len(fields))
	for i, name := range fields {
		f := v.Field(i)
		if name == "" || f.IsNil() {
			continue
		}
		fv, ok := plainValue(f)
		if !ok {
			fv = toJSONValue(f.Interface())
		}
		out[name] = fv
	}
	return out
}

// processedFields are the JSON names of lldp.Processed's fields by index.
var processedFields = sync.OnceValue(func() []string {
	t := reflect.TypeFor[lldp.Processed]()
	names := make([]string, t.NumField())
	for i := range t.NumField() {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
})

// plainValue converts v to what toJSONValue would return, for the types
// whose JSON form is plain: strings (valid UTF-8), integers, booleans,
// pointers to and slices of those, and structs of those with plain json
// tags. ok is false for anything else.
func plainValue(v reflect.Value) (_ any, ok bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil, true
		}
		return plainValue(v.Elem())
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) {
			return nil, false // encoding/json would replace the bad bytes
		}
		return s, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return json.Number(strconv.FormatInt(v.Int(), 10)), true
	case reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return json.Number(strconv.FormatUint(v.Uint(), 10)), true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil, false // base64
		}
		if v.IsNil() {
			return nil, true
		}
		out := make([]any, v.Len())
		for i := range out {
			e, ok := plainValue(v.Index(i))
			if !ok {
				return nil, false
			}
			out[i] = e
		}
		return out, true
	case reflect.Struct:
		t := v.Type()
		if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
			return nil, false
		}
		out := make(map[string]any, t.NumField())
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() || sf.Anonymous {
				return nil, false
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			if strings.Contains(tag, ",") {
				return nil, false // omitempty, string: encoding/json's rules
			}
			name := tag
			if name == "" {
				name = sf.Name
			}
			if _, dup := out[name]; dup {
				return nil, false
			}
			e, ok := plainValue(v.Field(i))
			if !ok {
				return nil, false
			}
			out[name] = e
		}
		return out, true
	}
	return nil, false
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

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
