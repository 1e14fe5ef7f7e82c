package inspection

import (
	"context"
	"slices"

	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/pyjson"
)

// updateCapabilities merges caps into properties.capabilities; a
// malformed capabilities string fails the hook as Ironic's ValueError.
func (r *Run) updateCapabilities(caps ...plan.Capability) error {
	if err := r.node.UpdateCapabilities(caps...); err != nil {
		if r.p.set.Dialect == Ironic {
			return unexpectedf("ValueError", "%v", err)
		}
		return err
	}
	return nil
}

// bootMode sets the boot_mode capability from the inventory (Ironic's
// boot-mode hook).
func bootMode(_ context.Context, r *Run) error {
	boot, present := r.inventory["boot"]
	m, ok := boot.(map[string]any)
	if present && !ok {
		return unexpectedf("AttributeError", "%s has no attribute 'get'", pyjson.Repr(boot))
	}
	mode, found := m["current_boot_mode"]
	if !found || mode == nil {
		r.p.log.Warn("No boot mode information available", "node", r.nodeUUID)
		return nil
	}
	r.p.log.Info("Boot mode", "node", r.nodeUUID, "boot_mode", mode)
	return r.updateCapabilities(plan.Capability{Name: "boot_mode", Value: mode})
}

// cpuCapabilities sets a capability "true" for each CPU flag of
// [inspector]cpu_capabilities the CPU has (Ironic's cpu-capabilities hook).
// Like Ironic it rewrites capabilities even when none matched.
func cpuCapabilities(_ context.Context, r *Run) error {
	cpu, present := r.inventory["cpu"]
	m, ok := cpu.(map[string]any)
	if present && !ok {
		return unexpectedf("AttributeError", "%s has no attribute 'get'", pyjson.Repr(cpu))
	}
	flags, _ := m["flags"].([]any)
	if !pyjson.Truthy(m["flags"]) {
		r.p.log.Warn("No CPU flags available", "node", r.nodeUUID)
		return nil
	}
	has := map[string]bool{}
	for _, f := range flags {
		if s, ok := f.(string); ok {
			has[s] = true
		}
	}
	var caps []plan.Capability
	for _, fc := range r.p.set.CPUCapabilities {
		if has[fc.Flag] {
			caps = setCapability(caps, fc.Capability, "true")
		}
	}
	r.p.log.Info("CPU capabilities", "node", r.nodeUUID, "capabilities", caps)
	return r.updateCapabilities(caps...)
}

// inspectorCapabilities is ironic-inspector's capabilities hook: boot_mode
// with [capabilities]boot_mode, and the CPU flags' capabilities.
func inspectorCapabilities(_ context.Context, r *Run) error {
	if err := r.inspectorInventory(); err != nil {
		return err
	}
	inv, s := r.rep.Inventory, r.p.set
	var caps []plan.Capability
	if s.BootMode {
		if inv.Boot != nil && inv.Boot.CurrentBootMode != "" {
			caps = setCapability(caps, "boot_mode", inv.Boot.CurrentBootMode)
		} else {
			s.log.Warn("No boot mode information available", "node", r.nodeUUID)
		}
	}
	if inv.CPU == nil || len(inv.CPU.Flags) == 0 {
		s.log.Warn("No CPU flags available, please update your introspection ramdisk", "node", r.nodeUUID)
	} else {
		for _, fc := range s.CPUCapabilities {
			if slices.Contains(inv.CPU.Flags, fc.Flag) {
				caps = setCapability(caps, fc.Capability, "true")
			}
		}
	}
	if len(caps) == 0 {
		return nil
	}
	return r.updateCapabilities(caps...)
}

// setCapability sets name in caps, keeping its position.
func setCapability(caps []plan.Capability, name string, value any) []plan.Capability {
	for i := range caps {
		if caps[i].Name == name {
			caps[i].Value = value
			return caps
		}
	}
	return append(caps, plan.Capability{Name: name, Value: value})
}

// pciDevices counts the PCI devices matching [inspector]pci_device_alias
// and stores each count as a capability named after the alias
// (pci-devices; pci_devices). Two pairs aliased to one name do not add
// up: the later count wins, as upstream.
func pciDevices(_ context.Context, r *Run) error {
	s := r.p.set
	if _, sent := r.raw["pci_devices"]; !sent || r.rep.PCIDevices == nil {
		if len(s.PCIDeviceAliases) > 0 {
			s.log.Warn("No information about PCI devices was received from the ramdisk", "node", r.nodeUUID)
		}
		return nil
	}
	var order [][2]string
	counts := map[[2]string]int{}
	for _, dev := range r.rep.PCIDevices {
		id := [2]string{dev.VendorID, dev.ProductID}
		if _, ok := s.pciAliases[id]; !ok {
			continue
		}
		if counts[id] == 0 {
			order = append(order, id)
		}
		counts[id]++
	}
	var caps []plan.Capability
	for _, id := range order {
		caps = setCapability(caps, s.pciAliases[id], counts[id])
	}
	if len(caps) == 0 {
		return nil
	}
	s.log.Info("Found PCI devices", "node", r.nodeUUID, "counts", caps)
	return r.updateCapabilities(caps...)
}
