package redfish

import (
	"context"
	"fmt"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
)

// Firmware is the redfish firmware interface. Its components are Ironic's
// RedfishFirmware's: "bios" from the System's BiosVersion, "bmc" from its
// Manager's FirmwareVersion (with the Manager's Model), and "nic:<serial>"
// (the adapter's Id when it has no SerialNumber) for each controller of a
// NetworkAdapter of the System's Chassis that gives a
// FirmwarePackageVersion, with the adapter's Manufacturer, Model and
// SerialNumber (API 1.114); Validate only parses driver_info.
type Firmware struct{ o Options }

// NICComponentPrefix starts the name of a NIC's firmware component
// (Ironic's redfish_utils.NIC_COMPONENT_PREFIX).
const NICComponentPrefix = "nic:"

// NewFirmware returns the interface.
func NewFirmware(o Options) *Firmware {
	o.defaults()
	return &Firmware{o: o}
}

// Validate checks driver_info; it does not reach the BMC.
func (f *Firmware) Validate(_ context.Context, t *driver.Task) error {
	_, err := Endpoint(t, f.o.AuthType)
	return err
}

// FirmwareComponents reads the bios, bmc and NIC components from the BMC;
// none at all is Ironic's UnsupportedDriverExtension.
func (f *Firmware) FirmwareComponents(ctx context.Context, t *driver.Task) ([]baremetal.FirmwareComponent, error) {
	ep, err := Endpoint(t, f.o.AuthType)
	if err != nil {
		return nil, err
	}
	fw, err := f.o.Client.FirmwareVersions(ctx, ep)
	if err != nil {
		return nil, err
	}
	var out []baremetal.FirmwareComponent
	if fw.BIOSVersion != "" {
		out = append(out, baremetal.FirmwareComponent{Component: "bios", CurrentVersion: fw.BIOSVersion})
	}
	if fw.BMCVersion != "" {
		out = append(out, baremetal.FirmwareComponent{Component: "bmc", CurrentVersion: fw.BMCVersion, Model: fw.BMCModel})
	}
	if fw.NICError != nil {
		// Some BMCs (HPE's) refuse NetworkAdapters until the OS is up.
		logger(t).WarnContext(ctx, "Unable to access NetworkAdapters", "error", fw.NICError)
	}
	for _, nic := range fw.NICs {
		id := nic.SerialNumber
		if id == "" {
			id = nic.AdapterID
		}
		out = append(out, baremetal.FirmwareComponent{Component: NICComponentPrefix + id, CurrentVersion: nic.Version,
			Vendor: nic.Manufacturer, Model: nic.Model, SerialNumber: nic.SerialNumber})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: Cannot retrieve firmware for node %s: no supported components", driver.ErrUnsupported, t.Node.UUID)
	}
	return out, nil
}
