package hooks

import (
	"context"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/lldp"
)

// localLinkConnection fills the ports' local_link_connection from LLDP:
// switch_id from a MAC chassis ID, port_id from the port ID and
// switch_info from the system name (upstream's
// GenericLocalLinkConnectionHook, as Ironic's newer hook: it reads
// lldp_processed, else lldp_raw, else the inventory's lldp, and never
// overwrites a value already on the port).
type localLinkConnection struct {
	noBeforeProcessing
	*settings
}

func (localLinkConnection) Name() string { return "local_link_connection" }

func (h localLinkConnection) BeforeUpdate(_ context.Context, d *Data, node *Node) error {
	inv, err := d.inventory()
	if err != nil {
		return err
	}
	for _, iface := range inv.Interfaces {
		ai := d.Interface(iface.Name)
		if ai == nil {
			continue
		}
		port, ok := node.Port(ai.MAC)
		if !ok {
			h.log.Debug("Skipping local link connection: no port", "node", node.UUID(), "mac", ai.MAC)
			continue
		}
		var values [3]string // switch_id, port_id, switch_info
		if p := ai.LLDPProcessed; p != nil {
			values = h.fromProcessed(node, p)
		}
		if values == [3]string{} {
			tlvs := interfaceTLVs(d, iface)
			if tlvs == nil {
				h.log.Warn("No LLDP data found for interface", "node", node.UUID(), "interface", iface.Name)
				continue
			}
			values = h.fromTLVs(node, iface.Name, tlvs)
		}
		var ops []PatchOp
		for i, item := range []string{"switch_id", "port_id", "switch_info"} {
			if _, set := port.LocalLinkConnection[item]; values[i] == "" || set {
				continue
			}
			ops = append(ops, PatchOp{Op: "add", Path: "/local_link_connection/" + item, Value: values[i]})
		}
		if len(ops) == 0 {
			continue
		}
		if err := node.PatchPort(ai.MAC, ops...); err != nil {
			return err
		}
	}
	return nil
}

func (h localLinkConnection) fromProcessed(node *Node, p *lldp.Processed) (v [3]string) {
	if p.ChassisID != nil && *p.ChassisID != "" {
		if _, ok := inventory.NormalizeMAC(*p.ChassisID); ok {
			v[0] = *p.ChassisID
		} else {
			h.log.Info("Skipping switch_id since it's not a MAC", "node", node.UUID(), "chassis_id", *p.ChassisID)
		}
	}
	if p.PortID != nil {
		v[1] = *p.PortID
	}
	if p.SystemName != nil {
		v[2] = *p.SystemName
	}
	return v
}

// fromTLVs reads the three values from raw TLVs; a later TLV wins, a
// malformed one is skipped.
func (h localLinkConnection) fromTLVs(node *Node, iface string, tlvs []lldp.TLV) (v [3]string) {
	for _, t := range tlvs {
		if t.Type != lldp.TypeChassisID && t.Type != lldp.TypePortID && t.Type != lldp.TypeSystemName {
			continue
		}
		b, err := t.Bytes()
		if err != nil {
			h.log.Warn("TLV value is not in hexadecimal format", "node", node.UUID(), "interface", iface, "type", t.Type)
			continue
		}
		switch t.Type {
		case lldp.TypeChassisID:
			id, err := lldp.DecodeChassisID(b)
			if err != nil {
				h.log.Warn("TLV parse error for Chassis ID", "node", node.UUID(), "interface", iface, "error", err)
			} else if id.Subtype == lldp.ChassisMAC {
				v[0] = id.Value
			}
		case lldp.TypePortID:
			id, err := lldp.DecodePortID(b)
			if err != nil {
				h.log.Warn("TLV parse error for Port ID", "node", node.UUID(), "interface", iface, "error", err)
			} else if id.Value != "" {
				v[1] = id.Value
			}
		case lldp.TypeSystemName:
			if p, _ := lldp.Parse([]lldp.TLV{t}); p.SystemName != nil && *p.SystemName != "" {
				v[2] = *p.SystemName
			}
		}
	}
	return v
}
