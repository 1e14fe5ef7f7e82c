package inspection

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"strings"

	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/inventory"
)

// validateInterfaces is the preprocess step of validate-interfaces
// (ironic-inspector: validate_interfaces): it lists the interfaces with a
// valid MAC (all_interfaces), chooses those [inspector]add_ports takes
// (valid_interfaces; the inspector's "interfaces") and their MACs (macs).
func validateInterfaces(_ context.Context, r *Run) error {
	inv := r.rep.Inventory
	s := r.p.set
	ironic := s.Dialect == Ironic
	if !ironic {
		if err := r.inspectorInventory(); err != nil {
			return err
		}
	}
	// Ironic reads inventory.boot.pxe_interface, ironic-inspector the
	// report's boot_interface; IPA sends both, the same.
	if ironic {
		if inv.Boot != nil {
			r.pxeMAC = pxeMAC(inv.Boot.PXEInterface)
		}
	} else {
		r.pxeMAC = pxeMAC(r.rep.BootInterface)
	}

	all := r.allInterfaces()
	if len(all) == 0 {
		if ironic {
			return invalidf("no valid network interfaces")
		}
		return fmt.Errorf("No interfaces supplied by the ramdisk")
	}
	if r.pxeMAC == "" && s.AddPorts == AddPortsPXE {
		s.log.Warn("No boot interface provided in the inventory, will add all ports with IP addresses", "node", r.nodeUUID)
	}
	var valid []*nic
	for _, n := range all {
		switch {
		case n.name == "lo" || isLoopback(n.ip):
			continue
		case s.AddPorts == AddPortsPXE && r.pxeMAC != "" && !n.pxe:
			continue
		case ironic && s.AddPorts == AddPortsActive && n.ip == "":
			continue
		case !ironic && s.AddPorts != AddPortsAll && n.ip == "":
			continue // a PXE interface without an address too, as ironic-inspector
		}
		valid = append(valid, n)
	}
	if len(valid) == 0 {
		if ironic {
			return invalidf("no network interfaces match the configuration (add_ports set to %q)", s.AddPorts)
		}
		return fmt.Errorf("No suitable interfaces found in %s", describe(all))
	}
	r.all, r.valid = all, valid

	allData := make(map[string]any, len(all))
	for _, n := range all {
		allData[n.name] = n.entry
	}
	validData := make(map[string]any, len(valid))
	macs := make([]any, len(valid))
	for i, n := range valid {
		if ironic {
			validData[n.name] = maps.Clone(n.entry) // Ironic copies each entry
			macs[i] = n.sentMAC
		} else {
			validData[n.name] = n.entry // the inspector shares them
			macs[i] = n.mac
		}
	}
	r.data["all_interfaces"] = allData
	r.data["macs"] = macs
	if ironic {
		r.data["valid_interfaces"] = validData
	} else {
		r.data["interfaces"] = validData
		r.data["ipmi_address"] = nilIfEmpty(inv.BMCv4())
		r.data["ipmi_v6address"] = nilIfEmpty(inv.BMCv6())
	}
	return nil
}

// allInterfaces returns the interfaces with a name and a valid MAC, each
// with its plugin_data entry: Ironic's is the inventory's interface with
// pxe_enabled and the IPv6 address without its scope, the inspector's
// {ip, mac, client_id, pxe}. A repeated name replaces the first, as in a
// dict.
func (r *Run) allInterfaces() []*nic {
	rawIfaces, _ := r.inventory["interfaces"].([]any)
	var all []*nic
	for i, iface := range r.rep.Inventory.Interfaces {
		if iface.Name == "" {
			r.p.log.Error("Malformed interface record", "node", r.nodeUUID, "mac", iface.MACAddress)
			continue
		}
		if iface.MACAddress == "" {
			continue // no link information
		}
		mac, ok := inventory.NormalizeMAC(iface.MACAddress)
		if !ok {
			r.p.log.Warn("MAC address of interface is not valid, skipping", "node", r.nodeUUID, "interface", iface.Name, "mac", iface.MACAddress)
			continue
		}
		ipv6, _, _ := strings.Cut(iface.IPv6Address, "%")
		ip := iface.IPv4Address
		if ip == "" {
			ip = ipv6
		}
		n := &nic{name: iface.Name, mac: mac, sentMAC: iface.MACAddress, ip: ip, clientID: iface.ClientID, pxe: mac == r.pxeMAC}
		if r.p.opts.Dialect == Ironic {
			var raw map[string]any
			if i < len(rawIfaces) {
				raw, _ = rawIfaces[i].(map[string]any)
			}
			n.entry = maps.Clone(raw)
			if n.entry == nil {
				n.entry = map[string]any{}
			}
			n.entry["pxe_enabled"] = n.pxe
			if v6, ok := n.entry["ipv6_address"].(string); ok {
				n.entry["ipv6_address"], _, _ = strings.Cut(v6, "%")
			}
		} else {
			n.entry = map[string]any{"ip": nilIfEmpty(ip), "mac": mac, "client_id": nilIfEmpty(iface.ClientID), "pxe": n.pxe}
		}
		if j := indexOf(all, iface.Name); j >= 0 {
			all[j] = n
		} else {
			all = append(all, n)
		}
	}
	return all
}

// pxeMAC normalises the BOOTIF the ramdisk reports: "01-aa-bb-…" (pxelinux
// form) becomes "aa:bb:…", lower case.
func pxeMAC(bootif string) string {
	if _, mac, ok := strings.Cut(bootif, "-"); ok {
		bootif = strings.ReplaceAll(mac, "-", ":")
	}
	return strings.ToLower(bootif)
}

func indexOf(nics []*nic, name string) int {
	for i, n := range nics {
		if n.name == name {
			return i
		}
	}
	return -1
}

func (r *Run) nicByName(name string) *nic {
	if i := indexOf(r.all, name); i >= 0 {
		return r.all[i]
	}
	return nil
}

func isLoopback(ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && a.IsLoopback()
}

func describe(nics []*nic) string {
	parts := make([]string, len(nics))
	for i, n := range nics {
		parts[i] = fmt.Sprintf("%s (mac %s, ip %q, pxe %t)", n.name, n.mac, n.ip, n.pxe)
	}
	return strings.Join(parts, ", ")
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ports is Ironic's ports hook, and the before_update of
// ironic-inspector's validate_interfaces: it creates a port for each valid
// interface ([inspector]add_ports), deletes the ports keep_ports does not
// keep, and sets pxe_enabled from the inventory (update_pxe_enabled).
func ports(_ context.Context, r *Run) error {
	s := r.p.set
	node := r.node
	if s.AddPorts != AddPortsDisabled {
		var existing []string
		for _, n := range r.valid {
			var extra map[string]any
			if n.clientID != "" {
				extra = map[string]any{"client-id": n.clientID}
			}
			if node.CreatePort(plan.PortCreate{Address: n.mac, PXEEnabled: n.pxe, Extra: extra}) {
				s.log.Info("Port created for MAC address", "node", r.nodeUUID, "mac", n.mac, "pxe", n.pxe)
			} else {
				existing = append(existing, n.mac)
			}
		}
		if len(existing) > 0 {
			s.log.Info("Ports already exist for MAC addresses", "node", r.nodeUUID, "macs", existing)
		}
	}
	expected := map[string]bool{}
	switch s.KeepPorts {
	case KeepPortsPresent:
		for _, n := range r.all {
			expected[n.mac] = true
		}
	case KeepPortsAdded:
		for _, n := range r.valid {
			expected[n.mac] = true
		}
	}
	if s.Dialect == Inspector {
		return inspectorUpdatePorts(r, expected)
	}
	pxe, clientIDs := map[string]bool{}, map[string]string{}
	for _, n := range r.all {
		pxe[n.mac] = n.pxe
		clientIDs[n.mac] = n.clientID
	}
	for _, p := range node.Ports() {
		// An empty expected set deletes nothing, as upstream's falsy set.
		if len(expected) > 0 && !expected[p.Address] {
			s.log.Info("Deleting port as its MAC is not in the expected MAC list", "node", r.nodeUUID, "port", p.UUID, "mac", p.Address)
			node.DeletePort(p.Address)
			continue
		}
		if s.UpdatePXEEnabled && p.PXEEnabled != pxe[p.Address] {
			s.log.Debug("Changing pxe_enabled to match the inventory", "node", r.nodeUUID, "port", p.Address, "pxe_enabled", pxe[p.Address])
			if err := node.PatchPort(p.Address, plan.PatchOp{Op: "replace", Path: "/pxe_enabled", Value: pxe[p.Address]}); err != nil {
				return err
			}
		}
		if id := clientIDs[p.Address]; id != "" && id != p.Extra["client-id"] {
			if err := node.PatchPort(p.Address, plan.PatchOp{Op: "add", Path: "/extra/client-id", Value: id}); err != nil {
				return err
			}
		}
	}
	return nil
}

// activeStates are the provision states in which ironic-inspector leaves
// the ports alone.
var activeStates = map[string]bool{"active": true, "rescue": true}

// inspectorUpdatePorts is the rest of ironic-inspector's
// validate_interfaces: no port changes on a deployed node, and
// pxe_enabled fixed only on the selected interfaces' ports, with
// overwrite_existing.
func inspectorUpdatePorts(r *Run, expected map[string]bool) error {
	s, node := r.p.set, r.node
	if activeStates[node.ProvisionState()] {
		return nil
	}
	if s.KeepPorts != KeepPortsAll {
		for _, p := range node.Ports() {
			if !expected[p.Address] {
				s.log.Info("Deleting port as its MAC is not in the expected MAC list", "node", r.nodeUUID, "port", p.UUID, "mac", p.Address)
				node.DeletePort(p.Address)
			}
		}
	}
	if s.OverwriteExisting && s.UpdatePXEEnabled {
		for _, n := range r.valid {
			p, ok := node.Port(n.mac)
			if !ok || p.PXEEnabled == n.pxe {
				continue
			}
			s.log.Info("Fixing pxe_enabled to match introspected data", "node", r.nodeUUID, "mac", p.Address, "pxe_enabled", n.pxe)
			if err := node.PatchPort(n.mac, plan.PatchOp{Op: "replace", Path: "/pxe_enabled", Value: n.pxe}); err != nil {
				return err
			}
		}
	}
	return nil
}
