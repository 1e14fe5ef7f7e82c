package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/ferrometal/ferro/internal/config"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inspection/rules"
)

// pipelineOptions maps the configuration onto the processing pipeline of
// one entry point: the agent inspect interface's (Ironic: [inspector]hooks,
// the built-in rules) or the inspector's (ironic-inspector:
// [processing]processing_hooks). Both take the hooks' options from
// [inspector] (whose [processing] aliases config resolves).
func pipelineOptions(cfg *config.Config, d inspection.Dialect, log *slog.Logger) (inspection.Options, error) {
	o := inspection.DefaultOptions(d)
	i := cfg.Inspector
	if d == inspection.Inspector {
		o.Hooks = inspection.ExpandHooks(cfg.Processing.ProcessingHooks, cfg.Processing.DefaultProcessingHooks)
	} else {
		o.Hooks = inspection.ExpandHooks(i.Hooks, i.DefaultHooks)
	}
	o.AddPorts, o.KeepPorts, o.UpdatePXEEnabled = i.AddPorts, i.KeepPorts, i.UpdatePXEEnabled
	o.OverwriteExisting = cfg.Processing.OverwriteExisting
	o.SkipBlockDevices = cfg.Processing.SkipBlockDevices
	o.BootMode = cfg.Capabilities.BootMode
	o.DiskPartitioningSpacing = i.DiskPartitioningSpacing
	o.PCIDeviceAliases = i.PCIDeviceAlias
	o.ExtraHardwareStrict = i.ExtraHardwareStrict
	o.PhysicalNetworkCIDRMap = i.PhysicalNetworkCIDRMap
	o.MaskSecrets = cfg.InspectionRules.MaskSecrets
	o.Log = log
	o.CPUCapabilities = nil
	for _, e := range i.CPUCapabilities {
		flag, capability, ok := strings.Cut(strings.TrimSpace(e), ":")
		if !ok || flag == "" || capability == "" {
			return o, fmt.Errorf("[inspector]cpu_capabilities: %q is not flag:capability", e)
		}
		o.CPUCapabilities = append(o.CPUCapabilities, inspection.FlagCapability{Flag: flag, Capability: capability})
	}
	if i.KnownAccelerators != "" {
		b, err := os.ReadFile(i.KnownAccelerators)
		if err != nil {
			return o, fmt.Errorf("[inspector]known_accelerators: %w", err)
		}
		o.KnownAccelerators = b
	}
	if d == inspection.Ironic {
		builtIn, err := rules.LoadBuiltIn(cfg.InspectionRules.BuiltInRules)
		if err != nil {
			return o, fmt.Errorf("[inspection_rules]built_in_rules: %w", err)
		}
		o.BuiltInRules = builtIn
	}
	return o, nil
}

// agentPipeline builds the agent inspect interface's pipeline (Ironic
// dialect) with the stored inspection rules of /v1/inspection_rules.
func agentPipeline(cfg *config.Config, db inspection.RuleStore, log *slog.Logger) (*inspection.Pipeline, error) {
	o, err := pipelineOptions(cfg, inspection.Ironic, log)
	if err != nil {
		return nil, err
	}
	o.Rules = inspection.StoredRules{Store: db}
	p, err := inspection.New(o)
	if err != nil {
		return nil, fmt.Errorf("[inspector]hooks: %w", err)
	}
	return p, nil
}
