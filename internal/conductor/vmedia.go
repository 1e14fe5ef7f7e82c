package conductor

import (
	"context"
	"fmt"

	"github.com/ferrometal/ferro/internal/driver"
)

// Virtual media of a node (API 1.89, 1.93), as Ironic's conductor: the
// management interface must have it (else UnsupportedDriverExtension) and
// validate; an attach or detach that the BMC then fails is not the
// request's error but the node's last_error and a history event, as
// Ironic's run_node_action records it. (Ironic runs them in a worker; here
// they finish before the answer, with the same 204.)

func virtualMedia(t *driver.Task) (driver.VirtualMediaManager, error) {
	vm, ok := t.Driver.Management.(driver.VirtualMediaManager)
	if !ok {
		return nil, fmt.Errorf("%w: Driver %s does not support virtual media (disabled or not implemented).", driver.ErrUnsupported, t.Node.Driver)
	}
	return vm, nil
}

// GetVirtualMedia lists the node's virtual media devices.
func (c *Conductor) GetVirtualMedia(ctx context.Context, ident string) ([]driver.VirtualMediaDevice, error) {
	t, err := c.shared(ctx, ident)
	if err != nil {
		return nil, err
	}
	vm, err := virtualMedia(t)
	if err != nil {
		return nil, err
	}
	if err := t.Driver.Management.Validate(ctx, t); err != nil {
		return nil, err
	}
	return vm.VirtualMedia(ctx, t)
}

// AttachVirtualMedia inserts imageURL into a device of deviceType.
func (c *Conductor) AttachVirtualMedia(ctx context.Context, ident, deviceType, imageURL string) error {
	return c.vmediaAction(ctx, ident, func(vm driver.VirtualMediaManager, t *driver.Task) (string, error) {
		return fmt.Sprintf("Could not attach device %s to node %s", deviceType, t.Node.UUID),
			vm.AttachVirtualMedia(ctx, t, deviceType, imageURL)
	})
}

// DetachVirtualMedia ejects the devices of deviceTypes (all when nil).
func (c *Conductor) DetachVirtualMedia(ctx context.Context, ident string, deviceTypes []string) error {
	return c.vmediaAction(ctx, ident, func(vm driver.VirtualMediaManager, t *driver.Task) (string, error) {
		return fmt.Sprintf("Could not detach device(s) %v from node %s", deviceTypes, t.Node.UUID),
			vm.DetachVirtualMedia(ctx, t, deviceTypes)
	})
}

func (c *Conductor) vmediaAction(ctx context.Context, ident string, act func(driver.VirtualMediaManager, *driver.Task) (string, error)) error {
	t, err := c.acquire(ctx, ident)
	if err != nil {
		return err
	}
	defer c.release(t)
	vm, err := virtualMedia(t)
	if err != nil {
		return err
	}
	if err := t.Driver.Management.Validate(ctx, t); err != nil {
		return err
	}
	if t.Node.Maintenance && t.Node.Fault == "power failure" {
		return fmt.Errorf("%w: Unable to change virtual media for node %s due to power failure state", ErrTemporaryFailure, t.Node.UUID)
	}
	t.Node.LastError = ""
	if what, err := act(vm, t); err != nil {
		t.Node.LastError = what + ": " + err.Error()
		c.history(ctx, t.Node, "", t.Node.LastError, "ERROR")
		t.Log.Error("virtual media action failed", "error", err)
	}
	return t.SaveNode(ctx)
}
