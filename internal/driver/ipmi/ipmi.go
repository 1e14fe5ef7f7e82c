// Package ipmi is the ipmi hardware type's power and management
// interfaces, named "ipmitool" as in Ironic so existing nodes move over
// unchanged. They are thin over internal/bmc/ipmi, which speaks IPMI
// natively (no ipmitool process); what reaches the BMC is what Ironic's
// ipmitool driver sends.
package ipmi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	bmc "github.com/ferrometal/ferro/internal/bmc/ipmi"
	"github.com/ferrometal/ferro/internal/driver"
)

// Name is the interface name of both implementations.
const Name = "ipmitool"

// Options are what the interfaces need besides the node.
type Options struct {
	Client *bmc.Client
	// DisableBootTimeout is [ipmi]disable_boot_timeout.
	DisableBootTimeout bool
	// DefaultBootMode is [deploy]default_boot_mode (bios or uefi).
	DefaultBootMode string
	// PollInterval is how often a power change is checked until it shows;
	// [ipmi]min_command_interval spaces the polls further. Default 1 s.
	PollInterval time.Duration
	// SoftPowerOffTimeout bounds a soft power off given no timeout
	// (Ironic's [conductor]soft_power_off_timeout). Default 600 s.
	SoftPowerOffTimeout time.Duration
}

// Register adds the power and management interfaces, and the vendor
// interface's validation, to r.
func Register(r *driver.Registry, o Options) {
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.SoftPowerOffTimeout <= 0 {
		o.SoftPowerOffTimeout = 600 * time.Second
	}
	if o.DefaultBootMode == "" {
		o.DefaultBootMode = driver.BootModeUEFI
	}
	r.RegisterPower(Name, Power{o})
	r.RegisterManagement(Name, Management{o})
	r.RegisterOther("vendor", Name, Power{o})
}

// Soft power states, as Ironic names them (API 1.27).
const (
	PowerSoftOff    = "soft power off"
	PowerSoftReboot = "soft rebooting"
)

// validPrivLevels are Ironic's VALID_PRIV_LEVELS.
var validPrivLevels = []string{"ADMINISTRATOR", "CALLBACK", "OPERATOR", "USER"}

// info is a node's parsed driver_info.
type info struct {
	target             bmc.Target
	disableBootTimeout *bool
}

// parseDriverInfo reads driver_info as Ironic's ipmitool _parse_driver_info
// does. Errors name the key.
func parseDriverInfo(n *baremetal.Node) (info, error) {
	di := n.DriverInfo
	addr, _ := di["ipmi_address"].(string)
	if strings.TrimSpace(addr) == "" {
		if v, ok := di["ipmi_address"]; ok && v != nil && v != "" {
			return info{}, fmt.Errorf("%w: ipmi_address must be a string, got %v", driver.ErrInvalidParameter, v)
		}
		return info{}, fmt.Errorf("%w: Missing the following IPMI credentials in node's driver_info: ['ipmi_address']", driver.ErrMissingParameter)
	}
	in := info{target: bmc.Target{Address: strings.TrimSpace(addr), Port: 623, PrivLevel: "ADMINISTRATOR", Protocol: bmc.Protocol20}}
	var err error
	if in.target.Username, err = str(di, "ipmi_username"); err != nil {
		return info{}, err
	}
	if in.target.Password, err = str(di, "ipmi_password"); err != nil {
		return info{}, err
	}
	if v, ok := di["ipmi_port"]; ok && v != nil {
		p, err := integer(v)
		if err != nil || p < 1 || p > 65535 {
			return info{}, fmt.Errorf("%w: ipmi_port %q is not a valid port number", driver.ErrInvalidParameter, fmt.Sprint(v))
		}
		in.target.Port = p
	}
	if v, ok := di["ipmi_priv_level"]; ok && v != nil {
		s, _ := v.(string)
		if !slices.Contains(validPrivLevels, s) {
			return info{}, fmt.Errorf("%w: Invalid privilege level value:%v, the valid value can be one of %s (ipmi_priv_level)",
				driver.ErrInvalidParameter, v, strings.Join(validPrivLevels, ", "))
		}
		in.target.PrivLevel = s
	}
	if v, ok := di["ipmi_protocol_version"]; ok && v != nil {
		switch pyStr(v) {
		case "2.0":
		case "1.5":
			in.target.Protocol = bmc.Protocol15
		default:
			return info{}, fmt.Errorf("%w: Invalid IPMI protocol version value %s, the valid value can be one of 2.0, 1.5 (ipmi_protocol_version)",
				driver.ErrInvalidParameter, pyStr(v))
		}
	}
	if v, ok := di["ipmi_cipher_suite"]; ok && v != nil {
		cs, err := integer(v)
		if err != nil || cs < 0 || cs > 255 {
			return info{}, fmt.Errorf("%w: Invalid cipher suite %v, expected a number (ipmi_cipher_suite)", driver.ErrInvalidParameter, v)
		}
		if in.target.Protocol == bmc.Protocol15 {
			return info{}, fmt.Errorf("%w: Cipher suites cannot be used with IPMI 1.5 (ipmi_cipher_suite)", driver.ErrInvalidParameter)
		}
		in.target.CipherSuite = cs
	}
	if v, ok := di["ipmi_bridging"]; ok && v != nil && v != "no" {
		return info{}, fmt.Errorf("%w: ipmi_bridging %v is not supported by ferro (only \"no\")", driver.ErrInvalidParameter, v)
	}
	if v, ok := di["ipmi_hex_kg_key"]; ok && v != nil && v != "" {
		return info{}, fmt.Errorf("%w: ipmi_hex_kg_key is not supported by ferro", driver.ErrInvalidParameter)
	}
	if v, ok := di["ipmi_disable_boot_timeout"]; ok && v != nil {
		b, err := boolean(v)
		if err != nil {
			return info{}, fmt.Errorf("%w: ipmi_disable_boot_timeout %v is not a boolean", driver.ErrInvalidParameter, v)
		}
		in.disableBootTimeout = &b
	}
	return in, nil
}

func str(di baremetal.JSON, key string) (string, error) {
	switch v := di[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case float64, int, bool, json.Number:
		return pyStr(v), nil // Ironic str()s them
	}
	return "", fmt.Errorf("%w: %s must be a string", driver.ErrInvalidParameter, key)
}

// pyStr formats a JSON scalar as Python's str() does (2.0 stays "2.0").
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		if f, err := x.Float64(); err == nil && strings.Contains(x.String(), ".") {
			return pyStr(f)
		}
		return x.String()
	case float64:
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	return fmt.Sprint(v)
}

func integer(v any) (int, error) {
	switch x := v.(type) {
	case float64:
		if x != float64(int(x)) {
			return 0, errors.New("not an integer")
		}
		return int(x), nil
	case int:
		return x, nil
	case string:
		return strconv.Atoi(strings.TrimSpace(x))
	case json.Number: // the store decodes numbers so
		return strconv.Atoi(x.String())
	}
	return 0, errors.New("not an integer")
}

func boolean(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "1", "t", "true", "on", "y", "yes":
			return true, nil
		case "0", "f", "false", "off", "n", "no":
			return false, nil
		}
	}
	return false, errors.New("not a boolean")
}

// Power is the ipmitool power interface.
type Power struct{ o Options }

// Validate checks driver_info without contacting the BMC, as Ironic does.
func (Power) Validate(_ context.Context, t *driver.Task) error {
	_, err := parseDriverInfo(t.Node)
	return err
}

// PowerState reads the chassis power state.
func (p Power) PowerState(ctx context.Context, t *driver.Task) (string, error) {
	in, err := parseDriverInfo(t.Node)
	if err != nil {
		return "", err
	}
	on, err := p.o.Client.PowerStatus(ctx, in.target)
	if err != nil {
		return "", err
	}
	if on {
		return baremetal.PowerOn, nil
	}
	return baremetal.PowerOff, nil
}

// SetPowerState sends the power command and waits up to timeout until the
// BMC reports the new state, as Ironic's _set_and_wait. A reboot is power
// off (unless already off), then power on, each confirmed (Ironic's
// IPMIPower.reboot); a soft reboot is soft power off, then power on.
func (p Power) SetPowerState(ctx context.Context, t *driver.Task, state string, timeout time.Duration) error {
	in, err := parseDriverInfo(t.Node)
	if err != nil {
		return err
	}
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	switch state {
	case baremetal.PowerOn:
		return p.setAndWait(ctx, t, in, bmc.PowerOn, true, timeout)
	case baremetal.PowerOff:
		return p.setAndWait(ctx, t, in, bmc.PowerOff, false, timeout)
	case PowerSoftOff:
		return p.setAndWait(ctx, t, in, bmc.PowerSoft, false, p.softTimeout(timeout))
	case baremetal.PowerReboot, PowerSoftReboot:
		on, err := p.o.Client.PowerStatus(ctx, in.target)
		if err != nil {
			return err
		}
		if on {
			action, wait := bmc.PowerOff, timeout
			if state == PowerSoftReboot {
				action, wait = bmc.PowerSoft, p.softTimeout(timeout)
			}
			if err := p.setAndWait(ctx, t, in, action, false, wait); err != nil {
				return err
			}
		}
		return p.setAndWait(ctx, t, in, bmc.PowerOn, true, timeout)
	}
	return fmt.Errorf("%w: unsupported power state %q", driver.ErrInvalidParameter, state)
}

func (p Power) softTimeout(timeout time.Duration) time.Duration {
	if timeout > 0 {
		return timeout
	}
	return p.o.SoftPowerOffTimeout
}

// setAndWait sends a and polls the power state until it is wantOn.
func (p Power) setAndWait(ctx context.Context, t *driver.Task, in info, a bmc.PowerAction, wantOn bool, timeout time.Duration) error {
	log := t.Log
	if log != nil {
		log.Info("IPMI power action", "bmc", in.target.String(), "action", string(a))
	}
	if err := p.o.Client.Power(ctx, in.target, a); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	tick := time.NewTicker(p.o.PollInterval)
	defer tick.Stop()
	for {
		on, err := p.o.Client.PowerStatus(wctx, in.target)
		if err == nil && on == wantOn {
			return nil
		}
		lastErr = err
		select {
		case <-tick.C:
		case <-wctx.Done():
			want := baremetal.PowerOff
			if wantOn {
				want = baremetal.PowerOn
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if lastErr != nil {
				return fmt.Errorf("BMC %s did not reach %s within %v after power %s: %w", in.target, want, timeout, a, lastErr)
			}
			return fmt.Errorf("BMC %s did not reach %s within %v after power %s", in.target, want, timeout, a)
		}
	}
}

// Management is the ipmitool management interface.
type Management struct{ o Options }

// Validate checks driver_info without contacting the BMC.
func (Management) Validate(_ context.Context, t *driver.Task) error {
	_, err := parseDriverInfo(t.Node)
	return err
}

// SupportedBootDevices are Ironic's (the keys of its BOOT_DEVICE_HEXA_MAP).
func (Management) SupportedBootDevices(context.Context, *driver.Task) ([]string, error) {
	return []string{baremetal.BootDevicePXE, baremetal.BootDeviceDisk, baremetal.BootDeviceCDROM,
		baremetal.BootDeviceBIOS, baremetal.BootDeviceSafe}, nil
}

// SetBootDevice sets the next boot device, with the EFI flag when the
// node boots in UEFI mode, as Ironic does. In BIOS mode Ironic runs
// `ipmitool chassis bootdev`, which exits 0 when the BMC answers the boot
// flags with an error completion code, so a BMC that refuses them (ipmi_sim
// set up for QEMU answers 0xcc) does not stop the boot: ferro logs it and
// goes on. In UEFI mode Ironic's raw command fails on it, and so does
// ferro; a BMC that does not answer, or refuses parameter 3
// (ipmi_disable_boot_timeout), fails in both modes, as Ironic's.
func (m Management) SetBootDevice(ctx context.Context, t *driver.Task, device string, persistent bool) error {
	supported, _ := m.SupportedBootDevices(ctx, t)
	if !slices.Contains(supported, device) {
		return fmt.Errorf("%w: Invalid boot device %s specified.", driver.ErrInvalidParameter, device)
	}
	in, err := parseDriverInfo(t.Node)
	if err != nil {
		return err
	}
	mode := driver.BootMode(t.Node, m.o.DefaultBootMode)
	if mode != driver.BootModeBIOS && mode != driver.BootModeUEFI {
		return fmt.Errorf("%w: invalid boot mode %q for node %s (bios or uefi)", driver.ErrInvalidParameter, mode, t.Node.UUID)
	}
	keep := m.o.DisableBootTimeout
	if in.disableBootTimeout != nil {
		keep = *in.disableBootTimeout
	}
	if t.Log != nil {
		t.Log.Info("IPMI set boot device", "bmc", in.target.String(), "device", device,
			"persistent", persistent, "boot_mode", mode)
	}
	err = m.o.Client.SetBootDevice(ctx, in.target, bmc.SetBootOptions{
		Device: bmc.BootDevice(device), Persistent: persistent, EFI: mode == driver.BootModeUEFI, KeepValidBit: keep,
	})
	if mode == driver.BootModeBIOS && errors.Is(err, bmc.ErrBootFlagsRefused) {
		if t.Log != nil {
			t.Log.Warn("the BMC refused the boot device; going on, as Ironic does in BIOS mode (ipmitool chassis bootdev exits 0)",
				"bmc", in.target.String(), "device", device, "error", err)
		}
		return nil
	}
	return err
}

// BootDevice reads the boot device back (parameter 5); "" when the BMC
// has no override, as Ironic's None.
func (m Management) BootDevice(ctx context.Context, t *driver.Task) (string, bool, error) {
	in, err := parseDriverInfo(t.Node)
	if err != nil {
		return "", false, err
	}
	f, err := m.o.Client.BootDevice(ctx, in.target)
	if err != nil {
		return "", false, err
	}
	return string(f.Device), f.Persistent, nil
}

// DetectVendor is the BMC's manufacturer as Ironic's detect_vendor gives
// it: ipmitool's "Manufacturer Name" of `mc info` (Get Device ID's
// manufacturer ID, named by the IANA registry), lower-cased.
func (m Management) DetectVendor(ctx context.Context, t *driver.Task) (string, error) {
	in, err := parseDriverInfo(t.Node)
	if err != nil {
		return "", err
	}
	d, err := m.o.Client.DeviceID(ctx, in.target)
	if err != nil {
		return "", err
	}
	return strings.ToLower(bmc.ManufacturerName(d.ManufacturerID)), nil
}
