package ipmi

import (
	"context"
	"errors"
	"fmt"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/chassis"
	"github.com/bougou/go-ipmi/pkg/types"
)

// PowerAction is a Chassis Control command.
type PowerAction string

// Power actions, named as ipmitool's "power" subcommands.
const (
	PowerOn    PowerAction = "on"
	PowerOff   PowerAction = "off"   // hard power down
	PowerCycle PowerAction = "cycle" // off, then on after a BMC-defined delay
	PowerReset PowerAction = "reset" // hard reset
	PowerSoft  PowerAction = "soft"  // ACPI soft shutdown
)

var chassisControl = map[PowerAction]chassis.ChassisControl{
	PowerOn:    chassis.ChassisControlPowerUp,
	PowerOff:   chassis.ChassisControlPowerDown,
	PowerCycle: chassis.ChassisControlPowerCycle,
	PowerReset: chassis.ChassisControlHardReset,
	PowerSoft:  chassis.ChassisControlSoftShutdown,
}

// PowerStatus reports whether the chassis power is on (Get Chassis Status).
func (c *Client) PowerStatus(ctx context.Context, t Target) (on bool, err error) {
	err = c.do(ctx, t, "power status", func(ctx context.Context, ic *client.Client) error {
		res, err := ic.GetChassisStatus(ctx)
		if err != nil {
			return err
		}
		on = res.PowerIsOn
		return nil
	})
	return on, err
}

// Power sends a Chassis Control command. It does not wait for the new state.
func (c *Client) Power(ctx context.Context, t Target, a PowerAction) error {
	cc, ok := chassisControl[a]
	if !ok {
		return fmt.Errorf("unknown IPMI power action %q", a)
	}
	return c.do(ctx, t, "power "+string(a), func(ctx context.Context, ic *client.Client) error {
		_, err := ic.ChassisControl(ctx, cc)
		return err
	})
}

// BootDevice is a boot device selector of the boot flags (parameter 5).
type BootDevice string

// Boot devices, as Ironic names them.
const (
	BootNone  BootDevice = ""
	BootPXE   BootDevice = "pxe"
	BootDisk  BootDevice = "disk"
	BootSafe  BootDevice = "safe"
	BootCDROM BootDevice = "cdrom"
	BootBIOS  BootDevice = "bios"
)

// selector is the device's value in bits 5:2 of boot flags data byte 2 (Ironic's
// BOOT_DEVICE_HEXA_MAP shifted right by two).
var selector = map[BootDevice]types.BootDeviceSelector{
	BootNone:  types.BootDeviceSelectorNoOverride,
	BootPXE:   types.BootDeviceSelectorForcePXE,
	BootDisk:  types.BootDeviceSelectorForceHardDrive,
	BootSafe:  types.BootDeviceSelectorForceHardDriveSafe,
	BootCDROM: types.BootDeviceSelectorForceCDROM,
	BootBIOS:  types.BootDeviceSelectorForceBIOSSetup,
}

// BootFlags is the boot flags parameter (5) as ferro reads and writes it.
type BootFlags struct {
	Device     BootDevice
	Persistent bool // options apply to all future boots
	EFI        bool // EFI boot rather than PC compatible (legacy)
	Valid      bool // the BMC holds these flags for the next boot
}

// Boot options parameter selectors.
const (
	paramSetInProgress    = 0
	paramValidBitClearing = 3
	paramBootInfoAck      = 4
	paramBootFlags        = 5
)

// Boot flags data byte 1 bits.
const (
	flagValid      = 0x80
	flagPersistent = 0x40
	flagEFI        = 0x20
)

// SetBootOptions is what SetBootDevice sends.
type SetBootOptions struct {
	Device     BootDevice
	Persistent bool
	// EFI sends the flags as Ironic does for a node in UEFI boot mode: one
	// raw Set System Boot Options parameter 5 with the valid, persistent and
	// EFI bits. Without it the flags go as `ipmitool chassis bootdev` sends
	// them (set in progress, boot info acknowledge, boot flags, commit).
	EFI bool
	// KeepValidBit first sends parameter 3 with "don't clear the valid bit
	// on the 60 s timeout" (0x08), as Ironic does unless
	// ipmi_disable_boot_timeout is false.
	KeepValidBit bool
}

// SetBootDevice sets the next boot device exactly as Ironic's ipmitool
// management interface does.
func (c *Client) SetBootDevice(ctx context.Context, t Target, o SetBootOptions) error {
	sel, ok := selector[o.Device]
	if !ok {
		return fmt.Errorf("unknown IPMI boot device %q", o.Device)
	}
	if o.KeepValidBit {
		// Ironic: send_raw "0x00 0x08 0x03 0x08", a call of its own.
		if err := c.do(ctx, t, "disable boot timeout (boot option 3)", func(ctx context.Context, ic *client.Client) error {
			return setParam(ctx, ic, paramValidBitClearing, 0x08)
		}); err != nil {
			return err
		}
	}
	dev := uint8(sel) << 2
	if o.EFI {
		b1 := byte(flagValid | flagEFI)
		if o.Persistent {
			b1 |= flagPersistent
		}
		return c.do(ctx, t, "set boot device", func(ctx context.Context, ic *client.Client) error {
			return setParam(ctx, ic, paramBootFlags, b1, dev, 0, 0, 0)
		})
	}
	return c.do(ctx, t, "set boot device", func(ctx context.Context, ic *client.Client) error {
		return bootdev(ctx, ic, dev, o.Persistent)
	})
}

// ErrBootFlagsRefused is wrapped by the error of a SetBootDevice without
// EFI whose boot flags (parameter 5) the BMC answered with an error
// completion code. ipmitool's "chassis bootdev" prints that error and
// exits 0, so Ironic's BIOS-mode path goes on; the caller decides.
var ErrBootFlagsRefused = errors.New("the BMC refused the boot flags (boot option parameter 5)")

// bootdev is ipmitool's "chassis bootdev" sequence. Set in progress and
// the acknowledge may be refused by BMCs that lack them (ipmi_sim does),
// which ipmitool tolerates, and so does ferro. A refused parameter 5 is
// ErrBootFlagsRefused; no answer at all is an error as in ipmitool.
func bootdev(ctx context.Context, ic *client.Client, dev byte, persistent bool) error {
	useProgress := setParam(ctx, ic, paramSetInProgress, 0x01) == nil
	var err error
	defer func() {
		if useProgress {
			_ = setParam(ctx, ic, paramSetInProgress, 0x00) // set complete
		}
	}()
	if err = setParam(ctx, ic, paramBootInfoAck, 0x01, 0x01); err != nil && !isCompletionCode(err) {
		return err
	}
	b1 := byte(flagValid)
	if persistent {
		b1 |= flagPersistent
	}
	if err = setParam(ctx, ic, paramBootFlags, b1, dev, 0, 0, 0); err != nil {
		if isCompletionCode(err) {
			return fmt.Errorf("%w: %w", ErrBootFlagsRefused, err)
		}
		return err
	}
	if useProgress {
		_ = setParam(ctx, ic, paramSetInProgress, 0x02) // commit write
	}
	return nil
}

func setParam(ctx context.Context, ic *client.Client, param uint8, data ...byte) error {
	_, err := ic.SetSystemBootOptionsParam(ctx, &chassis.SetSystemBootOptionsParamRequest{
		ParamSelector: types.BootOptionParamSelector(param),
		ParamData:     data,
	})
	if err != nil {
		return fmt.Errorf("set system boot options parameter %d: %w", param, err)
	}
	return nil
}

func isCompletionCode(err error) bool {
	var re *types.ResponseError
	return errors.As(err, &re)
}

// BootDevice reads the boot flags back (Get System Boot Options parameter
// 5), as Ironic's "chassis bootparam get 5".
func (c *Client) BootDevice(ctx context.Context, t Target) (BootFlags, error) {
	var f BootFlags
	err := c.do(ctx, t, "get boot device", func(ctx context.Context, ic *client.Client) error {
		res, err := ic.GetSystemBootOptionsParam(ctx, types.BootOptionParamSelector_BootFlags, 0, 0)
		if err != nil {
			return fmt.Errorf("get system boot options parameter 5: %w", err)
		}
		if len(res.ParamData) < 2 {
			return fmt.Errorf("boot flags of %d bytes, want 5", len(res.ParamData))
		}
		b1, b2 := res.ParamData[0], res.ParamData[1]
		f.Valid = b1&flagValid != 0
		f.Persistent = b1&flagPersistent != 0
		f.EFI = b1&flagEFI != 0
		s := types.BootDeviceSelector((b2 >> 2) & 0x0f)
		// An unknown selector reads as no override, as in Ironic.
		for d, v := range selector {
			if v == s {
				f.Device = d
			}
		}
		return nil
	})
	return f, err
}
