package inspection

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// ramdiskError fails the report when the ramdisk reported an error
// (ramdisk-error; ramdisk_error). Storing its logs is the caller's.
func ramdiskError(_ context.Context, r *Run) error {
	if e := r.rep.Error; e != nil && *e != "" {
		return failuref("Ramdisk reported error: %s", *e)
	}
	return nil
}

// inspectorInventory is ironic-inspector's get_inventory check.
func (r *Run) inspectorInventory() error {
	inv := r.rep.Inventory
	if inv == nil {
		return errors.New("Hardware inventory is empty or missing")
	}
	if len(inv.Interfaces) == 0 {
		return errors.New("No network interfaces provided in the inventory")
	}
	return nil
}

// rawCPU returns the inventory's cpu as sent, and whether it is an object.
func (r *Run) rawField(name string) (any, map[string]any, bool) {
	v, present := r.inventory[name]
	m, ok := v.(map[string]any)
	return v, m, present && ok
}

// architecture sets properties.cpu_arch from the inventory (Ironic's
// architecture hook).
func architecture(_ context.Context, r *Run) error {
	cpu, m, ok := r.rawField("cpu")
	arch, found := m["architecture"]
	if !ok || !found {
		return invalidf("Inventory has malformed or missing CPU architecture information: %s for node %s.", pyjson.Str(cpu), r.nodeUUID)
	}
	r.p.log.Info("Discovered CPU architecture", "node", r.nodeUUID, "cpu_arch", arch)
	return r.node.SetProperty("cpu_arch", arch)
}

// cpus sets properties.cpus from the inventory's CPU count, an integer
// (Ironic's cpus hook); no count leaves it.
func cpus(_ context.Context, r *Run) error {
	cpu, present := r.inventory["cpu"]
	var count any = json0
	if present {
		m, ok := cpu.(map[string]any)
		if !ok {
			return unexpectedf("AttributeError", "%s has no attribute 'get'", pyjson.Repr(cpu))
		}
		if c, ok := m["count"]; ok {
			count = c
		}
	}
	n, err := pyjson.Int(count)
	if err != nil {
		return unexpectedf("ValueError", "%v", err)
	}
	if n == 0 {
		r.p.log.Warn("No CPU count available", "node", r.nodeUUID)
		return nil
	}
	return r.node.SetProperty("cpus", n)
}

var json0 any = int64(0)

// memory sets properties.memory_mb from the inventory's physical_mb
// (Ironic's memory hook).
func memory(_ context.Context, r *Run) error {
	mem, m, ok := r.rawField("memory")
	mb, found := m["physical_mb"]
	if !ok || !found {
		return invalidf("Inventory has missing memory information: %s for node %s.", pyjson.Str(mem), r.nodeUUID)
	}
	r.p.log.Info("Discovered memory", "node", r.nodeUUID, "memory_mb", mb)
	return r.node.SetProperty("memory_mb", mb)
}

// scheduler is ironic-inspector's scheduler hook: cpus, cpu_arch and
// memory_mb, as strings, set and added to the processed data, overwriting
// existing values only with [processing]overwrite_existing.
func scheduler(_ context.Context, r *Run) error {
	if err := r.inspectorInventory(); err != nil {
		return err
	}
	inv, s := r.rep.Inventory, r.p.set
	var count, mb int
	var arch string
	if inv.CPU != nil {
		count, arch = inv.CPU.Count, inv.CPU.Architecture
	} else {
		s.log.Warn("malformed or missing CPU information", "node", r.nodeUUID)
	}
	if inv.Memory != nil {
		mb = inv.Memory.PhysicalMB
	} else {
		s.log.Warn("malformed or missing memory information; introspection requires physical memory size from dmidecode", "node", r.nodeUUID)
	}
	if count != 0 {
		r.data["cpus"] = number(int64(count))
	}
	if arch != "" {
		r.data["cpu_arch"] = arch
	}
	if mb != 0 {
		r.data["memory_mb"] = number(int64(mb))
	}
	props := r.node.Properties()
	for _, kv := range []struct {
		key   string
		value string
	}{
		{"cpus", nonZero(count)},
		{"cpu_arch", arch},
		{"memory_mb", nonZero(mb)},
	} {
		if kv.value == "" || !s.OverwriteExisting && pyjson.Truthy(props[kv.key]) {
			continue
		}
		if err := r.node.SetProperty(kv.key, kv.value); err != nil {
			return err
		}
	}
	return nil
}

// nonZero formats n, or returns "" for 0, which upstream treats as missing.
func nonZero(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// number is an integer as JSON decoding gives it.
func number(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }
