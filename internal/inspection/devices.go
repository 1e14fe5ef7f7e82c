package inspection

import (
	"context"
	_ "embed"
	"errors"
	"net/netip"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/pyjson"
)

type patchOp = plan.PatchOp

//go:embed known_accelerators.yaml
var knownAccelerators []byte

// loadAccelerators reads a known-accelerators file (nil: ferro's list) and
// checks it as Ironic's AcceleratorsHook does when it loads.
func loadAccelerators(b []byte) ([]map[string]any, error) {
	if b == nil {
		b = knownAccelerators
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	m, _ := jsonValue(doc).(map[string]any)
	devs, present := m["pci_devices"]
	if !present {
		return nil, errors.New("Could not find pci_devices in the configuration data.")
	}
	list, ok := devs.([]any)
	if !ok {
		return nil, errors.New("pci_devices in the configuration file should contain a list of devices.")
	}
	out := make([]map[string]any, 0, len(list))
	for _, d := range list {
		dev, _ := d.(map[string]any)
		if !pyjson.Truthy(dev["vendor_id"]) || !pyjson.Truthy(dev["device_id"]) {
			return nil, errors.New("One of the PCI devices in the configuration file is missing vendor_id or device_id.")
		}
		out = append(out, dev)
	}
	return out, nil
}

// accelerators sets properties.accelerators to the known accelerators
// among the PCI devices, each with its pci_address (accelerators). Ironic
// writes the list even when it is empty; ironic-inspector only when not.
func accelerators(_ context.Context, r *Run) error {
	if len(r.rep.PCIDevices) == 0 {
		r.p.log.Warn("Unable to process accelerator devices because no PCI device information was received from the ramdisk", "node", r.nodeUUID)
		return nil
	}
	found := []any{}
	for _, dev := range r.rep.PCIDevices {
		for _, known := range r.p.set.known {
			if pyjson.Equal(known["vendor_id"], dev.VendorID) && pyjson.Equal(known["device_id"], dev.ProductID) {
				acc := make(map[string]any, len(known)+1)
				for k, v := range known {
					acc[k] = v
				}
				acc["pci_address"] = dev.Bus
				found = append(found, acc)
				break
			}
		}
	}
	if len(found) == 0 {
		r.p.log.Info("No known accelerator devices found", "node", r.nodeUUID)
		if r.p.set.Dialect == Inspector {
			return nil
		}
	} else {
		r.p.log.Info("Found accelerator devices", "node", r.nodeUUID, "accelerators", len(found))
	}
	return r.node.SetProperty("accelerators", found)
}

// physicalNetwork sets the ports' physical_network from the first
// [inspector]physical_network_cidr_map network holding one of the
// interface's addresses (physical-network; physnet_cidr_map). As Ironic,
// an IPv6 address with a scope does not parse, and so does not count.
func physicalNetwork(_ context.Context, r *Run) error {
	rawIfaces, _ := r.inventory["interfaces"].([]any)
	for i, iface := range r.rep.Inventory.Interfaces {
		if r.nicByName(iface.Name) == nil {
			continue
		}
		port, ok := r.node.Port(iface.MACAddress)
		if !ok {
			r.p.log.Debug("Skipping physical network processing: no port", "node", r.nodeUUID, "mac", iface.MACAddress)
			continue
		}
		var raw map[string]any
		if i < len(rawIfaces) {
			raw, _ = rawIfaces[i].(map[string]any)
		}
		physnet, found := r.physnet(raw)
		if !found {
			continue
		}
		if fields, _ := r.node.PortFieldsOf(port.Address); pyjson.Equal(fields["physical_network"], physnet) {
			continue
		}
		if err := r.node.PatchPort(port.Address, patchOp{Op: "add", Path: "/physical_network", Value: physnet}); err != nil {
			return err
		}
	}
	return nil
}

func (r *Run) physnet(iface map[string]any) (string, bool) {
	for _, key := range []string{"ipv4_address", "ipv6_address"} {
		s, _ := iface[key].(string)
		ip, err := netip.ParseAddr(s)
		if err != nil || ip.Zone() != "" {
			continue
		}
		for _, c := range r.p.set.cidrMap {
			if c.prefix.Contains(ip) {
				return c.physnet, true
			}
		}
	}
	return "", false
}

// raidDevice learns the root device after RAID creation, in two
// inspections: when the node has no root device hint and exactly one disk
// serial is new, properties.root_device becomes {"serial": it}. Ironic
// compares with the inventory stored by the previous inspection;
// ironic-inspector keeps the serials in extra.block_devices between the
// two.
func raidDevice(_ context.Context, r *Run) error {
	var current []string
	for _, d := range r.rep.Inventory.Disks {
		if d.Serial != "" {
			current = append(current, d.Serial)
		}
	}
	props := r.node.Properties()
	if r.p.set.Dialect == Inspector {
		return inspectorRAIDDevice(r, current)
	}
	if _, known := props["root_device"]; known {
		r.p.log.Info("Root device is already known", "node", r.nodeUUID)
		return nil
	}
	if len(current) == 0 {
		r.p.log.Warn("No block device information was received from the ramdisk", "node", r.nodeUUID)
		return nil
	}
	if r.previous == nil || r.previous.Inventory == nil {
		r.p.log.Debug("No previous inventory; raid device hook exiting", "node", r.nodeUUID)
		return nil
	}
	return r.newRootDevice(current, serials(r.previous.Inventory))
}

func (r *Run) newRootDevice(current, previous []string) error {
	var fresh []string
	for _, s := range current {
		if !slices.Contains(previous, s) {
			fresh = append(fresh, s)
		}
	}
	switch len(fresh) {
	case 0:
		r.p.log.Warn("No new devices were found", "node", r.nodeUUID)
		return nil
	case 1:
		r.p.log.Info(`"root_device" property set`, "node", r.nodeUUID, "serial", fresh[0])
		return r.node.SetProperty("root_device", map[string]any{"serial": fresh[0]})
	}
	r.p.log.Warn("Root device cannot be identified because multiple new devices were found", "node", r.nodeUUID)
	return nil
}

func inspectorRAIDDevice(r *Run, current []string) error {
	if len(current) == 0 {
		r.p.log.Warn("No block device was received from ramdisk", "node", r.nodeUUID)
		return nil
	}
	if _, known := r.node.Properties()["root_device"]; known {
		r.p.log.Info("Root device is already known for the node", "node", r.nodeUUID)
		return nil
	}
	saved, ok := r.node.Get([]string{"extra", "block_devices"})
	if !ok {
		list := make([]any, len(current))
		for i, s := range current {
			list[i] = s
		}
		return r.node.Patch(patchOp{Op: "add", Path: "/extra/block_devices", Value: map[string]any{"serials": list}})
	}
	m, _ := saved.(map[string]any)
	var previous []string
	for _, s := range asList(m["serials"]) {
		previous = append(previous, pyjson.Str(s))
	}
	before := len(r.node.Changes().NodePatch)
	if err := r.newRootDevice(current, previous); err != nil || len(r.node.Changes().NodePatch) == before {
		return err
	}
	return r.node.Patch(patchOp{Op: "remove", Path: "/extra/block_devices"})
}

// serials are the disk serials of a stored inventory.
func serials(inv map[string]any) []string {
	var out []string
	for _, d := range asList(inv["disks"]) {
		disk, _ := d.(map[string]any)
		if s, ok := disk["serial"].(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// raidDevicePreprocess is ironic-inspector's raid_device before_processing:
// a fake local_gb when the data has none, until a later run corrects it.
func raidDevicePreprocess(_ context.Context, r *Run) error {
	if r.p.set.Dialect == Inspector && !pyjson.Truthy(r.data["local_gb"]) {
		r.data["local_gb"] = number(1)
	}
	return nil
}
