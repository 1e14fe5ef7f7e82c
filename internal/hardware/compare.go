package hardware

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Kinds of Change.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Components a Change is about.
const (
	ComponentSystem       = "system"
	ComponentFirmware     = "firmware"
	ComponentCPU          = "cpu"
	ComponentMemory       = "memory"
	ComponentMemoryModule = "memory_module"
	ComponentDisk         = "disk"
	ComponentNIC          = "nic"
	ComponentBMC          = "bmc"
)

// Change is one difference between two inspections of a machine. Its JSON
// is the shape the API returns and an inspection rule reads.
type Change struct {
	// Component is one of the Component constants.
	Component string `json:"component"`
	// ID identifies the component across inspections: a disk's WWN, else
	// its serial, else its name; a NIC's MAC; a DIMM's slot. Empty for the
	// machine-wide components (system, firmware, cpu, memory, bmc).
	ID string `json:"id,omitempty"`
	// Change is Added, Removed or Changed.
	Change string `json:"change"`
	// Field is what changed (Changed only), e.g. "size", "switch_port".
	Field string `json:"field,omitempty"`
	// Old and New are the values before and after, for people: for Added
	// and Removed a description of the component ("/dev/sdb, 10 GiB").
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
}

// String is the change in one phrase.
func (c Change) String() string {
	what := c.Component
	switch c.Component {
	case ComponentMemoryModule:
		what = "memory module"
	case ComponentNIC:
		what = "NIC"
	case ComponentBMC:
		what = "BMC"
	case ComponentCPU:
		what = "CPU"
	}
	if c.ID != "" {
		what += " " + c.ID
	}
	switch c.Change {
	case Added:
		return fmt.Sprintf("%s added (%s)", what, c.New)
	case Removed:
		return fmt.Sprintf("%s removed (%s)", what, c.Old)
	}
	return fmt.Sprintf("%s %s changed from %s to %s", what, strings.ReplaceAll(c.Field, "_", " "), orNone(c.Old), orNone(c.New))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return strconv.Quote(s)
}

// Summary is the changes in one line, for the node history.
func Summary(changes []Change) string {
	if len(changes) == 0 {
		return "no hardware changes"
	}
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = c.String()
	}
	noun := "changes"
	if len(changes) == 1 {
		noun = "change"
	}
	return fmt.Sprintf("%d hardware %s: %s", len(changes), noun, strings.Join(parts, "; "))
}

// Compare returns what changed from old to cur, in a stable order:
// system, firmware, CPU, memory, memory modules, disks, NICs, BMC. A value
// one side does not report (an out-of-band inspection knows no firmware
// build date) is not a change; a NIC whose LLDP neighbour disappeared is.
func Compare(old, cur Machine) []Change {
	var out []Change
	field := func(component, id, name, a, b string) {
		if a != b && a != "" && b != "" {
			out = append(out, Change{Component: component, ID: id, Change: Changed, Field: name, Old: a, New: b})
		}
	}
	field(ComponentSystem, "", "manufacturer", old.System.Manufacturer, cur.System.Manufacturer)
	field(ComponentSystem, "", "product", old.System.Product, cur.System.Product)
	field(ComponentSystem, "", "serial", old.System.Serial, cur.System.Serial)
	field(ComponentFirmware, "", "vendor", old.Firmware.Vendor, cur.Firmware.Vendor)
	field(ComponentFirmware, "", "version", old.Firmware.Version, cur.Firmware.Version)
	field(ComponentFirmware, "", "build_date", old.Firmware.BuildDate, cur.Firmware.BuildDate)
	field(ComponentCPU, "", "model", old.CPU.Model, cur.CPU.Model)
	field(ComponentCPU, "", "count", itoa(old.CPU.Count), itoa(cur.CPU.Count))
	field(ComponentCPU, "", "sockets", itoa(old.CPU.Sockets), itoa(cur.CPU.Sockets))
	field(ComponentCPU, "", "architecture", old.CPU.Architecture, cur.CPU.Architecture)
	field(ComponentMemory, "", "total", mb(old.Memory.PhysicalMB), mb(cur.Memory.PhysicalMB))

	// Modules only when both inspections collected them: the stock
	// agent's dmi collector is optional.
	if len(old.Memory.Modules) > 0 && len(cur.Memory.Modules) > 0 {
		out = append(out, compareSets(ComponentMemoryModule, old.Memory.Modules, cur.Memory.Modules,
			func(m MemoryModule) string { return m.Locator }, describeModule,
			func(id string, a, b MemoryModule) []Change {
				var cs []Change
				add := func(name, x, y string) {
					if x != y && x != "" && y != "" {
						cs = append(cs, Change{Component: ComponentMemoryModule, ID: id, Change: Changed, Field: name, Old: x, New: y})
					}
				}
				add("size", a.Size, b.Size)
				add("serial", a.Serial, b.Serial)
				add("speed", a.Speed, b.Speed)
				return cs
			})...)
	}

	diskID := diskIdentity(old.Disks, cur.Disks)
	out = append(out, compareSets(ComponentDisk, old.Disks, cur.Disks, diskID, describeDisk,
		func(id string, a, b Disk) []Change {
			var cs []Change
			add := func(name, x, y string) {
				if x != y && x != "" && y != "" {
					cs = append(cs, Change{Component: ComponentDisk, ID: id, Change: Changed, Field: name, Old: x, New: y})
				}
			}
			if a.SizeBytes != b.SizeBytes {
				add("size", Size(a.SizeBytes), Size(b.SizeBytes))
			}
			add("name", a.Name, b.Name)
			add("model", a.Model, b.Model)
			return cs
		})...)

	out = append(out, compareSets(ComponentNIC, old.NICs, cur.NICs,
		func(n NIC) string { return n.MAC }, describeNIC,
		func(id string, a, b NIC) []Change {
			var cs []Change
			if a.Name != b.Name && a.Name != "" && b.Name != "" {
				cs = append(cs, Change{Component: ComponentNIC, ID: id, Change: Changed, Field: "name", Old: a.Name, New: b.Name})
			}
			if x, y := describePort(a.Switch), describePort(b.Switch); x != y {
				cs = append(cs, Change{Component: ComponentNIC, ID: id, Change: Changed, Field: "switch_port", Old: x, New: y})
			}
			if a.Switch.Known() && b.Switch.Known() {
				if x, y := describeVLANs(a.Switch), describeVLANs(b.Switch); x != y {
					cs = append(cs, Change{Component: ComponentNIC, ID: id, Change: Changed, Field: "vlans", Old: x, New: y})
				}
			}
			return cs
		})...)

	field(ComponentBMC, "", "ipv4_address", old.BMC.IPv4, cur.BMC.IPv4)
	field(ComponentBMC, "", "ipv6_address", old.BMC.IPv6, cur.BMC.IPv6)
	field(ComponentBMC, "", "mac", old.BMC.MAC, cur.BMC.MAC)
	return out
}

// compareSets matches two lists by id: what is only in old was removed,
// only in cur added, in both compared by changed. Removed come first, then
// added, then changed, each in id order.
func compareSets[T any](component string, old, cur []T, id func(T) string, describe func(T) string,
	changed func(id string, a, b T) []Change) []Change {
	before := map[string]T{}
	for _, x := range old {
		before[id(x)] = x
	}
	after := map[string]T{}
	for _, x := range cur {
		after[id(x)] = x
	}
	var removed, added, diffs []Change
	for _, k := range sortedKeys(before) {
		a := before[k]
		b, ok := after[k]
		if !ok {
			removed = append(removed, Change{Component: component, ID: k, Change: Removed, Old: describe(a)})
			continue
		}
		diffs = append(diffs, changed(k, a, b)...)
	}
	for _, k := range sortedKeys(after) {
		if _, ok := before[k]; !ok {
			added = append(added, Change{Component: component, ID: k, Change: Added, New: describe(after[k])})
		}
	}
	return slices.Concat(removed, added, diffs)
}

func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// diskIdentity picks how disks are told apart: by WWN, else serial, when
// every disk on both sides has one (a disk's name can move: sdb becomes sda
// when sda is pulled); else by name.
func diskIdentity(old, cur []Disk) func(Disk) string {
	all := slices.Concat(old, cur)
	every := func(f func(Disk) string) bool {
		for _, d := range all {
			if f(d) == "" {
				return false
			}
		}
		return true
	}
	wwnOrSerial := func(d Disk) string {
		if d.WWN != "" {
			return d.WWN
		}
		return d.Serial
	}
	if every(wwnOrSerial) {
		return wwnOrSerial
	}
	return func(d Disk) string { return d.Name }
}

func describeDisk(d Disk) string {
	parts := []string{d.Name, Size(d.SizeBytes)}
	if d.Model != "" {
		parts = append(parts, d.Model)
	}
	if d.Serial != "" {
		parts = append(parts, "serial "+d.Serial)
	}
	return strings.Join(parts, ", ")
}

func describeNIC(n NIC) string {
	parts := []string{n.Name}
	if p := describePort(n.Switch); p != "" {
		parts = append(parts, "on "+p)
	}
	return strings.Join(parts, ", ")
}

func describeModule(m MemoryModule) string {
	parts := []string{m.Size}
	if m.Type != "" {
		parts = append(parts, m.Type)
	}
	if m.Serial != "" {
		parts = append(parts, "serial "+m.Serial)
	}
	return strings.Join(parts, ", ")
}

// describePort is a NIC's switch port as "switch port", or "" without LLDP.
func describePort(s SwitchPort) string {
	if !s.Known() {
		return ""
	}
	return strings.TrimSpace(s.Switch() + " port " + s.PortID)
}

func describeVLANs(s SwitchPort) string {
	var parts []string
	if s.UntaggedVLAN != 0 {
		parts = append(parts, "untagged "+itoa(s.UntaggedVLAN))
	}
	for _, v := range sortedVLANs(s.VLANs) {
		parts = append(parts, itoa(v))
	}
	return strings.Join(parts, ",")
}

func itoa(i int) string {
	if i == 0 {
		return ""
	}
	return strconv.Itoa(i)
}

func mb(v int) string {
	if v == 0 {
		return ""
	}
	return strconv.Itoa(v) + " MiB"
}

// PluginDataKey is the plugin_data key under which an inspection's
// hardware changes are offered to inspection rules.
const PluginDataKey = "hardware_changes"

// PluginData is the changes as plugin_data holds them (JSON types only, so
// a rule's condition can walk them as any other plugin_data):
//
//	{"previous_inspection": "2026-01-02T03:04:05Z",
//	 "changes": [{"component": "disk", "id": "0x5000…", "change": "removed", "old": "/dev/sdb, 10 GiB"}],
//	 "added": 0, "removed": 1, "changed": 0}
func PluginData(previousInspection string, changes []Change) map[string]any {
	list := make([]any, len(changes))
	counts := map[string]int{Added: 0, Removed: 0, Changed: 0}
	for i, c := range changes {
		m := map[string]any{"component": c.Component, "change": c.Change}
		for k, v := range map[string]string{"id": c.ID, "field": c.Field, "old": c.Old, "new": c.New} {
			if v != "" {
				m[k] = v
			}
		}
		list[i] = m
		counts[c.Change]++
	}
	out := map[string]any{"changes": list}
	if previousInspection != "" {
		out["previous_inspection"] = previousInspection
	}
	for k, v := range counts {
		out[k] = v
	}
	return out
}
