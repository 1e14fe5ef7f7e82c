// Package fake is fake-hardware's interfaces: power, management, boot,
// inspect and a validate-only one for every other kind. They keep their state
// on the node, so they work the same in every conductor and survive restarts.
package fake

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/states"
)

// Power is the fake power interface: the state is the node's power_state.
type Power struct{}

// Validate always passes.
func (Power) Validate(context.Context, *driver.Task) error { return nil }

// PowerDelayKey is a test-only driver_info key: seconds (a number or a
// numeric string) every fake power call takes, a simulated BMC's latency
// for benchmarks (bench/scale's power-state sync). Not an Ironic option.
const PowerDelayKey = "fake_power_delay"

// bmcDelay waits the node's simulated BMC latency, if any.
func bmcDelay(ctx context.Context, t *driver.Task) error {
	var secs float64
	switch v := t.Node.DriverInfo[PowerDelayKey].(type) {
	case float64:
		secs = v
	case string:
		secs, _ = strconv.ParseFloat(v, 64)
	}
	if secs <= 0 {
		return nil
	}
	timer := time.NewTimer(time.Duration(secs * float64(time.Second)))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// PowerState returns the node's recorded power state: none (null) until
// the first power action, as Ironic's fake power.
func (Power) PowerState(ctx context.Context, t *driver.Task) (string, error) {
	if err := bmcDelay(ctx, t); err != nil {
		return "", err
	}
	return t.Node.PowerState, nil
}

// SetPowerState records the new state; reboot ends powered on.
func (Power) SetPowerState(ctx context.Context, t *driver.Task, state string, _ time.Duration) error {
	if err := bmcDelay(ctx, t); err != nil {
		return err
	}
	switch state {
	case baremetal.PowerOn, baremetal.PowerReboot:
		t.Node.PowerState = baremetal.PowerOn
	case baremetal.PowerOff:
		t.Node.PowerState = baremetal.PowerOff
	default:
		return fmt.Errorf("%w: unknown power state %q", driver.ErrInvalidParameter, state)
	}
	return nil
}

// Management is the fake management interface. As Ironic's, it keeps no
// boot device: it accepts PXE, reports PXE (not persistent) and logs what
// it was asked (BootDeviceSetMsg), which is what tests look for.
type Management struct{}

// BootDeviceSetMsg is the log message of SetBootDevice.
const BootDeviceSetMsg = "fake boot device set"

// Validate always passes.
func (Management) Validate(context.Context, *driver.Task) error { return nil }

// SupportedBootDevices lists the devices Ironic's fake management supports.
func (Management) SupportedBootDevices(context.Context, *driver.Task) ([]string, error) {
	return []string{baremetal.BootDevicePXE}, nil
}

// SetBootDevice checks the device and logs it.
func (m Management) SetBootDevice(ctx context.Context, t *driver.Task, device string, persistent bool) error {
	supported, _ := m.SupportedBootDevices(ctx, t)
	if !slices.Contains(supported, device) {
		return fmt.Errorf("%w: Invalid boot device %s specified", driver.ErrInvalidParameter, device)
	}
	if t.Log != nil {
		t.Log.Info(BootDeviceSetMsg, "device", device, "persistent", persistent)
	}
	return nil
}

// BootDevice is PXE, not persistent, whatever was set.
func (Management) BootDevice(context.Context, *driver.Task) (string, bool, error) {
	return baremetal.BootDevicePXE, false, nil
}

// Boot is the fake boot interface. Like Ironic's, it has no inspection
// support (its ValidateInspection is UnsupportedDriverExtension), so a
// fake-boot node inspected with the inspector interface takes the
// unmanaged path, as in Ironic. Its other methods do nothing.
type Boot struct{}

// Validate always passes.
func (Boot) Validate(context.Context, *driver.Task) error { return nil }

// ValidateInspection is ErrUnsupported: upstream's fake boot does not
// implement validate_inspection, so managed inspection falls back.
func (Boot) ValidateInspection(context.Context, *driver.Task) error {
	return fmt.Errorf("%w: the fake boot interface does not support managed inspection", driver.ErrUnsupported)
}

// PrepareRamdisk does nothing.
func (Boot) PrepareRamdisk(context.Context, *driver.Task, driver.RamdiskParams) error { return nil }

// CleanUpRamdisk does nothing.
func (Boot) CleanUpRamdisk(context.Context, *driver.Task) error { return nil }

// Inspect is the fake inspect interface: inspection finishes at once.
type Inspect struct{}

// Validate always passes.
func (Inspect) Validate(context.Context, *driver.Task) error { return nil }

// InspectHardware finishes at once: the node goes back to manageable.
func (Inspect) InspectHardware(context.Context, *driver.Task) (string, error) {
	return states.Manageable, nil
}

// Abort does nothing.
func (Inspect) Abort(context.Context, *driver.Task) error { return nil }

// Status is unsupported: fake inspection never waits.
func (Inspect) Status(context.Context, *driver.Task) (driver.InspectStatus, error) {
	return driver.InspectStatus{}, fmt.Errorf("%w: fake inspection is synchronous", driver.ErrUnsupported)
}

// Finish does nothing.
func (Inspect) Finish(context.Context, *driver.Task, driver.InspectStatus) error { return nil }

// Validator passes validation; it stands for fake and no-op interfaces of
// kinds ferro does not drive.
type Validator struct{}

// Validate always passes.
func (Validator) Validate(context.Context, *driver.Task) error { return nil }

// Register adds the fake interfaces (and the noop network, which needs no
// hardware) to r.
func Register(r *driver.Registry) {
	r.RegisterPower("fake", Power{})
	r.RegisterManagement("fake", Management{})
	r.RegisterBoot("fake", Boot{})
	r.RegisterInspect("fake", Inspect{})
	r.RegisterInspect("no-inspect", driver.NoInspect())
	for _, kind := range []string{"bios", "console", "deploy", "firmware", "raid", "rescue", "storage", "vendor"} {
		r.RegisterOther(kind, "fake", Validator{})
	}
	r.RegisterOther("storage", "noop", Validator{})
	r.RegisterOther("deploy", "direct", Validator{})
}
