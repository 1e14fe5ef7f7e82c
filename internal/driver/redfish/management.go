package redfish

import (
	"context"
	"fmt"
	"slices"

	"github.com/ferrometal/ferro/internal/baremetal"
	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/driver"
)

// OnceReadsContinuousKey in driver_internal_info records that the BMC
// showed a one-time override as Continuous: the override is then cleared
// explicitly once it has served (see ClearBootOverride).
const OnceReadsContinuousKey = "redfish_boot_once_reads_continuous"

// targets maps Ironic's boot devices onto BootSourceOverrideTarget.
var targets = map[string]string{
	baremetal.BootDevicePXE:   "Pxe",
	baremetal.BootDeviceDisk:  "Hdd",
	baremetal.BootDeviceCDROM: "Cd",
	baremetal.BootDeviceBIOS:  "BiosSetup",
}

// Management is the redfish management interface: the boot source override.
type Management struct{ o Options }

// NewManagement returns the interface.
func NewManagement(o Options) *Management {
	o.defaults()
	return &Management{o: o}
}

// Validate checks driver_info; it does not reach the BMC.
func (m *Management) Validate(_ context.Context, t *driver.Task) error {
	_, err := Endpoint(t, m.o.AuthType)
	return err
}

// SupportedBootDevices lists the devices whose targets the System allows
// (all four when it does not say).
func (m *Management) SupportedBootDevices(ctx context.Context, t *driver.Task) ([]string, error) {
	ep, err := Endpoint(t, m.o.AuthType)
	if err != nil {
		return nil, err
	}
	info, err := m.o.Client.System(ctx, ep)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, dev := range []string{baremetal.BootDevicePXE, baremetal.BootDeviceDisk, baremetal.BootDeviceCDROM, baremetal.BootDeviceBIOS} {
		if len(info.BootTargets) == 0 || slices.Contains(info.BootTargets, targets[dev]) {
			out = append(out, dev)
		}
	}
	return out, nil
}

// SetBootDevice sets the override to device, Once or Continuous, in the
// node's boot mode (its boot_mode capability, else [deploy]default_boot_mode,
// as driver.BootMode decides) when the System has a BootSourceOverrideMode. A BMC that shows Once as Continuous is tolerated
// and remembered.
func (m *Management) SetBootDevice(ctx context.Context, t *driver.Task, device string, persistent bool) error {
	target, ok := targets[device]
	if !ok {
		return fmt.Errorf("%w: invalid boot device %s, valid boot devices are [bios cdrom disk pxe]", driver.ErrInvalidParameter, device)
	}
	ep, err := Endpoint(t, m.o.AuthType)
	if err != nil {
		return err
	}
	info, err := m.o.Client.System(ctx, ep)
	if err != nil {
		return err
	}
	if len(info.BootTargets) > 0 && !slices.Contains(info.BootTargets, target) {
		return &bmc.Error{BMC: ep.Address, Step: "set boot device " + device,
			Err: fmt.Errorf("%w: the System allows boot targets %v, not %s", driver.ErrUnsupported, info.BootTargets, target)}
	}
	o := bmc.BootOverride{Target: target, Enabled: "Once"}
	if persistent {
		o.Enabled = "Continuous"
	}
	if info.BootModeSettable {
		switch driver.BootMode(t.Node, m.o.DefaultBootMode) {
		case driver.BootModeUEFI:
			o.Mode = "UEFI"
		case driver.BootModeBIOS:
			o.Mode = "Legacy"
		}
	}
	if err := m.o.Client.SetBoot(ctx, ep, o); err != nil {
		return err
	}
	delete(t.Node.DriverInternalInfo, OnceReadsContinuousKey)
	if !persistent {
		after, err := m.o.Client.System(ctx, ep)
		if err == nil && after.Boot.Enabled == "Continuous" {
			logger(t).WarnContext(ctx, "the BMC shows a one-time boot override as Continuous; ferro clears it after use",
				"bmc", ep.Address, "target", target)
			if t.Node.DriverInternalInfo == nil {
				t.Node.DriverInternalInfo = map[string]any{}
			}
			t.Node.DriverInternalInfo[OnceReadsContinuousKey] = true
		}
	}
	return nil
}

// BootDevice reads the override back; Hdd with the override disabled is
// disk, persistent, as Ironic reports it.
func (m *Management) BootDevice(ctx context.Context, t *driver.Task) (string, bool, error) {
	ep, err := Endpoint(t, m.o.AuthType)
	if err != nil {
		return "", false, err
	}
	info, err := m.o.Client.System(ctx, ep)
	if err != nil {
		return "", false, err
	}
	if info.Boot.Enabled == "" || info.Boot.Enabled == "Disabled" {
		return baremetal.BootDeviceDisk, true, nil
	}
	dev := ""
	for d, tg := range targets {
		if tg == info.Boot.Target {
			dev = d
		}
	}
	persistent := info.Boot.Enabled == "Continuous"
	if once, _ := t.Node.DriverInternalInfo[OnceReadsContinuousKey].(bool); once {
		persistent = false
	}
	return dev, persistent, nil
}

// ClearBootOverride disables the override when the BMC kept a one-time
// one as Continuous (recorded by SetBootDevice); otherwise it does nothing.
func (m *Management) ClearBootOverride(ctx context.Context, t *driver.Task) error {
	if once, _ := t.Node.DriverInternalInfo[OnceReadsContinuousKey].(bool); !once {
		return nil
	}
	ep, err := Endpoint(t, m.o.AuthType)
	if err != nil {
		return err
	}
	if err := m.o.Client.SetBoot(ctx, ep, bmc.BootOverride{Target: "None", Enabled: "Disabled"}); err != nil {
		return err
	}
	delete(t.Node.DriverInternalInfo, OnceReadsContinuousKey)
	return nil
}

// MACAddresses returns the MAC addresses of the System's enabled
// EthernetInterfaces (Ironic's get_mac_addresses), for the ports the agent
// inspect interface creates before it boots the node.
func (m *Management) MACAddresses(ctx context.Context, t *driver.Task) ([]string, error) {
	ep, err := Endpoint(t, m.o.AuthType)
	if err != nil {
		return nil, err
	}
	hw, err := m.o.Client.Hardware(ctx, ep)
	if err != nil {
		return nil, err
	}
	var macs []string
	for _, n := range hw.NICs {
		if n.Enabled && n.MAC != "" {
			macs = append(macs, n.MAC)
		}
	}
	return macs, nil
}

var _ driver.MACLister = (*Management)(nil)

// Health is the System's Status.Health as Ironic's get_node_health maps it
// (OK, Warning, Critical); any other value, or none, is "".
func (m *Management) Health(ctx context.Context, t *driver.Task) (string, error) {
	ep, err := Endpoint(t, m.o.AuthType)
	if err != nil {
		return "", err
	}
	info, err := m.o.Client.System(ctx, ep)
	if err != nil {
		return "", err
	}
	switch info.Health {
	case baremetal.HealthOK, baremetal.HealthWarning, baremetal.HealthCritical:
		return info.Health, nil
	}
	return "", nil
}
