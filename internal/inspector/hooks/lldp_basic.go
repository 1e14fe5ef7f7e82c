package hooks

import (
	"context"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/lldp"
)

// lldpBasic parses each interface's LLDP TLVs (lldp_raw, else the
// inventory's lldp) into all_interfaces[name].lldp_processed (upstream's
// LLDPBasicProcessingHook). It changes nothing on the node.
type lldpBasic struct {
	noBeforeProcessing
	*settings
}

func (lldpBasic) Name() string { return "lldp_basic" }

func (h lldpBasic) BeforeUpdate(_ context.Context, d *Data, node *Node) error {
	inv, err := d.inventory()
	if err != nil {
		return err
	}
	for _, iface := range inv.Interfaces {
		tlvs := interfaceTLVs(d, iface)
		if tlvs == nil {
			h.log.Warn("No LLDP Data found for interface", "node", node.UUID(), "interface", iface.Name)
			continue
		}
		p, warnings := lldp.Parse(tlvs)
		for _, w := range warnings {
			h.log.Warn("Skipping LLDP TLV", "node", node.UUID(), "interface", iface.Name, "problem", w)
		}
		if p.IsZero() {
			continue
		}
		target := d.Interface(iface.Name)
		if target == nil {
			h.log.Warn("LLDP data for an interface without a valid MAC, ignored", "node", node.UUID(), "interface", iface.Name)
			continue
		}
		target.LLDPProcessed = &p
	}
	return nil
}

// interfaceTLVs returns lldp_raw[name], else the interface's lldp, else nil.
func interfaceTLVs(d *Data, iface inventory.Interface) []lldp.TLV {
	src := d.Report.LLDPRaw[iface.Name]
	if len(src) == 0 {
		src = iface.LLDP
	}
	if src == nil {
		return nil
	}
	tlvs := make([]lldp.TLV, len(src))
	for i, t := range src {
		tlvs[i] = lldp.TLV(t)
	}
	return tlvs
}
