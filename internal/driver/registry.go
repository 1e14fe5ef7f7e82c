package driver

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// HardwareType names the interfaces a kind of hardware supports, per
// interface kind, the first being the default (Ironic's
// supported_*_interfaces).
type HardwareType struct {
	Name      string
	Supported map[string][]string
}

// commonSupported are the kinds whose implementations do not depend on the hardware.
func commonSupported(over map[string][]string) map[string][]string {
	m := map[string][]string{
		"bios":     {"no-bios", "fake"},
		"console":  {"no-console", "fake"},
		"deploy":   {"direct", "fake"},
		"firmware": {"no-firmware", "fake"},
		"inspect":  {"no-inspect", "inspector", "fake"},
		"network":  {"flat", "noop", "neutron"},
		"raid":     {"no-raid", "agent", "fake"},
		"rescue":   {"no-rescue", "fake"},
		"storage":  {"noop", "fake"},
		"vendor":   {"no-vendor", "fake"},
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

// HardwareTypes returns ferro's hardware types with Ironic's supported
// interfaces and defaults.
func HardwareTypes() []HardwareType {
	return []HardwareType{
		{Name: "fake-hardware", Supported: commonSupported(map[string][]string{
			"bios": {"fake", "no-bios"}, "boot": {"fake", "pxe", "ipxe", "redfish-virtual-media"},
			"console": {"fake", "no-console"}, "deploy": {"fake", "direct"}, "firmware": {"fake", "no-firmware"},
			"inspect": {"fake", "no-inspect", "inspector", "redfish"}, "management": {"fake", "ipmitool", "redfish"},
			"network": {"noop", "flat", "neutron"}, "power": {"fake", "ipmitool", "redfish"},
			"raid": {"fake", "no-raid", "agent"}, "rescue": {"fake", "no-rescue"}, "storage": {"fake", "noop"},
			"vendor": {"fake", "no-vendor"},
		})},
		{Name: "ipmi", Supported: commonSupported(map[string][]string{
			"boot": {"ipxe", "pxe"}, "management": {"ipmitool"}, "power": {"ipmitool"},
			"vendor": {"ipmitool", "no-vendor"}, "inspect": {"no-inspect", "inspector"},
		})},
		{Name: "redfish", Supported: commonSupported(map[string][]string{
			"boot": {"ipxe", "pxe", "redfish-virtual-media"}, "management": {"redfish"}, "power": {"redfish"},
			// Ironic's redfish type puts its out-of-band inspection first.
			"inspect": {"redfish", "no-inspect", "inspector"},
		})},
	}
}

// Kinds are the interface kinds in Ironic's order.
var Kinds = []string{
	"bios", "boot", "console", "deploy", "firmware", "inspect", "management",
	"network", "power", "raid", "rescue", "storage", "vendor",
}

// Registry resolves hardware types and interface names to implementations.
// It is built once in main and read-only afterwards.
type Registry struct {
	types   map[string]HardwareType
	enabled map[string][]string // kind → enabled names, in config order
	// defaults is [DEFAULT]default_<kind>_interface, or "" for the type's default.
	defaults   map[string]string
	power      map[string]Power
	management map[string]Management
	boot       map[string]Boot
	network    map[string]Network
	inspect    map[string]Inspect
	others     map[string]map[string]Validator
}

// NewRegistry returns a registry with the enabled hardware types and the
// enabled and default interfaces per kind.
func NewRegistry(enabledTypes []string, enabled map[string][]string, defaults map[string]string) *Registry {
	r := &Registry{
		types: map[string]HardwareType{}, enabled: enabled, defaults: defaults,
		power: map[string]Power{}, management: map[string]Management{}, boot: map[string]Boot{},
		network: map[string]Network{}, inspect: map[string]Inspect{}, others: map[string]map[string]Validator{},
	}
	for _, ht := range HardwareTypes() {
		if slices.Contains(enabledTypes, ht.Name) {
			r.types[ht.Name] = ht
		}
	}
	return r
}

// RegisterPower and the following add implementations under a name.
func (r *Registry) RegisterPower(name string, p Power) { r.power[name] = p }

// RegisterManagement adds a management implementation.
func (r *Registry) RegisterManagement(name string, m Management) { r.management[name] = m }

// RegisterBoot adds a boot implementation.
func (r *Registry) RegisterBoot(name string, b Boot) { r.boot[name] = b }

// BootInterfaces returns the registered boot implementations, by name.
func (r *Registry) BootInterfaces() []Boot {
	names := slices.Sorted(maps.Keys(r.boot))
	out := make([]Boot, len(names))
	for i, name := range names {
		out[i] = r.boot[name]
	}
	return out
}

// RegisterNetwork adds a network implementation.
func (r *Registry) RegisterNetwork(name string, n Network) { r.network[name] = n }

// RegisterInspect adds an inspect implementation.
func (r *Registry) RegisterInspect(name string, i Inspect) { r.inspect[name] = i }

// RegisterOther adds a validate-only implementation for another kind.
func (r *Registry) RegisterOther(kind, name string, v Validator) {
	if r.others[kind] == nil {
		r.others[kind] = map[string]Validator{}
	}
	r.others[kind][name] = v
}

// HardwareTypeNames returns the enabled hardware types, sorted.
func (r *Registry) HardwareTypeNames() []string {
	var out []string
	for n := range r.types {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// HardwareType returns an enabled hardware type.
func (r *Registry) HardwareType(name string) (HardwareType, bool) {
	ht, ok := r.types[name]
	return ht, ok
}

// EnabledFor returns the interfaces of a kind that are both supported by the
// hardware type and enabled, in the hardware type's order.
func (r *Registry) EnabledFor(hwType, kind string) []string {
	ht, ok := r.types[hwType]
	if !ok {
		return nil
	}
	var out []string
	for _, name := range ht.Supported[kind] {
		if slices.Contains(r.enabled[kind], name) {
			out = append(out, name)
		}
	}
	return out
}

// DefaultInterface returns the interface a new node of hwType gets for kind:
// the configured default if the type supports it, else the first supported
// and enabled one.
func (r *Registry) DefaultInterface(hwType, kind string) (string, error) {
	names := r.EnabledFor(hwType, kind)
	if d := r.defaults[kind]; d != "" {
		if slices.Contains(names, d) {
			return d, nil
		}
	}
	if len(names) == 0 {
		return "", fmt.Errorf("%w: no enabled %s interface for hardware type %s", ErrInvalidParameter, kind, hwType)
	}
	return names[0], nil
}

// CheckInterface returns an error unless name is a supported and enabled
// interface of kind for hwType.
func (r *Registry) CheckInterface(hwType, kind, name string) error {
	if _, ok := r.types[hwType]; !ok {
		return fmt.Errorf("%w: hardware type %q is not enabled", ErrInvalidParameter, hwType)
	}
	if !slices.Contains(r.EnabledFor(hwType, kind), name) {
		return fmt.Errorf("%w: could not find a suitable %s interface %q for hardware type %s; enabled and supported: %v",
			ErrInvalidParameter, kind, name, hwType, r.EnabledFor(hwType, kind))
	}
	return nil
}

// Resolve returns the implementations for a node's interface names. A kind
// whose implementation is not built into this binary resolves to one that
// answers every call with ErrUnsupported.
func (r *Registry) Resolve(names map[string]string) *Interfaces {
	ifs := &Interfaces{Names: names, Others: map[string]Validator{}}
	ifs.Power = pick(r.power, names["power"], Power(unavailable{"power", names["power"]}))
	ifs.Management = pick(r.management, names["management"], Management(unavailable{"management", names["management"]}))
	ifs.Boot = pick(r.boot, names["boot"], Boot(unavailable{"boot", names["boot"]}))
	ifs.Network = pick(r.network, names["network"], Network(unavailable{"network", names["network"]}))
	ifs.Inspect = pick(r.inspect, names["inspect"], Inspect(unavailable{"inspect", names["inspect"]}))
	for kind, impls := range r.others {
		if v, ok := impls[names[kind]]; ok {
			ifs.Others[kind] = v
		}
	}
	return ifs
}

func pick[T any](m map[string]T, name string, fallback T) T {
	if v, ok := m[name]; ok {
		return v
	}
	return fallback
}
