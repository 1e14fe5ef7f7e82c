package redfish

import (
	"context"

	"github.com/ferrometal/ferro/internal/driver"
)

// Firmware is the redfish firmware interface. Its components are read
// from the BMC's UpdateService FirmwareInventory; Validate, as Ironic's
// RedfishFirmware.validate, only parses driver_info.
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
