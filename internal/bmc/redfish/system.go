package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// system finds the node's System: redfish_system_id as a path, or as a
// member Id, or the only System when it is not set.
func system(r *remote, ep Endpoint) (*schemas.ComputerSystem, error) {
	if strings.HasPrefix(ep.SystemID, "/") {
		sys, err := schemas.GetComputerSystem(r, ep.SystemID)
		if status(err) == http.StatusNotFound {
			return nil, fmt.Errorf("%w: System %s (driver_info[redfish_system_id]) does not exist", ErrNotFound, ep.SystemID)
		}
		return sys, err
	}
	systems, err := r.service.Systems()
	if err = flatten(err); err != nil {
		return nil, fmt.Errorf("list Systems: %w", err)
	}
	var ids []string
	for _, s := range systems {
		ids = append(ids, s.ODataID)
		if ep.SystemID != "" && (s.ID == ep.SystemID || path.Base(s.ODataID) == ep.SystemID) {
			return s, nil
		}
	}
	switch {
	case ep.SystemID != "":
		return nil, fmt.Errorf("%w: System %q (driver_info[redfish_system_id]) does not exist; the BMC has %v", ErrNotFound, ep.SystemID, ids)
	case len(systems) == 1:
		return systems[0], nil
	case len(systems) == 0:
		return nil, fmt.Errorf("%w: the BMC has no System", ErrNotFound)
	}
	return nil, fmt.Errorf("the BMC has %d Systems %v: set driver_info[redfish_system_id]", len(systems), ids)
}

// withSystem runs fn on the node's System, with do's retries.
func (c *Client) withSystem(ctx context.Context, ep Endpoint, step string, fn func(r *remote, sys *schemas.ComputerSystem) error) error {
	return c.withSystemMemo(ctx, ep, step, nil, fn)
}

// withSystemMemo is withSystem remembering the reads in m.
func (c *Client) withSystemMemo(ctx context.Context, ep Endpoint, step string, m *memo, fn func(r *remote, sys *schemas.ComputerSystem) error) error {
	return c.do(ctx, ep, step, m, func(r *remote) error {
		sys, err := system(r, ep)
		if err != nil {
			return err
		}
		return fn(r, sys)
	})
}

// SystemInfo is what a quick look at the System tells.
type SystemInfo struct {
	Path       string
	PowerState string // "On", "Off", "PoweringOn", "PoweringOff", or ""
	ResetTypes []string
	Boot       BootOverride
	// BootTargets are the override targets the System allows; empty when it does not say.
	BootTargets []string
	// BootModeSettable is whether BootSourceOverrideMode is present.
	BootModeSettable bool
	// Health is the System's Status.Health ("OK", "Warning", "Critical"),
	// "" when it has none.
	Health string
}

// BootOverride is a System's boot source override.
type BootOverride struct {
	Target  string // Pxe, Hdd, Cd, BiosSetup, None…
	Enabled string // Once, Continuous, Disabled
	Mode    string // UEFI, Legacy, or "" (not supported / leave as is)
}

// System reads the System's power state, reset types and boot override.
func (c *Client) System(ctx context.Context, ep Endpoint) (SystemInfo, error) {
	var info SystemInfo
	err := c.withSystem(ctx, ep, "get System", func(_ *remote, sys *schemas.ComputerSystem) error {
		info = systemInfo(sys)
		return nil
	})
	return info, err
}

func systemInfo(sys *schemas.ComputerSystem) SystemInfo {
	info := SystemInfo{
		Path:       sys.ODataID,
		PowerState: string(sys.PowerState),
		Boot: BootOverride{
			Target:  string(sys.Boot.BootSourceOverrideTarget),
			Enabled: string(sys.Boot.BootSourceOverrideEnabled),
			Mode:    string(sys.Boot.BootSourceOverrideMode),
		},
		BootModeSettable: sys.Boot.BootSourceOverrideMode != "",
		Health:           string(sys.Status.Health),
	}
	for _, t := range sys.Boot.AllowableBootSourceOverrideTargetValues {
		info.BootTargets = append(info.BootTargets, string(t))
	}
	if rts, err := sys.GetSupportedResetTypes(); err == nil {
		for _, rt := range rts {
			info.ResetTypes = append(info.ResetTypes, string(rt))
		}
	}
	return info
}

// Reset posts ComputerSystem.Reset with resetType, which must be one the
// System advertises (when it advertises any).
func (c *Client) Reset(ctx context.Context, ep Endpoint, resetType string) error {
	return c.withSystem(ctx, ep, "reset System ("+resetType+")", func(_ *remote, sys *schemas.ComputerSystem) error {
		_, err := sys.Reset(schemas.ResetType(resetType))
		return err
	})
}

// SetBoot sets the boot source override. Mode is sent only when not empty.
func (c *Client) SetBoot(ctx context.Context, ep Endpoint, b BootOverride) error {
	return c.withSystem(ctx, ep, "set boot override to "+b.Target+"/"+b.Enabled, func(r *remote, sys *schemas.ComputerSystem) error {
		boot := map[string]any{"BootSourceOverrideTarget": b.Target, "BootSourceOverrideEnabled": b.Enabled}
		if b.Mode != "" {
			boot["BootSourceOverrideMode"] = b.Mode
		}
		resp, err := r.Patch(sys.ODataID, map[string]any{"Boot": boot})
		schemas.DeferredCleanupHTTPResponse(resp)
		return err
	})
}

// VirtualMedia is one virtual media device.
type VirtualMedia struct {
	Path       string
	MediaTypes []string
	Image      string
	Inserted   bool
}

// cdMedia finds the CD/DVD virtual media devices: the System's own, else
// those of the Managers that manage it, else of every Manager.
func cdMedia(r *remote, sys *schemas.ComputerSystem) ([]*schemas.VirtualMedia, error) {
	var all []*schemas.VirtualMedia
	vms, err := sys.VirtualMedia()
	err = flatten(err)
	if err != nil && status(err) != http.StatusNotFound {
		return nil, fmt.Errorf("list the System's VirtualMedia: %w", err)
	}
	all = append(all, vms...)
	if len(all) == 0 {
		managers, err := sys.ManagedBy()
		if err != nil || len(managers) == 0 {
			managers, err = r.service.Managers()
		}
		err = flatten(err)
		if err != nil {
			return nil, fmt.Errorf("list Managers: %w", err)
		}
		for _, m := range managers {
			vms, err := m.VirtualMedia()
			err = flatten(err)
			if err != nil {
				if status(err) == http.StatusNotFound {
					continue
				}
				return nil, fmt.Errorf("list VirtualMedia of Manager %s: %w", m.ODataID, err)
			}
			all = append(all, vms...)
		}
	}
	var cds []*schemas.VirtualMedia
	for _, vm := range all {
		if slices.ContainsFunc(vm.MediaTypes, func(t schemas.VirtualMediaType) bool {
			return t == schemas.CDVirtualMediaType || t == schemas.DVDVirtualMediaType
		}) {
			cds = append(cds, vm)
		}
	}
	return cds, nil
}

// ErrNoVirtualMedia is wrapped when the BMC has no virtual CD for the System.
var ErrNoVirtualMedia = errors.New("the BMC exposes no CD or DVD virtual media for this System")

// CDs lists the virtual CD/DVD devices of the System.
func (c *Client) CDs(ctx context.Context, ep Endpoint) ([]VirtualMedia, error) {
	var out []VirtualMedia
	err := c.withSystem(ctx, ep, "list virtual media", func(r *remote, sys *schemas.ComputerSystem) error {
		cds, err := cdMedia(r, sys)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, vm := range cds {
			v := VirtualMedia{Path: vm.ODataID, Image: vm.Image, Inserted: gofish.Deref(vm.Inserted)}
			for _, t := range vm.MediaTypes {
				v.MediaTypes = append(v.MediaTypes, string(t))
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// InsertCD ejects whatever the first virtual CD holds and inserts image.
func (c *Client) InsertCD(ctx context.Context, ep Endpoint, image string) error {
	return c.withSystem(ctx, ep, "insert virtual media", func(r *remote, sys *schemas.ComputerSystem) error {
		cds, err := cdMedia(r, sys)
		if err != nil {
			return err
		}
		if len(cds) == 0 {
			return ErrNoVirtualMedia
		}
		vm := cds[0]
		if gofish.Deref(vm.Inserted) || vm.Image != "" {
			if _, err := vm.EjectMedia(); err != nil {
				return fmt.Errorf("eject %s from %s: %w", vm.Image, vm.ODataID, err)
			}
		}
		// Inserted and WriteProtected default to true; like sushy, ferro
		// does not send them, as some BMCs refuse parameters they lack.
		if _, err := vm.InsertMedia(&schemas.VirtualMediaInsertMediaParameters{Image: image}); err != nil {
			return fmt.Errorf("insert into %s: %w", vm.ODataID, err)
		}
		return nil
	})
}

// EjectCDs ejects every virtual CD of the System that holds media whose
// image keep accepts (nil: all). Ejecting an empty device is skipped, so
// it is idempotent.
func (c *Client) EjectCDs(ctx context.Context, ep Endpoint, match func(image string) bool) error {
	return c.withSystem(ctx, ep, "eject virtual media", func(r *remote, sys *schemas.ComputerSystem) error {
		cds, err := cdMedia(r, sys)
		if err != nil {
			return err
		}
		var errs []error
		for _, vm := range cds {
			if !gofish.Deref(vm.Inserted) && vm.Image == "" {
				continue
			}
			if match != nil && !match(vm.Image) {
				continue
			}
			if _, err := vm.EjectMedia(); err != nil {
				errs = append(errs, fmt.Errorf("eject %s: %w", vm.ODataID, err))
			}
		}
		return errors.Join(errs...)
	})
}

// Firmware is what Ironic's redfish firmware interface caches: the
// System's BiosVersion, its Manager's FirmwareVersion and Model ("" when
// the BMC does not say), and the firmware of the NetworkAdapters of its
// first Chassis.
type Firmware struct {
	BIOSVersion, BMCVersion, BMCModel string
	NICs                              []NICFirmware
	// NICError is why the NetworkAdapters could not be read (Ironic logs
	// it and caches the other components); nil when they were, or when
	// the System has no Chassis or its Chassis no NetworkAdapters.
	NICError error
}

// NICFirmware is one controller of a NetworkAdapter that names its
// FirmwarePackageVersion, with the adapter's Id and identity.
type NICFirmware struct {
	AdapterID, Version, Manufacturer, Model, SerialNumber string
}

// FirmwareVersions reads the System's and its first Manager's firmware
// versions and its NICs'. A Manager or NetworkAdapters that cannot be read
// leave their fields empty, as Ironic goes on without them.
func (c *Client) FirmwareVersions(ctx context.Context, ep Endpoint) (Firmware, error) {
	var fw Firmware
	err := c.withSystem(ctx, ep, "read firmware versions", func(r *remote, sys *schemas.ComputerSystem) error {
		fw = Firmware{BIOSVersion: sys.BiosVersion}
		managers, err := sys.ManagedBy()
		if err != nil || len(managers) == 0 {
			managers, err = r.service.Managers()
		}
		if err == nil && len(managers) > 0 {
			fw.BMCVersion, fw.BMCModel = managers[0].FirmwareVersion, managers[0].Model
		}
		fw.NICs, fw.NICError = nicFirmware(sys)
		return nil
	})
	return fw, err
}

// nicFirmware is Ironic's retrieve_nic_components: the controllers of the
// NetworkAdapters of the System's first Chassis, those with a
// FirmwarePackageVersion. No Chassis, or a Chassis without
// NetworkAdapters, is no NIC and no error.
func nicFirmware(sys *schemas.ComputerSystem) ([]NICFirmware, error) {
	chassis, err := sys.Chassis()
	if err != nil || len(chassis) == 0 {
		return nil, nil
	}
	adapters, err := chassis[0].NetworkAdapters()
	if err = flatten(err); err != nil {
		return nil, fmt.Errorf("read the NetworkAdapters of %s: %w", chassis[0].ODataID, err)
	}
	var out []NICFirmware
	for _, a := range adapters {
		for _, ctl := range a.Controllers {
			if ctl.FirmwarePackageVersion == "" {
				continue
			}
			out = append(out, NICFirmware{AdapterID: a.ID, Version: ctl.FirmwarePackageVersion,
				Manufacturer: a.Manufacturer, Model: a.Model, SerialNumber: a.SerialNumber})
		}
	}
	return out, nil
}
