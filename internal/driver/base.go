package driver

import (
	"context"
	"fmt"
	"time"
)

// BaseBoot gives a boot interface upstream's defaults for inspection:
// ValidateInspection says ErrUnsupported (fall back to the unmanaged path),
// and prepare/clean up do nothing. Embed it and override what you support.
type BaseBoot struct{}

// ValidateInspection returns ErrUnsupported.
func (BaseBoot) ValidateInspection(context.Context, *Task) error {
	return fmt.Errorf("%w: boot interface does not support managed inspection", ErrUnsupported)
}

// PrepareRamdisk does nothing.
func (BaseBoot) PrepareRamdisk(context.Context, *Task, RamdiskParams) error { return nil }

// CleanUpRamdisk does nothing.
func (BaseBoot) CleanUpRamdisk(context.Context, *Task) error { return nil }

// BaseNetwork gives a network interface upstream's defaults for inspection:
// ValidateInspection says ErrUnsupported, add and remove do nothing.
type BaseNetwork struct{}

// ValidateInspection returns ErrUnsupported.
func (BaseNetwork) ValidateInspection(context.Context, *Task) error {
	return fmt.Errorf("%w: network interface does not support an inspection network", ErrUnsupported)
}

// AddInspectionNetwork does nothing.
func (BaseNetwork) AddInspectionNetwork(context.Context, *Task) error { return nil }

// RemoveInspectionNetwork does nothing.
func (BaseNetwork) RemoveInspectionNetwork(context.Context, *Task) error { return nil }

// unavailable stands for an interface whose implementation this binary does
// not have (or "no-*" interfaces): every call is ErrUnsupported.
type unavailable struct{ kind, name string }

func (u unavailable) err() error {
	if u.name == "" {
		return fmt.Errorf("%w: node has no %s interface", ErrUnsupported, u.kind)
	}
	return fmt.Errorf("%w: %s interface %q does not support this operation", ErrUnsupported, u.kind, u.name)
}

func (u unavailable) Validate(context.Context, *Task) error             { return u.err() }
func (u unavailable) PowerState(context.Context, *Task) (string, error) { return "", u.err() }
func (u unavailable) SetPowerState(context.Context, *Task, string, time.Duration) error {
	return u.err()
}
func (u unavailable) SetBootDevice(context.Context, *Task, string, bool) error { return u.err() }
func (u unavailable) BootDevice(context.Context, *Task) (string, bool, error) {
	return "", false, u.err()
}
func (u unavailable) SupportedBootDevices(context.Context, *Task) ([]string, error) {
	return nil, u.err()
}
func (u unavailable) ValidateInspection(context.Context, *Task) error            { return u.err() }
func (u unavailable) PrepareRamdisk(context.Context, *Task, RamdiskParams) error { return u.err() }
func (u unavailable) CleanUpRamdisk(context.Context, *Task) error                { return u.err() }
func (u unavailable) AddInspectionNetwork(context.Context, *Task) error          { return u.err() }
func (u unavailable) RemoveInspectionNetwork(context.Context, *Task) error       { return u.err() }
func (u unavailable) InspectHardware(context.Context, *Task) (string, error)     { return "", u.err() }
func (u unavailable) Abort(context.Context, *Task) error                         { return u.err() }
func (u unavailable) Status(context.Context, *Task) (InspectStatus, error) {
	return InspectStatus{}, u.err()
}
func (u unavailable) Finish(context.Context, *Task, InspectStatus) error { return u.err() }

// NoInspect is the no-inspect interface.
func NoInspect() Inspect { return unavailable{"inspect", "no-inspect"} }
