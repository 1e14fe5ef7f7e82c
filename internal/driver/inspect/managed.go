package inspect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
)

// managedBoot is what both in-band interfaces (agent and inspector) do
// around the agent's report when ferro manages boot and network: the
// phases of the start and the teardown that undoes them. One
// implementation, so that both give the same guarantee: every failure,
// timeout and abort tears down everything, and nothing is left behind.
type managedBoot struct {
	powerTimeout time.Duration
	progress     driver.ProgressRecorder
	leases       LeaseReleaser
}

// phase is one step of a managed start.
type phase struct {
	name string
	run  func() error
}

// startManaged runs the managed start: power off (skipped for a node with
// disable_power_off), the inspection network, the ramdisk with params,
// then the interface's own phases (between), then power on (a reboot
// with disable_power_off). On the first failure it calls undo (nil: none;
// the interface's own, such as aborting the introspection), tears
// everything down and powers the node off, and returns a PhaseError
// naming the phase. poweredOn is the history detail of the power-on.
func (m *managedBoot) startManaged(ctx context.Context, t *driver.Task, params driver.RamdiskParams, between []phase,
	undo func(ctx context.Context) error, poweredOn string) error {
	steps := []phase{
		{"powering off the node", func() error {
			if t.Node.DisablePowerOff {
				return nil // rebooted into the ramdisk below
			}
			return m.setPower(ctx, t, baremetal.PowerOff)
		}},
		{"adding the inspection network", func() error { return t.Driver.Network.AddInspectionNetwork(ctx, t) }},
		{"preparing the ramdisk", func() error { return t.Driver.Boot.PrepareRamdisk(ctx, t, params) }},
	}
	steps = append(steps, between...)
	steps = append(steps, phase{"powering on the node", func() error {
		if err := m.powerOnOrReboot(ctx, t); err != nil {
			return err
		}
		m.record(ctx, t, driver.PhasePoweredOn, poweredOn)
		return nil
	}})
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Log.Error("managed inspection failed to start", "phase", s.name, "error", err)
			// Tear down on a context that survives the request's cancellation.
			tctx := context.WithoutCancel(ctx)
			var terrs []error
			if undo != nil {
				if uerr := undo(tctx); uerr != nil {
					terrs = append(terrs, uerr)
				}
			}
			if terr := m.teardown(tctx, t, true); terr != nil {
				terrs = append(terrs, terr)
			}
			if len(terrs) > 0 {
				err = fmt.Errorf("%w; teardown also failed: %w", err, errors.Join(terrs...))
			}
			// Torn down: nothing is managed any more (the conductor saves the node).
			delete(t.Node.DriverInternalInfo, ManageBootKey)
			return &driver.PhaseError{Phase: s.name, Err: err}
		}
	}
	return nil
}

// startUnmanaged is the start when something else serves the ramdisk (an
// (i)PXE environment of its own, or the built-in DHCP's default): power
// off, a one-time PXE boot, power on; a reboot instead of both with
// disable_power_off. A failure names the phase; nothing was prepared, so
// there is nothing to tear down but the power.
func (m *managedBoot) startUnmanaged(ctx context.Context, t *driver.Task) error {
	steps := []phase{
		{"powering off the node", func() error {
			if t.Node.DisablePowerOff {
				return nil
			}
			return m.setPower(ctx, t, baremetal.PowerOff)
		}},
		{"setting the boot device to PXE", func() error {
			return t.Driver.Management.SetBootDevice(ctx, t, baremetal.BootDevicePXE, false)
		}},
		{"powering on the node", func() error {
			if err := m.powerOnOrReboot(ctx, t); err != nil {
				return err
			}
			m.record(ctx, t, driver.PhasePoweredOn, "one-time PXE boot into an unmanaged ramdisk")
			return nil
		}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			return &driver.PhaseError{Phase: s.name, Err: err}
		}
	}
	return nil
}

// powerOnOrReboot powers the node on, or reboots it when it must not be
// powered off (disable_power_off, API 1.95): it was never powered off.
func (m *managedBoot) powerOnOrReboot(ctx context.Context, t *driver.Task) error {
	if t.Node.DisablePowerOff {
		return m.setPower(ctx, t, baremetal.PowerReboot)
	}
	return m.setPower(ctx, t, baremetal.PowerOn)
}

// setPower switches power and records the state on the node; the
// conductor saves the node when the phase ends.
func (m *managedBoot) setPower(ctx context.Context, t *driver.Task, state string) error {
	driver.StampPowerChange(t.Node, state, time.Now())
	if err := t.Driver.Power.SetPowerState(ctx, t, state, m.powerTimeout); err != nil {
		return err
	}
	if st, err := t.Driver.Power.PowerState(ctx, t); err == nil {
		t.Node.PowerState = st
	}
	return nil
}

// teardown undoes the managed path: ramdisk, inspection network, and,
// when asked, the power: off, or a reboot out of the ramdisk for a node
// with disable_power_off (Ironic's tear_down_managed_boot). Every step
// runs; errors are collected.
func (m *managedBoot) teardown(ctx context.Context, t *driver.Task, powerOff bool) error {
	var errs []error
	if err := t.Driver.Boot.CleanUpRamdisk(ctx, t); err != nil {
		errs = append(errs, fmt.Errorf("cleaning up the ramdisk: %w", err))
	}
	if err := t.Driver.Network.RemoveInspectionNetwork(ctx, t); err != nil {
		errs = append(errs, fmt.Errorf("removing the inspection network: %w", err))
	} else {
		m.record(ctx, t, driver.PhaseNetworkRemoved, "")
	}
	m.releaseLeases(ctx, t)
	if powerOff {
		if err := m.endPower(ctx, t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// endPower powers the node off at the end of an inspection, or reboots
// it with disable_power_off, so that it leaves the ramdisk either way.
func (m *managedBoot) endPower(ctx context.Context, t *driver.Task) error {
	if t.Node.DisablePowerOff {
		if err := m.setPower(ctx, t, baremetal.PowerReboot); err != nil {
			return fmt.Errorf("rebooting the node (disable_power_off): %w", err)
		}
		return nil
	}
	if err := m.setPower(ctx, t, baremetal.PowerOff); err != nil {
		return fmt.Errorf("powering off the node: %w", err)
	}
	m.record(ctx, t, driver.PhasePoweredOff, "")
	return nil
}

// releaseLeases releases the node's built-in DHCP leases at once rather
// than at the netboot's next sweep, so that the addresses are free for
// other nodes and no lease outlives the inspection. A failure is logged;
// the sweep stays the backstop.
func (m *managedBoot) releaseLeases(ctx context.Context, t *driver.Task) {
	if m.leases == nil {
		return
	}
	if err := m.leases.ReleaseLeases(context.WithoutCancel(ctx), t.Node.UUID); err != nil {
		t.Log.Warn("cannot release the DHCP leases; the netboot's sweep will", "error", err)
	}
}

// record notes a phase in the node's history.
func (m *managedBoot) record(ctx context.Context, t *driver.Task, phase, detail string) {
	if m.progress != nil {
		m.progress.Record(context.WithoutCancel(ctx), t.Node.UUID, phase, detail)
	}
}

// managesBoot reports whether ferro can manage boot and network for the
// inspection: boot is validated first, then network. ErrUnsupported from
// either means fall back; any other error fails the inspection.
func managesBoot(ctx context.Context, t *driver.Task) (bool, error) {
	if err := t.Driver.Boot.ValidateInspection(ctx, t); err != nil {
		if errors.Is(err, driver.ErrUnsupported) {
			return false, nil
		}
		return false, fmt.Errorf("validate boot interface for inspection: %w", err)
	}
	if err := t.Driver.Network.ValidateInspection(ctx, t); err != nil {
		if errors.Is(err, driver.ErrUnsupported) {
			return false, nil
		}
		return false, fmt.Errorf("validate network interface for inspection: %w", err)
	}
	return true, nil
}

// unmanagedReason says why managesBoot fell back, for the operator.
func unmanagedReason(ctx context.Context, t *driver.Task) error {
	if err := t.Driver.Boot.ValidateInspection(ctx, t); err != nil {
		return err
	}
	return t.Driver.Network.ValidateInspection(ctx, t)
}

// managed reports the recorded choice for the running inspection.
func managed(n *baremetal.Node) bool {
	v, _ := n.DriverInternalInfo[ManageBootKey].(bool)
	return v
}
