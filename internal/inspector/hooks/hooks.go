// Package hooks is the inspector's processing pipeline: ironic-inspector's
// processing hooks, with their names and semantics, as pure functions of
// the introspection data and the node.
//
// A hook never calls the bare metal API. BeforeProcessing hooks work on the
// Data alone; BeforeUpdate hooks also get the Node, a snapshot of the bare
// metal node and its ports on which they plan their changes (property
// patches, port creations, patches and deletions, traits). The caller
// applies the resulting Changes through the API, in the order documented on
// Changes.
package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Hook is one processing hook.
type Hook interface {
	// Name is the hook's upstream entry point name, e.g. "scheduler".
	Name() string
	// BeforeProcessing runs on the data as the ramdisk sent it, before the
	// node is looked up. It may add keys to data.
	BeforeProcessing(ctx context.Context, data *Data) error
	// BeforeUpdate runs once the node is known and plans changes to it.
	BeforeUpdate(ctx context.Context, data *Data, node *Node) error
}

// Upstream processing hooks defaults.
var (
	// UpstreamDefault is ironic-inspector's [processing]default_processing_hooks.
	UpstreamDefault = []string{"ramdisk_error", "root_disk_selection", "scheduler", "validate_interfaces", "capabilities", "pci_devices"}
	// Default is ferro's: upstream's plus LLDP processing and
	// local_link_connection, which network-managed inspection needs.
	Default = append(append([]string(nil), UpstreamDefault...), "lldp_basic", "local_link_connection")
)

// Values of Config.AddPorts and Config.KeepPorts.
const (
	AddPortsPXE      = "pxe"
	AddPortsActive   = "active"
	AddPortsAll      = "all"
	AddPortsDisabled = "disabled"

	KeepPortsAll     = "all"
	KeepPortsPresent = "present"
	KeepPortsAdded   = "added"
)

// Config carries the options of the hooks, named after ironic-inspector's
// configuration. The zero Config is not the default; start from
// DefaultConfig.
type Config struct {
	// [processing]
	AddPorts          string // pxe (default), active, all or disabled
	KeepPorts         string // all (default), present or added
	UpdatePXEEnabled  bool   // default true
	OverwriteExisting bool   // default true
	// DiskPartitioningSpacing subtracts 1 GiB from local_gb for the
	// partition table (default true).
	DiskPartitioningSpacing bool
	// SkipBlockDevices names devices ("/dev/sdb") never chosen by root
	// device hints, on top of the node's properties.skip_block_devices.
	SkipBlockDevices []string

	// [capabilities]
	BootMode bool // store boot_mode (default false)
	// CPUFlags maps CPU flags to capabilities, as "flag:capability"
	// entries, in order. Default: DefaultCPUFlags.
	CPUFlags []string

	// [pci_devices]alias: JSON objects {"vendor_id", "product_id", "name"}.
	PCIAliases []string

	// [extra_hardware]strict: refuse extra data with records that are not
	// four items long, and drop it.
	ExtraHardwareStrict bool

	// Logger receives what upstream logs as warnings (skipped interfaces,
	// malformed TLVs…). Nil discards.
	Logger *slog.Logger
}

// DefaultCPUFlags is [capabilities]cpu_flags' default.
var DefaultCPUFlags = []string{"vmx:cpu_vt", "svm:cpu_vt", "aes:cpu_aes", "pse:cpu_hugepages", "pdpe1gb:cpu_hugepages_1g", "smx:cpu_txt"}

// DefaultConfig returns upstream's defaults.
func DefaultConfig() Config {
	return Config{
		AddPorts:                AddPortsPXE,
		KeepPorts:               KeepPortsAll,
		UpdatePXEEnabled:        true,
		OverwriteExisting:       true,
		DiskPartitioningSpacing: true,
		CPUFlags:                DefaultCPUFlags,
	}
}

// builders maps each hook name to its constructor.
var builders = map[string]func(*settings) (Hook, error){
	"ramdisk_error":         func(*settings) (Hook, error) { return ramdiskError{}, nil },
	"root_disk_selection":   func(s *settings) (Hook, error) { return rootDiskSelection{settings: s}, nil },
	"scheduler":             func(s *settings) (Hook, error) { return scheduler{settings: s}, nil },
	"validate_interfaces":   newValidateInterfaces,
	"capabilities":          func(s *settings) (Hook, error) { return capabilities{settings: s}, nil },
	"pci_devices":           func(s *settings) (Hook, error) { return pciDevices{settings: s}, nil },
	"extra_hardware":        func(s *settings) (Hook, error) { return extraHardware{settings: s}, nil },
	"lldp_basic":            func(s *settings) (Hook, error) { return lldpBasic{settings: s}, nil },
	"local_link_connection": func(s *settings) (Hook, error) { return localLinkConnection{settings: s}, nil },
}

// dependencies lists the hooks each hook needs enabled before it.
var dependencies = map[string][]string{
	"lldp_basic":            {"validate_interfaces"},
	"local_link_connection": {"validate_interfaces"},
}

// Names lists the hooks Build knows.
func Names() []string {
	return []string{"ramdisk_error", "root_disk_selection", "scheduler", "validate_interfaces",
		"capabilities", "pci_devices", "extra_hardware", "lldp_basic", "local_link_connection"}
}

// settings is Config, parsed once and shared by the hooks of one Build.
type settings struct {
	Config
	cpuFlags   [][2]string          // flag, capability
	pciAliases map[[2]string]string // vendor_id, product_id → name
	log        *slog.Logger
}

// Build returns the hooks named, in that order, configured by cfg. An
// unknown name, a hook whose dependencies are not enabled before it, or an
// invalid option is an error. The hooks keep no state between runs and are
// safe for concurrent use.
func Build(names []string, cfg Config) ([]Hook, error) {
	s, err := newSettings(cfg)
	if err != nil {
		return nil, err
	}
	var hooks []Hook
	enabled := map[string]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		build, ok := builders[name]
		if !ok {
			return nil, fmt.Errorf("unknown processing hook %q (known: %s)", name, strings.Join(Names(), ", "))
		}
		for _, dep := range dependencies[name] {
			if !enabled[dep] {
				return nil, fmt.Errorf("processing hook %s requires %s to be enabled before it", name, dep)
			}
		}
		h, err := build(s)
		if err != nil {
			return nil, fmt.Errorf("processing hook %s: %w", name, err)
		}
		hooks = append(hooks, h)
		enabled[name] = true
	}
	return hooks, nil
}

func newSettings(cfg Config) (*settings, error) {
	s := &settings{Config: cfg, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch cfg.AddPorts {
	case AddPortsPXE, AddPortsActive, AddPortsAll, AddPortsDisabled:
	default:
		return nil, fmt.Errorf("[processing]add_ports: %q is not one of pxe, active, all, disabled", cfg.AddPorts)
	}
	switch cfg.KeepPorts {
	case KeepPortsAll, KeepPortsPresent, KeepPortsAdded:
	default:
		return nil, fmt.Errorf("[processing]keep_ports: %q is not one of all, present, added", cfg.KeepPorts)
	}
	for _, e := range cfg.CPUFlags {
		flag, capability, ok := strings.Cut(strings.TrimSpace(e), ":")
		if !ok || flag == "" || capability == "" {
			return nil, fmt.Errorf("[capabilities]cpu_flags: %q is not flag:capability", e)
		}
		s.cpuFlags = append(s.cpuFlags, [2]string{flag, capability})
	}
	s.pciAliases = map[[2]string]string{}
	for _, e := range cfg.PCIAliases {
		var alias map[string]any
		if err := json.Unmarshal([]byte(e), &alias); err != nil {
			return nil, fmt.Errorf("[pci_devices]alias %q: %w", e, err)
		}
		vendor, _ := alias["vendor_id"].(string)
		product, _ := alias["product_id"].(string)
		name, _ := alias["name"].(string)
		if len(alias) != 3 || vendor == "" || product == "" || name == "" {
			return nil, fmt.Errorf("[pci_devices]alias %q: want exactly the string keys vendor_id, product_id and name", e)
		}
		s.pciAliases[[2]string{vendor, product}] = name
	}
	return s, nil
}

// Error is a hook's failure; upstream fails the introspection with it.
type Error struct {
	Hook string
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// RunBeforeProcessing runs every hook's BeforeProcessing, even after one
// fails, as upstream does so that the node can still be looked up and
// marked failed. The failures come back joined, each an *Error whose
// message is upstream's "Preprocessing hook <name>: <error>".
func RunBeforeProcessing(ctx context.Context, hooks []Hook, data *Data) error {
	var errs []error
	for _, h := range hooks {
		if err := h.BeforeProcessing(ctx, data); err != nil {
			errs = append(errs, &Error{Hook: h.Name(), Err: fmt.Errorf("Preprocessing hook %s: %w", h.Name(), err)})
		}
	}
	return errors.Join(errs...)
}

// RunBeforeUpdate runs the hooks' BeforeUpdate in order and stops at the
// first failure, which it returns as an *Error.
func RunBeforeUpdate(ctx context.Context, hooks []Hook, data *Data, node *Node) error {
	for _, h := range hooks {
		if err := h.BeforeUpdate(ctx, data, node); err != nil {
			return &Error{Hook: h.Name(), Err: err}
		}
	}
	return nil
}

// noBeforeProcessing and noBeforeUpdate fill in the half of Hook a hook does
// not use.
type noBeforeProcessing struct{}

func (noBeforeProcessing) BeforeProcessing(context.Context, *Data) error { return nil }

type noBeforeUpdate struct{}

func (noBeforeUpdate) BeforeUpdate(context.Context, *Data, *Node) error { return nil }
