package fake

import "github.com/ferrometal/ferro/internal/driver"

// HardwareType is fake-hardware: the fake interfaces first, and every real
// one ferro has, so a lab can mix them (Ironic's fake-hardware supports
// them too).
var HardwareType = driver.HardwareType{
	Name: "fake-hardware",
	Supported: driver.SharedInterfaces(map[string][]string{
		"bios": {"fake", "no-bios"}, "boot": {"fake", "pxe", "ipxe", "redfish-virtual-media"},
		"console": {"fake", "no-console"}, "deploy": {"fake", "direct"}, "firmware": {"fake", "no-firmware"},
		"inspect": {"fake", "agent", "inspector", "no-inspect", "redfish"}, "management": {"fake", "ipmitool", "redfish"},
		"network": {"noop", "flat", "neutron"}, "power": {"fake", "ipmitool", "redfish"},
		"raid": {"fake", "no-raid", "agent"}, "rescue": {"fake", "no-rescue"}, "storage": {"fake", "noop"},
		"vendor": {"fake", "no-vendor"},
	}),
	// The fake interfaces read no driver_info; the properties list shows
	// what Ironic's fake vendor interface (FakeVendorB) describes.
	Interfaces: []string{"fake"},
	Properties: []driver.Property{
		{Name: "B1", Description: "B1 description. Required.", Kind: "vendor"},
		{Name: "B2", Description: "B2 description. Required.", Kind: "vendor"},
	},
}
