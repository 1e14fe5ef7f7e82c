package conductor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
)

// ChangePowerState validates the power interface under the node's lock,
// records the target power state and switches power in a worker.
func (c *Conductor) ChangePowerState(ctx context.Context, ident, target string, timeout time.Duration) error {
	switch target {
	case baremetal.PowerOn, baremetal.PowerOff, baremetal.PowerReboot:
	default:
		return fmt.Errorf("%w: invalid power state %q", driver.ErrInvalidParameter, target)
	}
	if timeout <= 0 {
		timeout = c.o.PowerTimeout
	}
	t, err := c.acquire(ctx, ident)
	if err != nil {
		return err
	}
	if err := t.Driver.Power.Validate(ctx, t); err != nil {
		c.release(t)
		return fmt.Errorf("validate power interface of node %s: %w", t.Node.UUID, err)
	}
	if err := c.takeWorker(); err != nil {
		c.release(t)
		return err
	}
	t.Node.TargetPowerState = target
	if target == baremetal.PowerReboot {
		t.Node.TargetPowerState = baremetal.PowerOn
	}
	// Ironic clears last_error at every power action. A power-off of a
	// node whose inspection failed keeps it: on the unmanaged path the
	// inspector powers the node off after an abort or a timeout, just
	// after the conductor wrote why, and that reason (the phase a timeout
	// reached) is what the operator needs.
	if target != baremetal.PowerOff || t.Node.ProvisionState != states.InspectFailed {
		t.Node.LastError = ""
	}
	if err := t.SaveNode(ctx); err != nil {
		c.giveBackWorker()
		c.release(t)
		return err
	}
	c.run(t, func(ctx context.Context, t *driver.Task) {
		if err := c.setPower(ctx, t, target, timeout); err != nil {
			t.Node.LastError = fmt.Sprintf("Failed to change power state to '%s' by '%s'. Error: %v", t.Node.TargetPowerState, target, err)
			c.history(ctx, t.Node, "power", t.Node.LastError, baremetal.SeverityError)
		}
		t.Node.TargetPowerState = ""
		if err := t.SaveNode(context.WithoutCancel(ctx)); err != nil {
			t.Log.Error("cannot save power state", "error", err)
		}
	})
	return nil
}

// setPower switches power and records the state the interface reports.
func (c *Conductor) setPower(ctx context.Context, t *driver.Task, target string, timeout time.Duration) error {
	driver.StampPowerChange(t.Node, target, c.now())
	if err := t.Driver.Power.SetPowerState(ctx, t, target, timeout); err != nil {
		return err
	}
	st, err := t.Driver.Power.PowerState(ctx, t)
	if err != nil {
		return err
	}
	now := c.now().UTC()
	t.Node.PowerState = st
	t.Node.UpdatedAt = &now
	return nil
}

// unsupportedExtension is Ironic's UnsupportedDriverExtension message.
func unsupportedExtension(hwType, kind string) string {
	return fmt.Sprintf("Driver %s does not support %s (disabled or not implemented).", hwType, kind)
}

// SetBootDevice sets the node's boot device under its lock.
func (c *Conductor) SetBootDevice(ctx context.Context, ident, device string, persistent bool) error {
	t, err := c.acquire(ctx, ident)
	if err != nil {
		return err
	}
	defer c.release(t)
	if err := t.Driver.Management.Validate(ctx, t); err != nil {
		return err
	}
	if err := t.Driver.Management.SetBootDevice(ctx, t, device, persistent); err != nil {
		return err
	}
	return t.SaveNode(ctx)
}

// GetBootDevice reads the node's boot device without locking it.
func (c *Conductor) GetBootDevice(ctx context.Context, ident string) (string, bool, error) {
	t, err := c.shared(ctx, ident)
	if err != nil {
		return "", false, err
	}
	return t.Driver.Management.BootDevice(ctx, t)
}

// SupportedBootDevices lists the devices the node's management interface can set.
func (c *Conductor) SupportedBootDevices(ctx context.Context, ident string) ([]string, error) {
	t, err := c.shared(ctx, ident)
	if err != nil {
		return nil, err
	}
	return t.Driver.Management.SupportedBootDevices(ctx, t)
}

// ValidateNode runs the Validate of every interface Ironic 21.4's
// GET /validate reports: its drivers' non_vendor_interfaces (vendor is
// never listed, firmware came after 21.4). As there, an interface that
// cannot do the job (no-*, or ErrUnsupported) is result false with
// UnsupportedDriverExtension's message.
func (c *Conductor) ValidateNode(ctx context.Context, ident string) (map[string]ValidationResult, error) {
	t, err := c.shared(ctx, ident)
	if err != nil {
		return nil, err
	}
	out := map[string]ValidationResult{}
	unsupported := func(kind string) ValidationResult {
		fail := false
		return ValidationResult{Result: &fail, Reason: unsupportedExtension(t.Node.Driver, kind)}
	}
	check := func(kind string, v interface {
		Validate(context.Context, *driver.Task) error
	}) {
		if v == nil || t.Node.Interface(kind) == "" {
			out[kind] = unsupported(kind)
			return
		}
		err := v.Validate(ctx, t)
		switch {
		case err == nil:
			ok := true
			out[kind] = ValidationResult{Result: &ok}
		case errors.Is(err, driver.ErrUnsupported):
			out[kind] = unsupported(kind)
		default:
			fail := false
			out[kind] = ValidationResult{Result: &fail, Reason: err.Error()}
		}
	}
	check("power", t.Driver.Power)
	check("management", t.Driver.Management)
	check("boot", t.Driver.Boot)
	check("network", t.Driver.Network)
	check("inspect", t.Driver.Inspect)
	for _, kind := range driver.ValidatedKinds {
		if _, done := out[kind]; done {
			continue
		}
		v, ok := t.Driver.Others[kind]
		if !ok {
			out[kind] = unsupported(kind)
			continue
		}
		check(kind, v)
	}
	return out, nil
}
