// Package driver declares the hardware interfaces a conductor drives (power,
// management, boot, network, inspect), the Task they act on, what a
// hardware type declares (HardwareType, Property; each type does so in its
// own folder under internal/driver), and the registry that resolves a
// node's interface names to implementations.
package driver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inspection"
)

// Errors that callers branch on. Wrap them with %w and say what was done.
var (
	// ErrUnsupported is Ironic's UnsupportedDriverExtension: the interface
	// cannot do this for this node. For inspection it means "fall back".
	ErrUnsupported = errors.New("unsupported driver extension")
	// ErrInvalidParameter is Ironic's InvalidParameterValue.
	ErrInvalidParameter = errors.New("invalid parameter value")
	// ErrMissingParameter is Ironic's MissingParameterValue.
	ErrMissingParameter = errors.New("missing parameter value")
)

// TaskStore is what a Task needs to persist the locked node and its ports.
type TaskStore interface {
	UpdateNode(ctx context.Context, n *baremetal.Node) error
	UpdatePort(ctx context.Context, p *baremetal.Port) error
}

// Task carries a node locked by a conductor, its ports and portgroups, and
// the resolved interfaces. Drivers change Node and Ports in place and call
// SaveNode/SavePort to persist.
type Task struct {
	Node       *baremetal.Node
	Ports      []*baremetal.Port
	Portgroups []*baremetal.Portgroup
	Driver     *Interfaces
	// Shared is true for a task that holds no exclusive lock; such a task must not save.
	Shared bool
	// Released is set by the conductor once it gave the lock back with the
	// task's last save; the task must not save after that.
	Released bool
	Log      *slog.Logger
	Store    TaskStore
}

// SaveNode persists the task's node.
func (t *Task) SaveNode(ctx context.Context) error { return t.Store.UpdateNode(ctx, t.Node) }

// SavePort persists one of the task's ports.
func (t *Task) SavePort(ctx context.Context, p *baremetal.Port) error {
	return t.Store.UpdatePort(ctx, p)
}

// PXEPorts returns the ports with pxe_enabled set, in their stored order.
func (t *Task) PXEPorts() []*baremetal.Port {
	var out []*baremetal.Port
	for _, p := range t.Ports {
		if p.PXEEnabled {
			out = append(out, p)
		}
	}
	return out
}

// Power switches a node on and off.
type Power interface {
	Validate(ctx context.Context, t *Task) error
	PowerState(ctx context.Context, t *Task) (string, error)
	// SetPowerState moves to baremetal.PowerOn, PowerOff or PowerReboot and
	// waits up to timeout for the node to get there.
	SetPowerState(ctx context.Context, t *Task, state string, timeout time.Duration) error
}

// LastPowerStateChangeKey is the driver_internal_info member Ironic stamps
// at every power action it does not skip (node_power_action).
const LastPowerStateChangeKey = "last_power_state_change"

// StampPowerChange records a power action towards target at now, unless
// Ironic would skip it: on or off when the node is there already.
func StampPowerChange(n *baremetal.Node, target string, now time.Time) {
	if target != baremetal.PowerReboot && target == n.PowerState {
		return
	}
	if n.DriverInternalInfo == nil {
		n.DriverInternalInfo = baremetal.JSON{}
	}
	n.DriverInternalInfo[LastPowerStateChangeKey] = pyISOFormat(now.UTC())
}

// pyISOFormat is Python's datetime.isoformat of a naive time:
// microseconds, unless they are zero.
func pyISOFormat(t time.Time) string {
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

// Management sets the boot device.
type Management interface {
	Validate(ctx context.Context, t *Task) error
	SetBootDevice(ctx context.Context, t *Task, device string, persistent bool) error
	BootDevice(ctx context.Context, t *Task) (device string, persistent bool, err error)
	SupportedBootDevices(ctx context.Context, t *Task) ([]string, error)
}

// HealthReader is a management interface that reads the hardware's
// overall health from the BMC (Ironic's get_node_health): one of
// baremetal.HealthOK, HealthWarning, HealthCritical, or "" when the BMC
// does not say. Interfaces without it are Ironic's UnsupportedDriverExtension.
type HealthReader interface {
	Health(ctx context.Context, t *Task) (string, error)
}

// VirtualMediaManager is a management interface that attaches images to
// the node's virtual media devices (Ironic's get_, attach_ and
// detach_virtual_media; API 1.89 and 1.93). Device types are Ironic's
// VMEDIA_DEVICES: VMediaCDROM, VMediaDisk, VMediaFloppy.
type VirtualMediaManager interface {
	VirtualMedia(ctx context.Context, t *Task) ([]VirtualMediaDevice, error)
	AttachVirtualMedia(ctx context.Context, t *Task, deviceType, imageURL string) error
	// DetachVirtualMedia ejects the devices of these types, all when nil.
	DetachVirtualMedia(ctx context.Context, t *Task, deviceTypes []string) error
}

// Virtual media device types (Ironic's boot_devices.VMEDIA_DEVICES).
const (
	VMediaDisk   = "disk"
	VMediaCDROM  = "cdrom"
	VMediaFloppy = "floppy"
)

// VMediaDevices are the device types in Ironic's order.
var VMediaDevices = []string{VMediaDisk, VMediaCDROM, VMediaFloppy}

// VirtualMediaDevice is one device as GET /v1/nodes/{node}/vmedia shows it.
type VirtualMediaDevice struct {
	MediaTypes []string
	Inserted   bool
	Image      string
}

// FirmwareReader is a firmware interface that reads the node's firmware
// components from the hardware (Ironic's cache_firmware_components): the
// conductor merges them into the node's cached list after inspection.
// Only Component, CurrentVersion, Vendor, Model and SerialNumber are read.
type FirmwareReader interface {
	FirmwareComponents(ctx context.Context, t *Task) ([]baremetal.FirmwareComponent, error)
}

// VendorDetector is a management interface that can name the hardware's
// vendor, as Ironic's detect_vendor: when a node is managed the conductor
// stores it in properties.vendor, unless one is set.
type VendorDetector interface {
	DetectVendor(ctx context.Context, t *Task) (string, error)
}

// MACLister is a management interface that reads the MAC addresses of the
// node's enabled NICs from the BMC (Ironic's get_mac_addresses), for the
// ports an in-band inspection creates before it boots anything. An
// interface without it (ipmitool, fake) is Ironic's
// UnsupportedDriverExtension: the step is skipped.
type MACLister interface {
	MACAddresses(ctx context.Context, t *Task) ([]string, error)
}

// RamdiskParams are kernel command-line parameters for the ramdisk, in order.
// A parameter with an empty Value and Flag set is written as a bare key.
type RamdiskParams []RamdiskParam

// RamdiskParam is one key=value (or bare key) kernel parameter.
type RamdiskParam struct {
	Key   string
	Value string
	Flag  bool
}

// Boot prepares and removes the ramdisk a node boots for inspection.
type Boot interface {
	Validate(ctx context.Context, t *Task) error
	// ValidateInspection returns ErrUnsupported when something needed for
	// a managed inspection is missing (fall back), and another error when
	// something set is invalid.
	ValidateInspection(ctx context.Context, t *Task) error
	PrepareRamdisk(ctx context.Context, t *Task, params RamdiskParams) error
	// CleanUpRamdisk removes everything PrepareRamdisk made; idempotent.
	CleanUpRamdisk(ctx context.Context, t *Task) error
}

// BootFileSweeper is a boot interface that keeps files per node on the
// conductor's disk. SweepBootFiles removes those of every node keep
// rejects and returns the nodes it cleaned; a conductor calls it at start.
type BootFileSweeper interface {
	SweepBootFiles(ctx context.Context, keep func(ctx context.Context, nodeUUID string) bool) ([]string, error)
}

// Network moves a node's ports between networks.
type Network interface {
	Validate(ctx context.Context, t *Task) error
	ValidateInspection(ctx context.Context, t *Task) error
	AddInspectionNetwork(ctx context.Context, t *Task) error
	// RemoveInspectionNetwork removes what AddInspectionNetwork made; idempotent.
	RemoveInspectionNetwork(ctx context.Context, t *Task) error
}

// InspectStatus is what an inspect interface reports about a running inspection.
type InspectStatus struct {
	Finished bool
	Error    string
}

// Inspect runs hardware inspection.
type Inspect interface {
	Validate(ctx context.Context, t *Task) error
	// InspectHardware starts (or does) inspection and returns the state the
	// node goes to next: states.InspectWait (asynchronous) or states.Manageable (done).
	InspectHardware(ctx context.Context, t *Task) (string, error)
	Abort(ctx context.Context, t *Task) error
	// Status is polled for nodes in inspect wait; ErrUnsupported for
	// interfaces that finish synchronously.
	Status(ctx context.Context, t *Task) (InspectStatus, error)
	// Finish runs after Status reports finished or failed: teardown and,
	// on success, storing what was learned. A returned error fails the node.
	Finish(ctx context.Context, t *Task, st InspectStatus) error
}

// Continuer is an inspect interface that processes the agent's report
// itself, in the conductor (Ironic's continue_inspection): the agent
// interface. The conductor calls it with the node's exclusive lock held,
// the node in inspecting (or, discovered, in enroll), on a worker.
type Continuer interface {
	// ContinueInspection processes the report, stores what was learned
	// and tears the inspection down. An error fails the inspection with
	// its message as last_error; the interface has torn down by then and
	// changed nothing else on the node.
	ContinueInspection(ctx context.Context, t *Task, rep *inspection.Report, extra map[string]any) error
}

// Validator is the validate-only interface of kinds ferro does not drive
// (deploy, raid, console, …), so GET /validate can report them.
type Validator interface {
	Validate(ctx context.Context, t *Task) error
}

// Interfaces is a node's resolved set of implementations.
type Interfaces struct {
	Names      map[string]string
	Power      Power
	Management Management
	Boot       Boot
	Network    Network
	Inspect    Inspect
	// Others holds the validate-only kinds by kind name.
	Others map[string]Validator
}

// PhaseError is an inspection failure that names the phase it failed in;
// its message becomes the node's last_error as is.
type PhaseError struct {
	Phase string
	Err   error
}

func (e *PhaseError) Error() string {
	return fmt.Sprintf("inspection failed while %s: %v", e.Phase, e.Err)
}

func (e *PhaseError) Unwrap() error { return e.Err }
