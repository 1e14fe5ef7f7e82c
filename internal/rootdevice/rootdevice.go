// Package rootdevice applies root device hints (a node's
// properties.root_device) to disks, as Ironic matches them (ironic-lib's
// parse_root_device_hints and find_devices_by_hints, whose copy
// ironic-inspector carries, over oslo.utils' specs_matcher). It is a leaf:
// the in-band root_disk_selection hook and out-of-band inspection share it.
package rootdevice

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/pyjson"
)

// Match applies a node's root device hints to disks as the
// root_disk_selection hook does and returns the index of the first match.
// Inspections that build an inventory themselves (out of band) use it, so
// the rule is the same as in band.
func Match(disks []inventory.Disk, hints map[string]any) (int, error) {
	devices := make([]map[string]any, len(disks))
	for i, d := range disks {
		devices[i] = jsonObject(d)
	}
	found, err := Find(devices, hints, true)
	if err != nil {
		return -1, fmt.Errorf("No disks could be found using the root device hints %s because they failed to validate. Error: %w", pyjson.Repr(hints), err)
	}
	if len(found) == 0 {
		return -1, fmt.Errorf("No disks satisfied root device hints")
	}
	return found[0], nil
}

// jsonObject is v as the agent's report carries it: generic JSON, numbers
// as json.Number.
func jsonObject(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out map[string]any
	if dec.Decode(&out) != nil {
		return nil
	}
	return out
}
