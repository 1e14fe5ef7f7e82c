package hooks

import "context"

// pciDevices counts the PCI devices matching a [pci_devices]alias and
// stores each count as a capability named after the alias (upstream's
// PciDevicesHook).
type pciDevices struct {
	noBeforeProcessing
	*settings
}

func (pciDevices) Name() string { return "pci_devices" }

func (h pciDevices) BeforeUpdate(_ context.Context, d *Data, node *Node) error {
	if d.Report.PCIDevices == nil {
		if len(h.pciAliases) > 0 {
			h.log.Warn("No PCI devices information was received from the ramdisk.", "node", node.UUID())
		}
		return nil
	}
	// Count per (vendor, product) in order of appearance; two pairs aliased
	// to one name do not add up, the later count wins, as upstream.
	var order [][2]string
	counts := map[[2]string]int{}
	for _, dev := range d.Report.PCIDevices {
		id := [2]string{dev.VendorID, dev.ProductID}
		if _, ok := h.pciAliases[id]; !ok {
			continue
		}
		if counts[id] == 0 {
			order = append(order, id)
		}
		counts[id]++
	}
	var caps []Capability
	for _, id := range order {
		caps = setCapability(caps, h.pciAliases[id], counts[id])
	}
	if len(caps) == 0 {
		return nil
	}
	h.log.Info("Found PCI devices", "node", node.UUID(), "counts", caps)
	return node.UpdateCapabilities(caps...)
}
