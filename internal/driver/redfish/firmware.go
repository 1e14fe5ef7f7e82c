package redfish

import (
	"context"
	"fmt"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
)

// Firmware is the redfish firmware interface. Its components are Ironic's
// RedfishFirmware's: "bios" from the System's BiosVersion and "bmc" from
// its Manager's FirmwareVersion (with the Manager's Model); Validate only
// parses driver_info.
type Firmware struct{ o Options }

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

// FirmwareComponents reads the bios and bmc components from the BMC; none
// at all is Ironic's UnsupportedDriverExtension.
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
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: Cannot retrieve firmware for node %s: no supported components", driver.ErrUnsupported, t.Node.UUID)
	}
	return out, nil
}
