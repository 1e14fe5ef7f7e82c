// Package inspection processes the hardware report an in-band agent posts:
// one pipeline of hooks, then the inspection rules, for both of ferro's
// entry points.
//
// The agent inspect interface (Ironic master; the agent posts to the bare
// metal API's POST /v1/continue_inspection and the conductor processes
// the report in-process) runs a pipeline built with [Ironic]: Ironic's
// hook names in [inspector]hooks, plugin_data in Ironic's shape, the rules
// of /v1/inspection_rules and the built-in rules. The ironic-inspector
// service (the 2023.1 compatibility mode; the agent posts to the
// inspector's /v1/continue) runs one built with [Inspector]:
// ironic-inspector's hook names in [processing]processing_hooks, mapped
// onto the same hooks, its processed-data shape, and its /v1/rules
// converted into the same rule engine. Only the entry points differ.
//
// Processing never calls the bare metal API: hooks and rules plan their
// changes on a plan.Node, and the caller applies the Result's Changes
// once processing has succeeded. A report whose processing fails changes
// nothing.
package inspection

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/inspection/rules"
)

// Dialect is the upstream whose names, shapes and messages a pipeline
// follows.
type Dialect int

const (
	// Ironic is Ironic master's built-in inspection.
	Ironic Dialect = iota
	// Inspector is ironic-inspector 11.1.
	Inspector
)

func (d Dialect) String() string {
	if d == Inspector {
		return "ironic-inspector"
	}
	return "ironic"
}

// Values of Options.AddPorts and Options.KeepPorts, as upstream's.
const (
	AddPortsPXE      = "pxe"
	AddPortsActive   = "active"
	AddPortsAll      = "all"
	AddPortsDisabled = "disabled"

	KeepPortsAll     = "all"
	KeepPortsPresent = "present"
	KeepPortsAdded   = "added"
)

// Default hook lists.
var (
	// DefaultHooks is Ironic's [inspector]default_hooks.
	DefaultHooks = []string{"ramdisk-error", "validate-interfaces", "ports", "architecture"}
	// InspectorDefaultHooks is ironic-inspector's
	// [processing]default_processing_hooks.
	InspectorDefaultHooks = []string{"ramdisk_error", "root_disk_selection", "scheduler", "validate_interfaces", "capabilities", "pci_devices"}
)

// FlagCapability maps a CPU flag to the capability it sets.
type FlagCapability struct {
	Flag, Capability string
}

// DefaultCPUCapabilities is [inspector]cpu_capabilities' default (and
// [capabilities]cpu_flags').
var DefaultCPUCapabilities = []FlagCapability{
	{"vmx", "cpu_vt"}, {"svm", "cpu_vt"}, {"aes", "cpu_aes"}, {"pse", "cpu_hugepages"},
	{"pdpe1gb", "cpu_hugepages_1g"}, {"smx", "cpu_txt"},
}

// Options configure a pipeline. Start from DefaultOptions: the zero value
// is not upstream's default.
type Options struct {
	Dialect Dialect
	// Hooks are the hooks to run, in order, by the dialect's names
	// ("$default_hooks" already expanded; see ExpandHooks).
	Hooks []string

	// Ports: [inspector]add_ports, keep_ports, update_pxe_enabled (the
	// [processing] names are their deprecated aliases).
	AddPorts         string
	KeepPorts        string
	UpdatePXEEnabled bool
	// OverwriteExisting is ironic-inspector's [processing]overwrite_existing:
	// its scheduler and root_disk_selection hooks leave set properties
	// alone without it. Ironic's hooks always write.
	OverwriteExisting bool
	// DiskPartitioningSpacing subtracts 1 GiB from local_gb for the
	// partition table ([inspector]disk_partitioning_spacing).
	DiskPartitioningSpacing bool
	// SkipBlockDevices are devices ("/dev/sdb") root_disk_selection never
	// picks, on top of the node's properties.skip_block_devices
	// (ironic-inspector's [processing]skip_block_devices).
	SkipBlockDevices []string
	// BootMode makes ironic-inspector's capabilities hook store boot_mode
	// ([capabilities]boot_mode); Ironic has a boot-mode hook instead.
	BootMode bool
	// CPUCapabilities: [inspector]cpu_capabilities ([capabilities]cpu_flags).
	CPUCapabilities []FlagCapability
	// PCIDeviceAliases: [inspector]pci_device_alias, JSON objects
	// {"vendor_id", "product_id", "name"}.
	PCIDeviceAliases []string
	// ExtraHardwareStrict: [inspector]extra_hardware_strict.
	ExtraHardwareStrict bool
	// PhysicalNetworkCIDRMap: [inspector]physical_network_cidr_map,
	// "cidr:physnet" entries.
	PhysicalNetworkCIDRMap []string
	// KnownAccelerators is the YAML of [inspector]known_accelerators; nil
	// means the list ferro ships.
	KnownAccelerators []byte

	// Rules are the stored rules of this entry point (nil: none).
	Rules RuleSource
	// BuiltInRules are [inspection_rules]built_in_rules, already loaded
	// (rules.LoadBuiltIn); they run with the stored ones, by priority.
	BuiltInRules []*rules.Rule
	// MaskSecrets: [inspection_rules]mask_secrets, always (default),
	// never or sensitive.
	MaskSecrets string
	// HTTPClient makes the api-call action's requests; nil: a default one.
	HTTPClient *http.Client

	// Log receives what upstream logs (skipped interfaces, malformed
	// TLVs, rules applied). Nil discards.
	Log *slog.Logger
}

// DefaultOptions returns upstream's defaults for a dialect.
func DefaultOptions(d Dialect) Options {
	o := Options{
		Dialect: d, Hooks: DefaultHooks,
		AddPorts: AddPortsPXE, KeepPorts: KeepPortsAll, UpdatePXEEnabled: true, OverwriteExisting: true,
		DiskPartitioningSpacing: true, CPUCapabilities: DefaultCPUCapabilities, MaskSecrets: rules.MaskAlways,
	}
	if d == Inspector {
		o.Hooks = InspectorDefaultHooks
	}
	return o
}

// ExpandHooks returns list with "$default_hooks" (Ironic) or
// "$default_processing_hooks" (ironic-inspector) replaced by defaults,
// blanks dropped, as oslo.config substitutes the variable.
func ExpandHooks(list, defaults []string) []string {
	var out []string
	for _, h := range list {
		switch h = trim(h); h {
		case "$default_hooks", "$default_processing_hooks", "${default_hooks}", "${default_processing_hooks}":
			out = append(out, defaults...)
		case "":
		default:
			out = append(out, h)
		}
	}
	return out
}

// RuleSource returns the stored rules a report is processed with.
type RuleSource interface {
	Rules(ctx context.Context) ([]*rules.Rule, error)
}

// Pipeline is a configured set of hooks and rules. It keeps no state
// between reports and is safe for concurrent use.
type Pipeline struct {
	opts  Options
	hooks []*hook
	log   *slog.Logger
	set   *settings
}

// New validates the options and builds the pipeline. A hook that is not
// known, or whose dependencies are not enabled before it, is an error, as
// Ironic's conductor refuses to load the inspect interface then.
func New(o Options) (*Pipeline, error) {
	s, err := newSettings(o)
	if err != nil {
		return nil, err
	}
	hooks, err := buildHooks(o.Dialect, o.Hooks)
	if err != nil {
		return nil, err
	}
	for _, r := range o.BuiltInRules {
		if !r.BuiltIn {
			return nil, fmt.Errorf("rule %s is given as built in but was not loaded as one", r.UUID)
		}
	}
	return &Pipeline{opts: o, hooks: hooks, log: s.log, set: s}, nil
}

// Dialect returns the pipeline's dialect.
func (p *Pipeline) Dialect() Dialect { return p.opts.Dialect }

// HookNames returns the hooks the pipeline runs, in order.
func (p *Pipeline) HookNames() []string {
	names := make([]string, len(p.hooks))
	for i, h := range p.hooks {
		names[i] = h.name
	}
	return names
}

// Target is the node a report belongs to, and what its caller adds.
type Target struct {
	Node  *baremetal.Node
	Ports []*baremetal.Port
	// Previous loads what the node's last inspection stored (nil, nil:
	// nothing). It is called at most once, and only when something needs
	// it: the raid-device hook compares with its inventory, and rules are
	// offered the hardware changes since it (plugin_data's
	// hardware.PluginDataKey). Nil: no previous inspection.
	Previous func(context.Context) (*Previous, error)
	// PluginData is merged into plugin_data after the hooks and before the
	// rules, so that rules see it: the place for what the caller computes
	// from the report and what it has stored (a hardware-change summary,
	// for instance). Keys the hooks set are overwritten.
	PluginData map[string]any
}

// Previous is what a node's last inspection stored.
type Previous struct {
	Inventory, PluginData map[string]any
	// Inspected is when that inspection finished (zero: unknown).
	Inspected time.Time
}

// Result is what processing a report produced. Nothing of it has been
// applied or stored.
type Result struct {
	// Changes are the node and port changes to apply, in their order.
	Changes plan.Changes
	// Inventory is the report's inventory as sent (ironic-inspector's
	// root_disk_selection drops the skipped disks from it, as upstream).
	Inventory map[string]any
	// PluginData is plugin_data in the dialect's shape: Ironic's (the
	// report without inventory and logs, plus all_interfaces,
	// valid_interfaces, macs, parsed_lldp… and what rules set), or
	// ironic-inspector's processed data without inventory and logs.
	PluginData map[string]any
	// Logs are the ramdisk's logs (base64 of a gzipped tarball, "" if
	// none), kept apart: never in PluginData.
	Logs string
	// Rules are the UUIDs of the rules whose actions ran, in order.
	Rules []string
}

// Processed returns ironic-inspector's processed introspection data:
// PluginData with the inventory inside. The maps are shared.
func (r *Result) Processed() map[string]any {
	m := make(map[string]any, len(r.PluginData)+1)
	for k, v := range r.PluginData {
		m[k] = v
	}
	m["inventory"] = r.Inventory
	return m
}

// Start runs every hook's preprocess step on a report (Ironic's
// preprocess, ironic-inspector's before_processing), even after one
// failed, so that the node can still be looked up and marked failed;
// Run.Err reports the failures. nodeUUID names the node in messages
// ("" when it is not known yet, as on the inspector's path).
func (p *Pipeline) Start(ctx context.Context, rep *Report, nodeUUID string) *Run {
	r := newRun(p, rep, nodeUUID)
	for _, h := range p.hooks {
		if h.preprocess == nil {
			continue
		}
		if err := h.preprocess(ctx, r); err != nil {
			r.failures = append(r.failures, hookFailure{hook: h.name, err: err, preprocess: true})
		}
	}
	return r
}

// Process is Start then Finish, for a caller that knows the node before
// processing (the agent path). On failure the Result, when not nil,
// carries only the ramdisk logs, which upstream stores then.
func (p *Pipeline) Process(ctx context.Context, rep *Report, t Target) (*Result, error) {
	uuid := ""
	if t.Node != nil {
		uuid = t.Node.UUID
	}
	r := p.Start(ctx, rep, uuid)
	if err := r.Err(); err != nil {
		return &Result{Logs: r.logs}, err
	}
	return r.Finish(ctx, t)
}
