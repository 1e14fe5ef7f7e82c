package hooks

import (
	"context"
	"slices"
)

// capabilities adds boot_mode (with [capabilities]boot_mode) and the
// capabilities of the CPU flags in [capabilities]cpu_flags, each "true", to
// properties.capabilities (upstream's CapabilitiesHook).
type capabilities struct {
	noBeforeProcessing
	*settings
}

func (capabilities) Name() string { return "capabilities" }

func (h capabilities) BeforeUpdate(_ context.Context, d *Data, node *Node) error {
	inv, err := d.inventory()
	if err != nil {
		return err
	}
	var caps []Capability
	if h.BootMode {
		if inv.Boot != nil && inv.Boot.CurrentBootMode != "" {
			caps = setCapability(caps, "boot_mode", inv.Boot.CurrentBootMode)
		} else {
			h.log.Warn("No boot mode information available", "node", node.UUID())
		}
	}
	if inv.CPU == nil || len(inv.CPU.Flags) == 0 {
		h.log.Warn("No CPU flags available, please update your introspection ramdisk", "node", node.UUID())
	} else {
		for _, m := range h.cpuFlags {
			if slices.Contains(inv.CPU.Flags, m[0]) {
				caps = setCapability(caps, m[1], "true")
			}
		}
	}
	if len(caps) == 0 {
		return nil
	}
	return node.UpdateCapabilities(caps...)
}
