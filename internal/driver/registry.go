package driver

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// HardwareType is a kind of hardware, declared by its folder
// (internal/driver/<type>): the interfaces it supports and the driver_info
// keys of the interfaces the folder implements. The registry, the API's
// driver views and the [DEFAULT]enabled_* defaults all read it; no other
// place lists hardware types.
type HardwareType struct {
	Name string
	// Supported lists, per interface kind, the interfaces the type
	// supports, the first being its default (Ironic's
	// supported_*_interfaces).
	Supported map[string][]string
	// Interfaces names the interfaces the type's folder implements
	// (ipmitool, redfish, …). Every hardware type that supports one of
	// them reads Properties (fake-hardware supports ipmitool, so it lists
	// ipmi's keys).
	Interfaces []string
	// Properties are the driver_info keys of those interfaces.
	Properties []Property
}

// Property is one driver_info key, as GET /v1/drivers/{type}/properties
// (`baremetal driver property list`) describes it.
type Property struct {
	Name string
	// Description is shown as is; Ironic's end in "Required." or "Optional.".
	Description string
	// Required says validation fails without it.
	Required bool
	// Kind, when set, limits the key to the folder's interface of that
	// kind (fake's vendor keys): only a default one of it lists the key.
	Kind string
	// Secret says the value is a credential: never shown or logged. The
	// API masks driver_info by Ironic's rule (a key containing password,
	// token, …), which must cover every Secret key.
	Secret bool
}

// SharedInterfaces returns what every hardware type supports for the kinds
// whose implementations do not depend on the hardware, with own's kinds
// replacing them.
func SharedInterfaces(own map[string][]string) map[string][]string {
	m := map[string][]string{
		"bios":     {"no-bios", "fake"},
		"console":  {"no-console", "fake"},
		"deploy":   {"direct", "fake"},
		"firmware": {"no-firmware", "fake"},
		"inspect":  {"agent", "inspector", "no-inspect", "fake"},
		"network":  {"flat", "noop", "neutron"},
		"raid":     {"no-raid", "agent", "fake"},
		"rescue":   {"no-rescue", "fake"},
		"storage":  {"noop", "fake"},
		"vendor":   {"no-vendor", "fake"},
	}
	for k, v := range own {
		m[k] = v
	}
	return m
}

// CommonProperties are the driver_info keys of the interfaces every
// hardware type shares (boot, deploy, network, inspect), as Ironic's
// properties list them.
var CommonProperties = []Property{
	{Name: "deploy_kernel", Description: "UUID (from Glance) of the deployment kernel. Required."},
	{Name: "deploy_ramdisk", Description: "UUID (from Glance) of the ramdisk with agent that is used at deploy time. Required."},
	{Name: "inspector_extra_kernel_params", Description: "Extra kernel parameters for the inspection ramdisk, appended after [inspector]extra_kernel_params. Optional."},
	{Name: "inspection_network", Description: "Neutron network (UUID or name) to put the node's ports on during inspection. Optional."},
	{Name: "force_persistent_boot_device", Description: "Controls the persistency of boot order changes. 'Always' will make all changes persistent, 'Default' will make all but the final one upon instance deployment non-persistent, and 'Never' will make no persistent changes at all. The old values 'True' and 'False' are still supported but deprecated in favor of the new ones.Defaults to 'Default'. Optional."},
	{Name: "bootloader", Description: "URL or Glance UUID of the EFI system partition image containing EFI boot loader. Optional."},
	{Name: "kernel_append_params", Description: "Additional kernel parameters to pass down to instance kernel. These parameters can be consumed by the kernel or by the applications by reading /proc/cmdline. Mind severe cmdline size limit. Overrides [pxe]/kernel_append_params ironic option. Optional."},
	{Name: "deploy_forces_oob_reboot", Description: "Whether Ironic should force a reboot of the Node via the out-of-band channel after deployment is complete. Provides compatibility with older deploy ramdisks. Defaults to False. Optional."},
	{Name: "cleaning_network", Description: "Neutron network UUID or name for the ramdisk to be booted into for cleaning nodes. Required for \"neutron\" network interface. It is also required if cleaning nodes when using \"flat\" network interface or \"neutron\" DHCP provider. If a name is provided, it must be unique among all networks or cleaning will fail."},
	{Name: "provisioning_network", Description: "Neutron network UUID or name for the ramdisk to be booted into for provisioning nodes. Required for \"neutron\" network interface. If a name is provided, it must be unique among all networks or deploy will fail."},
	{Name: "agent_verify_ca", Description: "Either a Boolean value, a path to a CA_BUNDLE file or directory with certificates of trusted CAs. If set to True ironic will verify the agent's certificate; if False the driver will ignore verifying the SSL certificate. If it's a path the driver will use the specified certificate or one of the certificates in the directory. Defaults to True. Optional"},
}

// SecretValues returns the non-empty string values of driver_info keys
// that props mark Secret: what a client scrubs from the answers of the
// servers it sends them to.
func SecretValues(props []Property, driverInfo map[string]any) []string {
	var out []string
	for _, p := range props {
		if s, ok := driverInfo[p.Name].(string); ok && p.Secret && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// MissingProperties names the Required properties driver_info lacks (an
// absent key, null or ""), in the order of props.
func MissingProperties(props []Property, driverInfo map[string]any) []string {
	var out []string
	for _, p := range props {
		if v, ok := driverInfo[p.Name]; p.Required && (!ok || v == nil || v == "") {
			out = append(out, p.Name)
		}
	}
	return out
}

// Enabled is what [DEFAULT] enables: the hardware types, and per kind the
// enabled interfaces (in configuration order) and the default one ("" for
// the hardware type's own).
type Enabled struct {
	Types      []string
	Interfaces map[string][]string
	Defaults   map[string]string
}

// EnableAll enables every hardware type and every interface they
// support, in the order of types and of their Supported lists: ferro's
// defaults of [DEFAULT]enabled_hardware_types and enabled_*_interfaces.
func EnableAll(types []HardwareType) Enabled {
	e := Enabled{Interfaces: map[string][]string{}}
	for _, ht := range types {
		e.Types = append(e.Types, ht.Name)
	}
	for _, kind := range Kinds {
		for _, ht := range types {
			for _, name := range ht.Supported[kind] {
				if !slices.Contains(e.Interfaces[kind], name) {
					e.Interfaces[kind] = append(e.Interfaces[kind], name)
				}
			}
		}
	}
	return e
}

// Kinds are the interface kinds in Ironic's order.
var Kinds = []string{
	"bios", "boot", "console", "deploy", "firmware", "inspect", "management",
	"network", "power", "raid", "rescue", "storage", "vendor",
}

// ValidatedKinds are the kinds GET /v1/nodes/{node}/validate reports, as
// Ironic 21.4 (API 1.82) does: its drivers' non_vendor_interfaces, which
// do not include vendor, nor firmware (added in a later release).
var ValidatedKinds = []string{
	"bios", "boot", "console", "deploy", "inspect", "management",
	"network", "power", "raid", "rescue", "storage",
}

// Registry resolves hardware types and interface names to implementations.
// It is built once in main and read-only afterwards.
type Registry struct {
	// all are the hardware types this binary has; types the enabled ones.
	all     []HardwareType
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

// NewRegistry returns a registry of the hardware types this binary has,
// with e's enabled types and interfaces.
func NewRegistry(types []HardwareType, e Enabled) *Registry {
	r := &Registry{
		all: types, types: map[string]HardwareType{}, enabled: e.Interfaces, defaults: e.Defaults,
		power: map[string]Power{}, management: map[string]Management{}, boot: map[string]Boot{},
		network: map[string]Network{}, inspect: map[string]Inspect{}, others: map[string]map[string]Validator{},
	}
	if r.enabled == nil {
		r.enabled = map[string][]string{}
	}
	for _, ht := range types {
		if slices.Contains(e.Types, ht.Name) {
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

// Properties returns what GET /v1/drivers/{type}/properties lists for an
// enabled hardware type, sorted by name: as Ironic's get_properties, the
// keys of the type's default interface of every kind. A default interface
// of a folder (ipmitool, redfish, …) brings the folder's Properties; a
// default boot or deploy interface that is not fake brings
// CommonProperties. So fake-hardware, all fake by default, lists only what
// Ironic's fake vendor interface describes.
func (r *Registry) Properties(hwType string) ([]Property, bool) {
	if _, ok := r.types[hwType]; !ok {
		return nil, false
	}
	byName := map[string]Property{}
	for _, kind := range Kinds {
		name, err := r.DefaultInterface(hwType, kind)
		if err != nil {
			continue
		}
		if (kind == "boot" || kind == "deploy") && name != "fake" {
			for _, p := range CommonProperties {
				byName[p.Name] = p
			}
		}
		for _, other := range r.all {
			if slices.Contains(other.Interfaces, name) {
				for _, p := range other.Properties {
					if p.Kind == "" || p.Kind == kind {
						byName[p.Name] = p
					}
				}
			}
		}
	}
	out := slices.Collect(maps.Values(byName))
	slices.SortFunc(out, func(a, b Property) int { return strings.Compare(a.Name, b.Name) })
	return out, true
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

// DefaultInterfaces returns the interface of every kind a new node of
// hwType gets (DefaultInterface of each), as node creation fills them.
func (r *Registry) DefaultInterfaces(hwType string) (map[string]string, error) {
	out := make(map[string]string, len(Kinds))
	for _, kind := range Kinds {
		name, err := r.DefaultInterface(hwType, kind)
		if err != nil {
			return nil, err
		}
		out[kind] = name
	}
	return out, nil
}

// CheckEnabled looks for enabled interfaces that no hardware type of this
// binary has. Ironic refuses to start when an enabled interface cannot be
// loaded; so does ferro for the kinds it drives (power, management, boot,
// network, inspect), whose interfaces would otherwise be left out of every
// node's choices without a word. For the kinds ferro only validates
// (deploy, raid, firmware, …) such names are returned as warnings: an
// Ironic configuration naming interfaces ferro has not got still starts.
func (r *Registry) CheckEnabled() (warnings []string, err error) {
	var unknown []string
	for _, kind := range Kinds {
		for _, name := range r.enabled[kind] {
			if slices.ContainsFunc(r.all, func(ht HardwareType) bool { return slices.Contains(ht.Supported[kind], name) }) {
				continue
			}
			msg := fmt.Sprintf("%q in enabled_%s_interfaces", name, kind)
			if slices.Contains(DrivenKinds, kind) {
				unknown = append(unknown, msg)
			} else {
				warnings = append(warnings, msg)
			}
		}
	}
	if len(unknown) > 0 {
		return warnings, fmt.Errorf("%w: no hardware type of this binary has the interface(s) %s", ErrInvalidParameter, strings.Join(unknown, ", "))
	}
	return warnings, nil
}

// DrivenKinds are the interface kinds ferro runs (the others it only
// validates).
var DrivenKinds = []string{"boot", "inspect", "management", "network", "power"}

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
