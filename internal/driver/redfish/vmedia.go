package redfish

import (
	"context"
	"fmt"
	"slices"

	"github.com/ferrometal/ferro/internal/driver"
)

// The redfish management interface's virtual media (API 1.89, 1.93), as
// Ironic's: the System's CD/DVD devices (the BMC client reaches no other
// kind, so a disk or floppy is refused).

// VirtualMedia lists the System's virtual CD/DVD devices.
func (m *Management) VirtualMedia(ctx context.Context, t *driver.Task) ([]driver.VirtualMediaDevice, error) {
	ep, err := Endpoint(t, m.o.AuthType)
	if err != nil {
		return nil, err
	}
	cds, err := m.o.Client.CDs(ctx, ep)
	if err != nil {
		return nil, err
	}
	out := make([]driver.VirtualMediaDevice, 0, len(cds))
	for _, cd := range cds {
		out = append(out, driver.VirtualMediaDevice{MediaTypes: cd.MediaTypes, Inserted: cd.Inserted, Image: cd.Image})
	}
	return out, nil
}

// AttachVirtualMedia inserts imageURL into the first virtual CD.
func (m *Management) AttachVirtualMedia(ctx context.Context, t *driver.Task, deviceType, imageURL string) error {
	if deviceType != driver.VMediaCDROM {
		return fmt.Errorf("%w: no suitable virtual media device of type %s for node %s",
			driver.ErrInvalidParameter, deviceType, t.Node.UUID)
	}
	ep, err := Endpoint(t, m.o.AuthType)
	if err != nil {
		return err
	}
	return m.o.Client.InsertCD(ctx, ep, imageURL)
}

// DetachVirtualMedia ejects the virtual CDs; other device types have
// nothing to eject.
func (m *Management) DetachVirtualMedia(ctx context.Context, t *driver.Task, deviceTypes []string) error {
	if deviceTypes != nil && !slices.Contains(deviceTypes, driver.VMediaCDROM) {
		return nil
	}
	ep, err := Endpoint(t, m.o.AuthType)
	if err != nil {
		return err
	}
	return m.o.Client.EjectCDs(ctx, ep, nil)
}
