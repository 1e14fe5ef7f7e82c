package conductor

import (
	"context"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
)

// cacheFirmware is Ironic's node_cache_firmware_components at the end of
// an inspection: the firmware interface, if it can read the hardware's
// components, refreshes the node's list (GET /v1/nodes/{node}/firmware).
// It never fails the inspection.
func (c *Conductor) cacheFirmware(ctx context.Context, t *driver.Task) {
	fr, ok := t.Driver.Others["firmware"].(driver.FirmwareReader)
	if !ok {
		return
	}
	read, err := fr.FirmwareComponents(ctx, t)
	if err != nil {
		t.Log.Warn("caching of firmware components failed", "error", err)
		return
	}
	t.Node.Firmware = mergeFirmware(t.Node.Firmware, read, c.now().UTC())
}

// mergeFirmware is Ironic's sync_firmware_components: a new component is
// created with its version; a known one whose version changed keeps its
// initial_version and records the new one as last_version_flashed; every
// component read is updated. Components not read are kept.
func mergeFirmware(cached, read []baremetal.FirmwareComponent, now time.Time) []baremetal.FirmwareComponent {
	out := append([]baremetal.FirmwareComponent(nil), cached...)
	for _, r := range read {
		i := -1
		for j := range out {
			if out[j].Component == r.Component {
				i = j
			}
		}
		if i < 0 {
			out = append(out, baremetal.FirmwareComponent{Component: r.Component, InitialVersion: r.CurrentVersion,
				CurrentVersion: r.CurrentVersion, Vendor: r.Vendor, Model: r.Model, SerialNumber: r.SerialNumber, CreatedAt: now})
			continue
		}
		c := &out[i]
		if c.CurrentVersion != r.CurrentVersion {
			c.LastVersionFlashed = r.CurrentVersion
			c.CurrentVersion = r.CurrentVersion
		}
		c.Vendor, c.Model, c.SerialNumber = r.Vendor, r.Model, r.SerialNumber
		c.UpdatedAt = &now
	}
	return out
}
