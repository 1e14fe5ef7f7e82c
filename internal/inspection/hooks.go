package inspection

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
)

// hook is one processing hook: preprocess runs on the report before the
// node is known, process plans changes on the node. Either may be nil.
type hook struct {
	name       string
	preprocess func(context.Context, *Run) error
	process    func(context.Context, *Run) error
}

// hookDef is a hook under one name: its steps and the hooks it needs
// enabled before it.
type hookDef struct {
	preprocess func(context.Context, *Run) error
	process    func(context.Context, *Run) error
	deps       []string
}

// ironicHooks are Ironic master's hooks (the ironic.inspection.hooks entry
// points), each doing what Ironic's does.
var ironicHooks = map[string]hookDef{
	"ramdisk-error":         {preprocess: ramdiskError},
	"validate-interfaces":   {preprocess: validateInterfaces},
	"ports":                 {process: ports, deps: []string{"validate-interfaces"}},
	"architecture":          {process: architecture},
	"cpus":                  {process: cpus},
	"memory":                {process: memory},
	"root-device":           {process: rootDevice},
	"boot-mode":             {process: bootMode},
	"cpu-capabilities":      {process: cpuCapabilities},
	"pci-devices":           {process: pciDevices},
	"extra-hardware":        {process: extraHardware},
	"parse-lldp":            {process: parseLLDP},
	"local-link-connection": {process: localLinkConnection, deps: []string{"validate-interfaces"}},
	"physical-network":      {process: physicalNetwork, deps: []string{"validate-interfaces"}},
	"accelerators":          {process: accelerators},
	"raid-device":           {process: raidDevice},
}

// inspectorHooks are ironic-inspector 11.1's processing hooks, mapped onto
// the same implementations, which follow the inspector where it differs
// (property values as strings, [processing]overwrite_existing, the
// processed-data shape).
var inspectorHooks = map[string]hookDef{
	"ramdisk_error":         {preprocess: ramdiskError},
	"validate_interfaces":   {preprocess: validateInterfaces, process: ports},
	"root_disk_selection":   {process: rootDevice},
	"scheduler":             {process: scheduler},
	"capabilities":          {process: inspectorCapabilities},
	"pci_devices":           {process: pciDevices},
	"extra_hardware":        {process: extraHardware},
	"lldp_basic":            {process: parseLLDP, deps: []string{"validate_interfaces"}},
	"local_link_connection": {process: localLinkConnection, deps: []string{"validate_interfaces"}},
	"physnet_cidr_map":      {process: physicalNetwork, deps: []string{"validate_interfaces"}},
	"accelerators":          {process: accelerators},
	"raid_device":           {preprocess: raidDevicePreprocess, process: raidDevice},
}

// HookNames lists the hooks a dialect knows, sorted.
func HookNames(d Dialect) []string {
	defs := hookDefs(d)
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func hookDefs(d Dialect) map[string]hookDef {
	if d == Inspector {
		return inspectorHooks
	}
	return ironicHooks
}

// buildHooks returns the named hooks in order; like Ironic's
// validate_inspection_hooks it refuses unknown hooks and hooks whose
// dependencies are not enabled before them, naming every problem.
func buildHooks(d Dialect, names []string) ([]*hook, error) {
	defs := hookDefs(d)
	var hooks []*hook
	var unknown, depErrs []string
	enabled := map[string]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		def, ok := defs[name]
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		var missing []string
		for _, dep := range def.deps {
			if !enabled[dep] {
				missing = append(missing, dep)
			}
		}
		if len(missing) > 0 && d == Inspector {
			return nil, fmt.Errorf("processing hook %s requires %s to be enabled before it", name, strings.Join(missing, ", "))
		}
		if len(missing) > 0 {
			depErrs = append(depErrs, fmt.Sprintf("Hook %s requires these missing hooks to be enabled before it: %s", name, strings.Join(missing, ", ")))
			continue
		}
		hooks = append(hooks, &hook{name: name, preprocess: def.preprocess, process: def.process})
		enabled[name] = true
	}
	switch {
	case len(unknown) > 0 && d == Inspector:
		return nil, fmt.Errorf("unknown processing hook %q (known: %s)", unknown[0], strings.Join(HookNames(d), ", "))
	case len(unknown) > 0:
		return nil, fmt.Errorf("The following hook(s) are missing or failed to load: %s (known: %s)",
			strings.Join(unknown, ", "), strings.Join(HookNames(d), ", "))
	case len(depErrs) > 0:
		return nil, fmt.Errorf("Some hooks failed to load due to dependency problems: %s", strings.Join(depErrs, ", "))
	}
	return hooks, nil
}

// settings are the options, parsed once.
type settings struct {
	Options
	pciAliases map[[2]string]string // vendor_id, product_id → name
	cidrMap    []cidrPhysnet
	known      []map[string]any // known accelerators' pci_devices
	log        *slog.Logger
}

type cidrPhysnet struct {
	prefix  netip.Prefix
	physnet string
}

func newSettings(o Options) (*settings, error) {
	s := &settings{Options: o, log: o.Log}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	section := "[inspector]"
	if o.Dialect == Inspector {
		section = "[processing]"
	}
	switch o.AddPorts {
	case AddPortsPXE, AddPortsActive, AddPortsAll, AddPortsDisabled:
	default:
		return nil, fmt.Errorf("%sadd_ports: %q is not one of pxe, active, all, disabled", section, o.AddPorts)
	}
	switch o.KeepPorts {
	case KeepPortsAll, KeepPortsPresent, KeepPortsAdded:
	default:
		return nil, fmt.Errorf("%skeep_ports: %q is not one of all, present, added", section, o.KeepPorts)
	}
	if o.Dialect == Inspector && usesHook(o, "validate_interfaces") &&
		o.AddPorts == AddPortsDisabled && o.KeepPorts == KeepPortsAdded {
		return nil, fmt.Errorf("processing hook validate_interfaces: Configuration error: add_ports set to disabled and keep_ports set to added. Please change keep_ports to all.")
	}
	for _, fc := range o.CPUCapabilities {
		if fc.Flag == "" || fc.Capability == "" {
			return nil, fmt.Errorf("[inspector]cpu_capabilities: %q:%q is not flag:capability", fc.Flag, fc.Capability)
		}
	}
	s.pciAliases = map[[2]string]string{}
	for _, e := range o.PCIDeviceAliases {
		vendor, product, name, err := parseAlias(e)
		if err != nil {
			if o.Dialect == Inspector {
				return nil, fmt.Errorf("[pci_devices]alias %q: %w", e, err)
			}
			// Ironic logs the entry and goes on without it.
			s.log.Error("Error parsing 'pci_device_alias' option", "entry", e, "error", err)
			continue
		}
		s.pciAliases[[2]string{vendor, product}] = name
	}
	for _, e := range o.PhysicalNetworkCIDRMap {
		i := strings.LastIndexByte(e, ':')
		if i < 0 {
			return nil, fmt.Errorf("[inspector]physical_network_cidr_map: %q is not cidr:physnet", e)
		}
		prefix, err := netip.ParsePrefix(strings.TrimSpace(e[:i]))
		if err != nil || prefix != prefix.Masked() {
			return nil, fmt.Errorf("[inspector]physical_network_cidr_map: %q: %q is not a network", e, e[:i])
		}
		s.cidrMap = append(s.cidrMap, cidrPhysnet{prefix: prefix, physnet: strings.TrimSpace(e[i+1:])})
	}
	if usesHook(o, "accelerators") {
		known, err := loadAccelerators(o.KnownAccelerators)
		if err != nil {
			return nil, fmt.Errorf("[inspector]known_accelerators: %w", err)
		}
		s.known = known
	}
	return s, nil
}

func usesHook(o Options, name string) bool {
	return slices.ContainsFunc(o.Hooks, func(h string) bool { return strings.TrimSpace(h) == name })
}

func parseAlias(e string) (vendor, product, name string, err error) {
	var alias map[string]any
	if err := json.Unmarshal([]byte(e), &alias); err != nil {
		return "", "", "", err
	}
	vendor, _ = alias["vendor_id"].(string)
	product, _ = alias["product_id"].(string)
	name, _ = alias["name"].(string)
	if len(alias) != 3 || vendor == "" || product == "" || name == "" {
		return "", "", "", fmt.Errorf(`The "pci_device_alias" entry should contain exactly the "vendor_id", "product_id" and "name" keys.`)
	}
	return vendor, product, name, nil
}

func trim(s string) string { return strings.TrimSpace(s) }
