package hooks

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/ferrometal/ferro/internal/inventory"
)

// validateInterfaces builds all_interfaces from the inventory, selects the
// interfaces whose ports to create ([processing]add_ports), creates them,
// deletes the ports [processing]keep_ports does not keep and fixes
// pxe_enabled (upstream's ValidateInterfacesHook).
type validateInterfaces struct{ *settings }

func newValidateInterfaces(s *settings) (Hook, error) {
	if s.AddPorts == AddPortsDisabled && s.KeepPorts == KeepPortsAdded {
		return nil, errors.New("Configuration error: add_ports set to disabled and keep_ports set to added. Please change keep_ports to all.")
	}
	return validateInterfaces{s}, nil
}

func (validateInterfaces) Name() string { return "validate_interfaces" }

// pxeMAC normalises the BOOTIF the ramdisk reports: "01-aa-bb-…" (pxelinux
// form) becomes "aa:bb:…". Unlike upstream, a colon form is lower-cased
// too, so that it can match.
func pxeMAC(bootif string) string {
	if _, mac, ok := strings.Cut(bootif, "-"); ok {
		bootif = strings.ReplaceAll(mac, "-", ":")
	}
	return strings.ToLower(bootif)
}

func (h validateInterfaces) BeforeProcessing(_ context.Context, d *Data) error {
	inv, err := d.inventory()
	if err != nil {
		return err
	}
	d.IPMIAddress, d.IPMIv6Address = inv.BMCv4(), inv.BMCv6()
	pxe := pxeMAC(d.Report.BootInterface)

	all := h.allInterfaces(inv, pxe)
	if len(all) == 0 {
		return errors.New("No interfaces supplied by the ramdisk")
	}
	if pxe == "" && h.AddPorts == AddPortsPXE {
		h.log.Warn("No boot interface provided in the introspection data, will add all ports with IP addresses")
	}
	var selected []*Interface
	for _, iface := range all {
		switch {
		case iface.Name == "lo" || isLoopback(iface.IP):
			continue
		case h.AddPorts == AddPortsPXE && pxe != "" && !iface.PXE:
			continue
		case h.AddPorts != AddPortsAll && iface.IP == "":
			continue // a PXE interface without an address is skipped too, as upstream
		}
		selected = append(selected, iface)
	}
	if len(selected) == 0 {
		return fmt.Errorf("No suitable interfaces found in %s", describe(all))
	}
	d.AllInterfaces, d.Interfaces, d.MACs = all, selected, nil
	for _, iface := range selected {
		d.MACs = append(d.MACs, iface.MAC)
	}
	return nil
}

// allInterfaces returns the interfaces with a name and a valid MAC.
func (h validateInterfaces) allInterfaces(inv *inventory.Inventory, pxe string) []*Interface {
	var all []*Interface
	for _, iface := range inv.Interfaces {
		if iface.Name == "" {
			h.log.Error("Malformed interface record", "mac", iface.MACAddress)
			continue
		}
		if iface.MACAddress == "" {
			continue // no link information
		}
		mac, ok := inventory.NormalizeMAC(iface.MACAddress)
		if !ok {
			h.log.Warn("MAC for interface is not valid, skipping", "interface", iface.Name, "mac", iface.MACAddress)
			continue
		}
		ipv6, _, _ := strings.Cut(iface.IPv6Address, "%")
		ip := iface.IPv4Address
		if ip == "" {
			ip = ipv6
		}
		e := &Interface{Name: iface.Name, MAC: mac, IP: ip, ClientID: iface.ClientID, PXE: mac == pxe}
		if i := indexOf(all, iface.Name); i >= 0 {
			all[i] = e // a repeated name replaces the first, as in a dict
		} else {
			all = append(all, e)
		}
	}
	return all
}

func indexOf(ifaces []*Interface, name string) int {
	for i, iface := range ifaces {
		if iface.Name == name {
			return i
		}
	}
	return -1
}

func isLoopback(ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && a.IsLoopback()
}

func describe(ifaces []*Interface) string {
	parts := make([]string, len(ifaces))
	for i, iface := range ifaces {
		parts[i] = fmt.Sprintf("%s (mac %s, ip %q, pxe %t)", iface.Name, iface.MAC, iface.IP, iface.PXE)
	}
	return strings.Join(parts, ", ")
}

// activeStates are the provision states in which upstream leaves the ports
// alone.
var activeStates = map[string]bool{"active": true, "rescue": true}

func (h validateInterfaces) BeforeUpdate(_ context.Context, d *Data, node *Node) error {
	if h.AddPorts != AddPortsDisabled {
		var existing []string
		for _, iface := range d.Interfaces {
			var extra map[string]any
			if iface.ClientID != "" {
				extra = map[string]any{"client-id": iface.ClientID}
			}
			if !node.CreatePort(PortCreate{Address: iface.MAC, PXEEnabled: iface.PXE, Extra: extra}) {
				existing = append(existing, iface.MAC)
			}
		}
		if len(existing) > 0 {
			h.log.Warn("Did not create ports as they already exist", "node", node.UUID(), "macs", existing)
		}
	}

	expected := map[string]bool{}
	switch h.KeepPorts {
	case KeepPortsPresent:
		for _, iface := range d.AllInterfaces {
			expected[iface.MAC] = true
		}
	case KeepPortsAdded:
		for _, mac := range d.MACs {
			expected[mac] = true
		}
	}

	if activeStates[node.ProvisionState()] {
		return nil // an instance is deployed: not modifying or deleting its ports
	}
	if h.KeepPorts != KeepPortsAll {
		for _, p := range node.Ports() {
			if !expected[p.Address] {
				h.log.Info("Deleting port as its MAC is not in the expected MAC list", "node", node.UUID(), "port", p.UUID, "mac", p.Address)
				node.DeletePort(p.Address)
			}
		}
	}
	if h.OverwriteExisting && h.UpdatePXEEnabled {
		for _, iface := range d.Interfaces {
			p, ok := node.Port(iface.MAC)
			if !ok || p.PXEEnabled == iface.PXE {
				continue
			}
			h.log.Info("Fixing pxe_enabled to match introspected data", "node", node.UUID(), "mac", p.Address, "pxe_enabled", iface.PXE)
			if err := node.PatchPort(iface.MAC, PatchOp{Op: "replace", Path: "/pxe_enabled", Value: iface.PXE}); err != nil {
				return err
			}
		}
	}
	return nil
}
