package hooks

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/pyjson"
	"github.com/ferrometal/ferro/internal/rootdevice"
)

// gib is units.Gi: local_gb counts whole GiB.
const gib = 1 << 30

// rootDiskSelection picks the root disk by the node's root device hints
// (properties.root_device, minus properties.skip_block_devices), or keeps
// the ramdisk's, and sets local_gb = size // GiB - 1, 0 without a disk
// (upstream's RootDiskSelectionHook).
type rootDiskSelection struct {
	noBeforeProcessing
	*settings
}

func (rootDiskSelection) Name() string { return "root_disk_selection" }

func (h rootDiskSelection) BeforeUpdate(_ context.Context, d *Data, node *Node) error {
	inv, err := d.inventory()
	if err != nil {
		return err
	}
	props := node.Properties()
	if hints := props["root_device"]; pyjson.Truthy(hints) {
		if err := h.applyHints(d, inv, node, hints); err != nil {
			return err
		}
	}

	var localGB int64
	if root := d.RootDisk; root != nil {
		localGB = root.Size / gib
		if localGB == 0 {
			h.log.Warn("The requested root disk is too small (smaller than 1 GiB) or its size cannot be detected", "node", node.UUID(), "disk", root.Name)
		} else if h.DiskPartitioningSpacing {
			localGB--
		}
	} else {
		h.log.Info("No root device found, assuming a diskless node", "node", node.UUID())
	}
	d.LocalGB = &localGB
	if h.OverwriteExisting || !pyjson.Truthy(props["local_gb"]) {
		return node.SetProperty("local_gb", strconv.FormatInt(localGB, 10))
	}
	return nil
}

func (h rootDiskSelection) applyHints(d *Data, inv *inventory.Inventory, node *Node, hints any) error {
	hintMap, ok := hints.(map[string]any)
	if !ok {
		return fmt.Errorf("No disks could be found using the root device hints %s because they failed to validate. Error: not an object", pyjson.Repr(hints))
	}
	devices := h.rawDisks(d, inv)

	skip, err := h.skipList(node, devices)
	if err != nil {
		return err
	}
	if len(skip) > 0 {
		var disks []inventory.Disk
		var raw []any
		var kept []map[string]any
		for i, disk := range inv.Disks {
			if !skip[disk.Name] {
				disks = append(disks, disk)
				raw = append(raw, devices[i])
				kept = append(kept, devices[i])
			}
		}
		inv.Disks, devices = disks, kept
		d.setRawDisks(raw)
	}

	found, err := rootdevice.Find(devices, hintMap, true)
	if err != nil {
		return fmt.Errorf("No disks could be found using the root device hints %s because they failed to validate. Error: %w", pyjson.Repr(hints), err)
	}
	if len(found) == 0 {
		return fmt.Errorf("No disks satisfied root device hints")
	}
	d.RootDisk = &inv.Disks[found[0]]
	d.rootDiskRaw = devices[found[0]]
	return nil
}

// rawDisks returns the disks as generic JSON, index for index with
// inv.Disks: from the raw payload, which keeps nulls and unknown fields,
// when it matches.
func (h rootDiskSelection) rawDisks(d *Data, inv *inventory.Inventory) []map[string]any {
	raw := d.rawDisks()
	out := make([]map[string]any, len(inv.Disks))
	for i, disk := range inv.Disks {
		var m map[string]any
		if len(raw) == len(inv.Disks) {
			m, _ = raw[i].(map[string]any)
		}
		if m == nil {
			m, _ = toJSONValue(disk).(map[string]any)
		}
		out[i] = m
	}
	return out
}

// skipList returns the names of the disks matching any of the node's
// skip_block_devices hints, plus [processing]skip_block_devices.
func (h rootDiskSelection) skipList(node *Node, devices []map[string]any) (map[string]bool, error) {
	skip := map[string]bool{}
	for _, name := range h.SkipBlockDevices {
		skip[name] = true
	}
	list := node.Properties()["skip_block_devices"]
	if !pyjson.Truthy(list) {
		return skip, nil
	}
	entries, ok := list.([]any)
	if !ok {
		return nil, fmt.Errorf("properties/skip_block_devices is not a list: %s", pyjson.Repr(list))
	}
	for _, e := range entries {
		hints, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("properties/skip_block_devices: %s is not an object of hints", pyjson.Repr(e))
		}
		found, err := rootdevice.Find(devices, hints, false)
		if err != nil {
			return nil, fmt.Errorf("properties/skip_block_devices: %w", err)
		}
		var names []string
		for _, i := range found {
			name := pyjson.Str(devices[i]["name"])
			if !skip[name] {
				names = append(names, name)
			}
			skip[name] = true
		}
		if len(names) > 0 {
			slices.Sort(names)
			h.log.Warn("Skipping devices by hint", "node", node.UUID(), "hint", pyjson.Repr(e), "devices", names)
		}
	}
	return skip, nil
}
