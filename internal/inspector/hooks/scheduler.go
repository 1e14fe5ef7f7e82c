package hooks

import (
	"context"
	"strconv"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// scheduler sets the properties the Nova scheduler needs, cpus, cpu_arch
// and memory_mb, as strings (upstream's SchedulerHook). It overwrites
// existing values only with [processing]overwrite_existing.
type scheduler struct {
	noBeforeProcessing
	*settings
}

func (scheduler) Name() string { return "scheduler" }

func (h scheduler) BeforeUpdate(_ context.Context, d *Data, node *Node) error {
	inv, err := d.inventory()
	if err != nil {
		return err
	}
	if inv.CPU != nil {
		d.CPUs, d.CPUArch = inv.CPU.Count, inv.CPU.Architecture
	} else {
		h.log.Warn("malformed or missing CPU information", "node", node.UUID())
	}
	if inv.Memory != nil {
		d.MemoryMB = inv.Memory.PhysicalMB
	} else {
		h.log.Warn("malformed or missing memory information; introspection requires physical memory size from dmidecode", "node", node.UUID())
	}

	props := node.Properties()
	for _, kv := range []struct {
		key   string
		value string
	}{
		{"cpus", nonZero(d.CPUs)},
		{"cpu_arch", d.CPUArch},
		{"memory_mb", nonZero(d.MemoryMB)},
	} {
		if kv.value == "" || !h.OverwriteExisting && pyjson.Truthy(props[kv.key]) {
			continue
		}
		if err := node.SetProperty(kv.key, kv.value); err != nil {
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
