package hooks

import (
	"fmt"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/pyjson"
)

// RootDevice applies a node's root device hints (properties.root_device)
// to disks as the root_disk_selection hook does and returns the index of
// the first match. Inspections that build an inventory themselves (out of
// band) use it, so the rule is the same as in band.
func RootDevice(disks []inventory.Disk, hints map[string]any) (int, error) {
	devices := make([]map[string]any, len(disks))
	for i, d := range disks {
		devices[i], _ = toJSONValue(d).(map[string]any)
	}
	found, err := findDevices(devices, hints, true)
	if err != nil {
		return -1, fmt.Errorf("No disks could be found using the root device hints %s because they failed to validate. Error: %w", pyjson.Repr(hints), err)
	}
	if len(found) == 0 {
		return -1, fmt.Errorf("No disks satisfied root device hints")
	}
	return found[0], nil
}
