package vbmc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
)

// BootDevice is a boot source override target, named as Redfish names them.
type BootDevice string

// Boot devices.
const (
	BootNone      BootDevice = "None"
	BootPxe       BootDevice = "Pxe"
	BootHdd       BootDevice = "Hdd"
	BootCd        BootDevice = "Cd"
	BootBiosSetup BootDevice = "BiosSetup"
)

// BootEnabled says whether a boot override applies, and for how long.
type BootEnabled string

// Boot override lifetimes.
const (
	BootDisabled   BootEnabled = "Disabled"
	BootOnce       BootEnabled = "Once"
	BootContinuous BootEnabled = "Continuous"
)

// BootMode is the firmware boot mode of an override.
type BootMode string

// Boot modes.
const (
	BootUEFI   BootMode = "UEFI"
	BootLegacy BootMode = "Legacy"
)

// BootOverride is a machine's boot source override, shared by IPMI (Set
// System Boot Options parameter 5) and Redfish (ComputerSystem.Boot).
type BootOverride struct {
	Target  BootDevice
	Enabled BootEnabled
	Mode    BootMode
}

// BootRequest is what a backend is told when the machine powers on or
// resets: the device to boot from (BootNone: the firmware's own order) and
// the virtual CD's image file, when one is inserted.
type BootRequest struct {
	Device BootDevice
	// Persistent: the override is Continuous, so it applies to the guest's
	// own reboots too.
	Persistent bool
	UEFI       bool
	ISO        string
}

// Backend is what powering a machine means. The Machine serialises calls
// per machine; a backend need not be safe for concurrent use by one Machine,
// but calls for different machines run in parallel.
type Backend interface {
	// PowerState reports whether the machine is on.
	PowerState(ctx context.Context) (bool, error)
	// PowerOn starts the machine (it is off) booting as req says.
	PowerOn(ctx context.Context, req BootRequest) error
	// PowerOff stops the machine at once (it is on).
	PowerOff(ctx context.Context) error
	// Shutdown asks the guest to shut down (ACPI power button); it may
	// ignore it.
	Shutdown(ctx context.Context) error
	// Reset restarts the machine at once (it is on), booting as req says.
	Reset(ctx context.Context, req BootRequest) error
	// NMI sends a non-maskable interrupt.
	NMI(ctx context.Context) error
	// Close stops the machine and releases what the backend holds.
	Close() error
}

// VirtualMedia is the state of a machine's virtual CD.
type VirtualMedia struct {
	// Image is the URL inserted, empty when nothing is.
	Image string
	// ImageName is the last path element of Image.
	ImageName string
	// File is the local copy of the image.
	File string
	// Size is the image's size in bytes.
	Size int64
	// Inserted and WriteProtected are as Redfish reports them.
	Inserted       bool
	WriteProtected bool
}

// ErrConflict is returned for requests the machine's state forbids (insert
// over an inserted image).
var ErrConflict = errors.New("conflict")

// Machine is one virtual machine and the state its BMC holds: power goes to
// the backend, the boot override and virtual media live here. Each machine
// has its own lock: operations on different machines never wait on each other.
type Machine struct {
	Config MachineConfig
	// UUID is the system UUID (stable for a name).
	UUID string
	dir  string // the machine's directory under the state dir

	mu      sync.Mutex
	backend Backend
	boot    BootOverride
	vmedia  VirtualMedia
	// lastBoot is what the last power-on or reset was told.
	lastBoot BootRequest
	boots    int
	nmis     int
}

func newMachine(cfg MachineConfig, dir string, backend Backend) *Machine {
	return &Machine{
		Config:  cfg,
		UUID:    nameUUID(cfg.Name),
		dir:     dir,
		backend: backend,
		boot:    BootOverride{Target: BootNone, Enabled: BootDisabled, Mode: BootLegacy},
		vmedia:  VirtualMedia{WriteProtected: true},
	}
}

// Name returns the machine's name.
func (m *Machine) Name() string { return m.Config.Name }

// PowerState reports whether the machine is on.
func (m *Machine) PowerState(ctx context.Context) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.backend.PowerState(ctx)
}

// PowerOn powers the machine on (a no-op when it is on), consuming a
// one-time boot override.
func (m *Machine) PowerOn(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	on, err := m.backend.PowerState(ctx)
	if err != nil || on {
		return err
	}
	return m.powerOnLocked(ctx)
}

func (m *Machine) powerOnLocked(ctx context.Context) error {
	// A client that gives up must not leave a half-started VM behind.
	ctx = context.WithoutCancel(ctx)
	req := m.bootRequestLocked()
	if err := m.backend.PowerOn(ctx, req); err != nil {
		return fmt.Errorf("power on %s: %w", m.Name(), err)
	}
	m.bootUsedLocked(req)
	return nil
}

// bootRequestLocked is the boot the override asks for now.
func (m *Machine) bootRequestLocked() BootRequest {
	req := BootRequest{Device: BootNone, UEFI: m.boot.Mode == BootUEFI}
	if m.boot.Enabled != BootDisabled {
		req.Device = m.boot.Target
		req.Persistent = m.boot.Enabled == BootContinuous
	}
	if m.vmedia.Inserted {
		req.ISO = m.vmedia.File
	}
	return req
}

// bootUsedLocked clears a one-time override once a boot has used it, as a
// BMC does (IPMI: the boot flags valid bit; Redfish: Enabled → Disabled).
func (m *Machine) bootUsedLocked(req BootRequest) {
	m.lastBoot = req
	m.boots++
	if m.boot.Enabled == BootOnce {
		m.boot.Enabled = BootDisabled
		m.boot.Target = BootNone
	}
}

// PowerOff powers the machine off at once (a no-op when it is off).
func (m *Machine) PowerOff(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	on, err := m.backend.PowerState(ctx)
	if err != nil || !on {
		return err
	}
	if err := m.backend.PowerOff(ctx); err != nil {
		return fmt.Errorf("power off %s: %w", m.Name(), err)
	}
	return nil
}

// Shutdown asks the guest to shut down (a no-op when it is off).
func (m *Machine) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	on, err := m.backend.PowerState(ctx)
	if err != nil || !on {
		return err
	}
	if err := m.backend.Shutdown(ctx); err != nil {
		return fmt.Errorf("shut down %s: %w", m.Name(), err)
	}
	return nil
}

// Reset restarts the machine at once; a machine that is off is powered on.
func (m *Machine) Reset(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	on, err := m.backend.PowerState(ctx)
	if err != nil {
		return err
	}
	if !on {
		return m.powerOnLocked(ctx)
	}
	req := m.bootRequestLocked()
	if err := m.backend.Reset(context.WithoutCancel(ctx), req); err != nil {
		return fmt.Errorf("reset %s: %w", m.Name(), err)
	}
	m.bootUsedLocked(req)
	return nil
}

// PowerCycle powers the machine off (when on) and on again.
func (m *Machine) PowerCycle(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	on, err := m.backend.PowerState(ctx)
	if err != nil {
		return err
	}
	if on {
		if err := m.backend.PowerOff(ctx); err != nil {
			return fmt.Errorf("power cycle %s: %w", m.Name(), err)
		}
	}
	return m.powerOnLocked(ctx)
}

// NMI sends a diagnostic interrupt to a machine that is on.
func (m *Machine) NMI(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	on, err := m.backend.PowerState(ctx)
	if err != nil {
		return err
	}
	if !on {
		return fmt.Errorf("nmi %s: the machine is off: %w", m.Name(), ErrConflict)
	}
	m.nmis++
	return m.backend.NMI(ctx)
}

// Boot returns the boot override.
func (m *Machine) Boot() BootOverride {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.boot
}

// SetBoot replaces the boot override.
func (m *Machine) SetBoot(b BootOverride) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b.Enabled == BootDisabled || b.Target == BootNone {
		b.Target, b.Enabled = BootNone, BootDisabled
	}
	m.boot = b
}

// LastBoot returns what the last power-on or reset booted from.
func (m *Machine) LastBoot() BootRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastBoot
}

// Boots returns how many times the machine was powered on or reset.
func (m *Machine) Boots() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.boots
}

// VirtualMedia returns the virtual CD's state.
func (m *Machine) VirtualMedia() VirtualMedia {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.vmedia
}

// insertMedia records an image fetched into file. The caller fetched it
// without holding the lock; a concurrent insert that won loses nothing.
func (m *Machine) insertMedia(v VirtualMedia) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.vmedia.Inserted {
		return fmt.Errorf("virtual media of %s: %s is inserted, eject it first: %w", m.Name(), m.vmedia.Image, ErrConflict)
	}
	v.Inserted = true
	m.vmedia = v
	return nil
}

// EjectMedia ejects the virtual CD and removes its local copy. Ejecting an
// empty drive is not an error.
func (m *Machine) EjectMedia() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	file := m.vmedia.File
	m.vmedia = VirtualMedia{WriteProtected: true}
	if file != "" {
		if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the image of %s: %w", m.Name(), err)
		}
	}
	return nil
}

// close stops the machine's backend.
func (m *Machine) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.backend.Close()
}
