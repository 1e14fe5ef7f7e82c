package inspection

import (
	"context"
	"fmt"
	"slices"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/pyjson"
	"github.com/ferrometal/ferro/internal/rootdevice"
)

// gib is units.Gi: sizes in GiB.
const gib = 1 << 30

// rootDevice is Ironic's root-device hook and ironic-inspector's
// root_disk_selection: the node's root device hints (minus
// properties.skip_block_devices) choose the root disk, else the ramdisk's
// root_disk stands, and local_gb = size // GiB, less 1 with
// [inspector]disk_partitioning_spacing, 0 without a disk. Ironic writes
// local_gb as an integer, the inspector as a string and only with
// overwrite_existing or when it is unset.
func rootDevice(_ context.Context, r *Run) error {
	if r.p.set.Dialect == Inspector {
		return rootDiskSelection(r)
	}
	props := r.node.Properties()
	if hints := props["root_device"]; pyjson.Truthy(hints) {
		disks, _ := r.inventory["disks"].([]any)
		devices := make([]map[string]any, 0, len(disks))
		for _, d := range disks {
			m, _ := d.(map[string]any)
			devices = append(devices, m)
		}
		skip, err := r.skipList(devices)
		if err != nil {
			return err
		}
		devices = slices.DeleteFunc(devices, func(d map[string]any) bool { return skip[pyjson.Str(d["name"])] })
		hintMap, _ := hints.(map[string]any)
		var found []int
		if hintMap == nil {
			err = fmt.Errorf("root device hints must be a dictionary, not %s", pyjson.Repr(hints))
		} else {
			found, err = rootdevice.Find(devices, hintMap, true)
		}
		if err != nil {
			return failuref("No disks could be found using root device hints %s for node %s because they failed to validate. Error: %v",
				pyjson.Str(hints), r.nodeUUID, err)
		}
		if len(found) == 0 {
			return failuref("No disks satisfied root device hints for node %s", r.nodeUUID)
		}
		r.data["root_disk"] = devices[found[0]]
	}
	var localGB int64
	if root, ok := r.data["root_disk"].(map[string]any); ok && len(root) > 0 {
		size, err := pyjson.Int(root["size"])
		if err != nil {
			return unexpectedf("TypeError", "root disk size %s: %v", pyjson.Repr(root["size"]), err)
		}
		localGB = floorDiv(size, gib)
		switch {
		case localGB == 0:
			r.p.log.Warn("The requested root disk is too small (smaller than 1 GiB) or its size cannot be detected", "node", r.nodeUUID, "disk", pyjson.Str(root["name"]))
		case r.p.set.DiskPartitioningSpacing:
			localGB--
		}
	} else {
		r.p.log.Info("No root device found, assuming a diskless node", "node", r.nodeUUID)
	}
	r.data["local_gb"] = number(localGB)
	return r.node.SetProperty("local_gb", localGB)
}

// floorDiv is Python's //.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// skipList returns the names of the disks matching any of the node's
// skip_block_devices hints, and for the inspector those of
// [processing]skip_block_devices.
func (r *Run) skipList(devices []map[string]any) (map[string]bool, error) {
	skip := map[string]bool{}
	for _, name := range r.p.set.SkipBlockDevices {
		skip[name] = true
	}
	list := r.node.Properties()["skip_block_devices"]
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
			r.p.log.Warn("Skipping devices by hint", "node", r.nodeUUID, "hint", pyjson.Repr(e), "devices", names)
		}
	}
	return skip, nil
}

// rootDiskSelection is ironic-inspector's RootDiskSelectionHook.
func rootDiskSelection(r *Run) error {
	if err := r.inspectorInventory(); err != nil {
		return err
	}
	inv, s := r.rep.Inventory, r.p.set
	props := r.node.Properties()
	r.rootDisk = r.rep.RootDisk
	if hints := props["root_device"]; pyjson.Truthy(hints) {
		if err := r.inspectorHints(inv, hints); err != nil {
			return err
		}
	}
	var localGB int64
	if root := r.rootDisk; root != nil {
		localGB = root.Size / gib
		if localGB == 0 {
			s.log.Warn("The requested root disk is too small (smaller than 1 GiB) or its size cannot be detected", "node", r.nodeUUID, "disk", root.Name)
		} else if s.DiskPartitioningSpacing {
			localGB--
		}
	} else {
		s.log.Info("No root device found, assuming a diskless node", "node", r.nodeUUID)
	}
	r.data["local_gb"] = number(localGB)
	if s.OverwriteExisting || !pyjson.Truthy(props["local_gb"]) {
		return r.node.SetProperty("local_gb", fmt.Sprint(localGB))
	}
	return nil
}

// inspectorHints chooses the root disk by hints; the skipped disks leave
// the inventory, as ironic-inspector drops them.
func (r *Run) inspectorHints(inv *inventory.Inventory, hints any) error {
	hintMap, ok := hints.(map[string]any)
	if !ok {
		return fmt.Errorf("No disks could be found using the root device hints %s because they failed to validate. Error: not an object", pyjson.Repr(hints))
	}
	devices := r.rawDisks(inv)
	skip, err := r.skipList(devices)
	if err != nil {
		return err
	}
	disks := inv.Disks
	if len(skip) > 0 {
		var kept []inventory.Disk
		var raw []any
		var keptDevices []map[string]any
		for i, disk := range disks {
			if !skip[disk.Name] {
				kept = append(kept, disk)
				raw = append(raw, devices[i])
				keptDevices = append(keptDevices, devices[i])
			}
		}
		disks, devices = kept, keptDevices
		r.inventory = cloneWith(r.inventory, "disks", raw)
	}
	found, err := rootdevice.Find(devices, hintMap, true)
	if err != nil {
		return fmt.Errorf("No disks could be found using the root device hints %s because they failed to validate. Error: %w", pyjson.Repr(hints), err)
	}
	if len(found) == 0 {
		return fmt.Errorf("No disks satisfied root device hints")
	}
	r.rootDisk = &disks[found[0]]
	r.data["root_disk"] = devices[found[0]]
	return nil
}

// rawDisks returns the disks as generic JSON, index for index with
// inv.Disks: from the report as sent, which keeps nulls and unknown
// fields, when it matches.
func (r *Run) rawDisks(inv *inventory.Inventory) []map[string]any {
	raw, _ := r.inventory["disks"].([]any)
	out := make([]map[string]any, len(inv.Disks))
	for i, disk := range inv.Disks {
		var m map[string]any
		if len(raw) == len(inv.Disks) {
			m, _ = raw[i].(map[string]any)
		}
		if m == nil {
			m, _ = jsonValue(disk).(map[string]any)
		}
		out[i] = m
	}
	return out
}

// cloneWith returns a copy of m with key set to v, leaving m alone.
func cloneWith(m map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, e := range m {
		out[k] = e
	}
	out[key] = v
	return out
}
