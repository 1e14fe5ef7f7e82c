package inspection

import (
	"context"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/lldp"
)

// maxLLDPInterfaces is Ironic's parse-lldp limit: an LLDPDU belongs to a
// physical interface, which bounds them.
const maxLLDPInterfaces = 64

// parseLLDP parses each interface's LLDP TLVs (lldp_raw, else the
// inventory's lldp) into plugin_data.parsed_lldp[name] (Ironic's
// parse-lldp), or into all_interfaces[name].lldp_processed
// (ironic-inspector's lldp_basic). Unlike upstream, a TLV that is not hex
// is skipped rather than failing the report.
func parseLLDP(_ context.Context, r *Run) error {
	ifaces := r.rep.Inventory.Interfaces
	ironic := r.p.set.Dialect == Ironic
	if ironic && len(ifaces) > maxLLDPInterfaces {
		r.p.log.Warn("Interface count exceeds maximum supported amount; truncating interfaces", "node", r.nodeUUID,
			"interfaces", len(ifaces), "max", maxLLDPInterfaces)
		ifaces = ifaces[:maxLLDPInterfaces]
	}
	var parsed map[string]any
	for _, iface := range ifaces {
		tlvs := interfaceTLVs(r, iface)
		if tlvs == nil {
			r.p.log.Warn("No LLDP Data found for interface", "node", r.nodeUUID, "interface", iface.Name)
			continue
		}
		p, warnings := lldp.Parse(tlvs)
		for _, w := range warnings {
			r.p.log.Warn("Skipping LLDP TLV", "node", r.nodeUUID, "interface", iface.Name, "problem", w)
		}
		if p.IsZero() {
			continue
		}
		if ironic {
			if parsed == nil {
				parsed, _ = r.data["parsed_lldp"].(map[string]any)
				if parsed == nil {
					parsed = map[string]any{}
					r.data["parsed_lldp"] = parsed
				}
			}
			parsed[iface.Name] = lldpProcessedValue(&p)
			continue
		}
		n := r.nicByName(iface.Name)
		if n == nil {
			r.p.log.Warn("LLDP data for an interface without a valid MAC, ignored", "node", r.nodeUUID, "interface", iface.Name)
			continue
		}
		n.lldp = &p
		n.entry["lldp_processed"] = lldpProcessedValue(&p)
	}
	return nil
}

// interfaceTLVs returns lldp_raw[name], else the interface's lldp, else
// nil, as upstream's `lldp_raw.get(name) or iface.get('lldp')`.
func interfaceTLVs(r *Run, iface inventory.Interface) []lldp.TLV {
	src := r.rep.LLDPRaw[iface.Name]
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

// localLinkConnection fills the ports' local_link_connection from LLDP:
// switch_id from a MAC chassis ID, port_id from the port ID and
// switch_info from the system name, never overwriting what the port has
// (local-link-connection; local_link_connection). Ironic reads the raw
// TLVs, ironic-inspector lldp_basic's lldp_processed first. Unlike
// Ironic, which patches whichever node's port has the MAC, only the
// node's own ports are changed.
func localLinkConnection(_ context.Context, r *Run) error {
	ironic := r.p.set.Dialect == Ironic
	for _, iface := range r.rep.Inventory.Interfaces {
		n := r.nicByName(iface.Name)
		if n == nil {
			continue
		}
		port, ok := r.node.Port(n.mac)
		if !ok {
			r.p.log.Debug("Skipping LLDP processing: no port", "node", r.nodeUUID, "mac", n.mac)
			continue
		}
		var values [3]string // switch_id, port_id, switch_info
		if n.lldp != nil && !ironic {
			values = r.fromProcessed(n.lldp)
		}
		if values == [3]string{} {
			tlvs := interfaceTLVs(r, iface)
			if tlvs == nil {
				r.p.log.Warn("No LLDP data found for interface", "node", r.nodeUUID, "interface", iface.Name)
				continue
			}
			var ok bool
			if values, ok = r.fromTLVs(iface.Name, tlvs, ironic); !ok {
				continue
			}
		}
		var ops []patchOp
		for i, item := range []string{"switch_id", "port_id", "switch_info"} {
			if _, set := port.LocalLinkConnection[item]; values[i] == "" || set {
				continue
			}
			ops = append(ops, patchOp{Op: "add", Path: "/local_link_connection/" + item, Value: values[i]})
		}
		if len(ops) == 0 {
			continue
		}
		if err := r.node.PatchPort(n.mac, ops...); err != nil {
			return err
		}
	}
	return nil
}

func (r *Run) fromProcessed(p *lldp.Processed) (v [3]string) {
	if p.ChassisID != nil && *p.ChassisID != "" {
		if _, ok := inventory.NormalizeMAC(*p.ChassisID); ok {
			v[0] = *p.ChassisID
		} else {
			r.p.log.Info("Skipping switch_id since it's not a MAC", "node", r.nodeUUID, "chassis_id", *p.ChassisID)
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

// fromTLVs reads the three values from raw TLVs; a later TLV wins. A
// malformed TLV makes Ironic give up on the interface (ok false);
// ironic-inspector skips it.
func (r *Run) fromTLVs(iface string, tlvs []lldp.TLV, ironic bool) (v [3]string, ok bool) {
	for _, t := range tlvs {
		if t.Type != lldp.TypeChassisID && t.Type != lldp.TypePortID && t.Type != lldp.TypeSystemName {
			continue
		}
		b, err := t.Bytes()
		if err != nil {
			r.p.log.Warn("TLV value is not in hexadecimal format", "node", r.nodeUUID, "interface", iface, "type", t.Type)
			if ironic {
				return v, false
			}
			continue
		}
		switch t.Type {
		case lldp.TypeChassisID:
			id, err := lldp.DecodeChassisID(b)
			if err != nil {
				r.p.log.Warn("TLV parse error for Chassis ID", "node", r.nodeUUID, "interface", iface, "error", err)
				if ironic {
					return v, false
				}
			} else if id.Subtype == lldp.ChassisMAC {
				v[0] = id.Value
			}
		case lldp.TypePortID:
			id, err := lldp.DecodePortID(b)
			if err != nil {
				r.p.log.Warn("TLV parse error for Port ID", "node", r.nodeUUID, "interface", iface, "error", err)
				if ironic {
					return v, false
				}
			} else if id.Value != "" {
				v[1] = id.Value
			}
		case lldp.TypeSystemName:
			if p, _ := lldp.Parse([]lldp.TLV{t}); p.SystemName != nil && *p.SystemName != "" {
				v[2] = *p.SystemName
			}
		}
	}
	return v, true
}
