package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// InventoryStore stores what inspection found, for GET /v1/nodes/{node}/inventory.
type InventoryStore interface {
	SaveInventory(ctx context.Context, inv *baremetal.Inventory) error
}

// PortStore is what out-of-band inspection needs to add ports.
type PortStore interface {
	CreatePort(ctx context.Context, p *baremetal.Port) error
	GetPortByAddress(ctx context.Context, address string) (*baremetal.Port, error)
}

// InspectOptions add the stores to Options.
type InspectOptions struct {
	Options
	Inventory InventoryStore // nil: [inventory]data_backend=none
	Ports     PortStore
}

// Inspect is the redfish inspect interface: out-of-band inspection from
// the System's Processors, Memory, Storage/SimpleStorage and
// EthernetInterfaces, in seconds and without booting the node.
type Inspect struct{ o InspectOptions }

// NewInspect returns the interface.
func NewInspect(o InspectOptions) *Inspect {
	o.defaults()
	return &Inspect{o: o}
}

// Validate checks driver_info; it does not reach the BMC.
func (i *Inspect) Validate(_ context.Context, t *driver.Task) error {
	_, err := Endpoint(t, i.o.AuthType)
	return err
}

const (
	gib = int64(1) << 30
	// minRootDisk is the agent's rule for the root disk without hints:
	// the smallest disk of at least 4 GiB (IPA's get_os_install_device).
	minRootDisk = 4 * gib
)

// RootDisk returns the index of the disk the in-band agent would pick
// without root device hints, the smallest of at least 4 GiB, or -1.
func RootDisk(disks []inventory.Disk) int {
	best := -1
	for i, d := range disks {
		if d.Size >= minRootDisk && (best < 0 || d.Size < disks[best].Size) {
			best = i
		}
	}
	return best
}

// LocalGB is the in-band root_disk_selection rule: size // GiB - 1, 0
// without a disk.
func LocalGB(size int64) int64 {
	return max(0, size/gib-1)
}

// InspectHardware reads the hardware, sets cpus, cpu_arch, memory_mb,
// local_gb and the boot_mode capability, adds ports for new MACs and
// stores the inventory in the agent's schema. It finishes synchronously.
func (i *Inspect) InspectHardware(ctx context.Context, t *driver.Task) (string, error) {
	ep, err := Endpoint(t, i.o.AuthType)
	if err != nil {
		return "", &driver.PhaseError{Phase: "reading redfish driver_info", Err: err}
	}
	hw, err := i.o.Client.Hardware(ctx, ep)
	if err != nil {
		return "", &driver.PhaseError{Phase: "inspecting out of band", Err: err}
	}
	inv := Inventory(hw)
	var missing []string
	if inv.CPU.Count == 0 {
		missing = append(missing, "cpus")
	}
	if inv.CPU.Architecture == "" {
		missing = append(missing, "cpu_arch")
	}
	if inv.Memory.PhysicalMB == 0 {
		missing = append(missing, "memory_mb")
	}
	if len(missing) > 0 {
		return "", &driver.PhaseError{Phase: "inspecting out of band", Err: &bmc.Error{BMC: ep.Address, Step: "read hardware",
			Err: fmt.Errorf("failed to discover %s from the System", strings.Join(missing, ", "))}}
	}
	var root *inventory.Disk
	r := RootDisk(inv.Disks)
	if hints, _ := t.Node.Properties["root_device"].(map[string]any); len(hints) > 0 {
		// The node's root device hints, as the in-band root_disk_selection hook applies them.
		if r, err = inspection.RootDevice(inv.Disks, hints); err != nil {
			return "", &driver.PhaseError{Phase: "choosing the root disk", Err: err}
		}
	}
	if r >= 0 {
		root = &inv.Disks[r]
	}
	localGB := int64(0)
	if root != nil {
		localGB = LocalGB(root.Size)
	}
	if t.Node.Properties == nil {
		t.Node.Properties = map[string]any{}
	}
	// Strings, as the in-band scheduler and root_disk_selection hooks write them.
	t.Node.Properties["cpus"] = strconv.Itoa(inv.CPU.Count)
	t.Node.Properties["cpu_arch"] = inv.CPU.Architecture
	t.Node.Properties["memory_mb"] = strconv.Itoa(inv.Memory.PhysicalMB)
	t.Node.Properties["local_gb"] = strconv.FormatInt(localGB, 10)
	if hw.BootMode != "" {
		setCapability(t, "boot_mode", hw.BootMode)
	}
	if err := i.addPorts(ctx, t, inv.Interfaces); err != nil {
		return "", &driver.PhaseError{Phase: "creating ports", Err: err}
	}
	if i.o.Inventory != nil {
		plugin := map[string]any{"inspect_interface": "redfish"}
		if root != nil {
			plugin["root_disk"] = diskJSON(*root)
		}
		if err := i.o.Inventory.SaveInventory(ctx, &baremetal.Inventory{NodeUUID: t.Node.UUID, Inventory: inventoryJSON(inv), PluginData: plugin}); err != nil {
			return "", &driver.PhaseError{Phase: "storing the inventory", Err: err}
		}
	}
	logger(t).InfoContext(ctx, "inspected out of band", "bmc", ep.Address, "cpus", inv.CPU.Count,
		"memory_mb", inv.Memory.PhysicalMB, "local_gb", localGB, "nics", len(inv.Interfaces), "memory_source", hw.MemorySource)
	return states.Manageable, nil
}

// addPorts creates a port for every MAC no port has yet; a MAC that
// belongs to another node's port is left alone, with a warning.
func (i *Inspect) addPorts(ctx context.Context, t *driver.Task, ifaces []inventory.Interface) error {
	if i.o.Ports == nil {
		return nil
	}
	have := map[string]bool{}
	for _, p := range t.Ports {
		if mac, ok := inventory.NormalizeMAC(p.Address); ok {
			have[mac] = true
		}
	}
	for _, iface := range ifaces {
		mac, ok := inventory.NormalizeMAC(iface.MACAddress)
		if !ok || have[mac] {
			continue
		}
		have[mac] = true
		other, err := i.o.Ports.GetPortByAddress(ctx, mac)
		switch {
		case err == nil:
			logger(t).WarnContext(ctx, "MAC found by inspection already has a port of another node", "mac", mac, "port", other.UUID, "other_node", other.NodeUUID)
			continue
		case !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("look up port %s: %w", mac, err)
		}
		p := &baremetal.Port{UUID: uuid.NewString(), Address: mac, NodeUUID: t.Node.UUID, PXEEnabled: true,
			LocalLinkConnection: map[string]any{}, Extra: map[string]any{}, InternalInfo: map[string]any{}}
		if err := i.o.Ports.CreatePort(ctx, p); err != nil {
			return fmt.Errorf("create port %s: %w", mac, err)
		}
		t.Ports = append(t.Ports, p)
		logger(t).InfoContext(ctx, "port created", "mac", mac, "port", p.UUID)
	}
	return nil
}

// Inventory turns what the BMC told into the agent's inventory schema.
func Inventory(hw *bmc.Hardware) *inventory.Inventory {
	inv := &inventory.Inventory{
		CPU:    &inventory.CPU{ModelName: hw.CPUModel, Count: hw.CPUs, Architecture: hw.CPUArch, SocketCount: hw.CPUSockets},
		Memory: &inventory.Memory{Total: hw.MemoryMiB << 20, PhysicalMB: int(hw.MemoryMiB)},
		SystemVendor: &inventory.SystemVendor{ProductName: hw.Model, SerialNumber: hw.SerialNumber, Manufacturer: hw.Manufacturer,
			Firmware: &inventory.Firmware{Version: hw.BIOSVersion}},
		Interfaces: []inventory.Interface{},
		Disks:      []inventory.Disk{},
	}
	if hw.CPUMaxMHz > 0 {
		inv.CPU.Frequency = strconv.Itoa(hw.CPUMaxMHz)
	}
	if hw.BootMode != "" {
		inv.Boot = &inventory.Boot{CurrentBootMode: hw.BootMode}
	}
	for _, n := range hw.NICs {
		mac, ok := inventory.NormalizeMAC(n.MAC)
		if !ok {
			mac = strings.ToLower(n.MAC)
		}
		inv.Interfaces = append(inv.Interfaces, inventory.Interface{Name: n.Name, MACAddress: mac, HasCarrier: n.LinkUp, SpeedMbps: n.SpeedMbps})
	}
	for _, d := range hw.Disks {
		inv.Disks = append(inv.Disks, inventory.Disk{Name: d.Name, Size: d.SizeBytes, Model: d.Model, Vendor: d.Vendor, Serial: d.Serial, Rotational: d.Rotational})
	}
	return inv
}

// Abort is not supported: the inspection is over before it could be asked.
func (i *Inspect) Abort(context.Context, *driver.Task) error {
	return fmt.Errorf("%w: redfish inspection is synchronous and cannot be aborted", driver.ErrUnsupported)
}

// Status is not supported: nothing waits.
func (i *Inspect) Status(context.Context, *driver.Task) (driver.InspectStatus, error) {
	return driver.InspectStatus{}, fmt.Errorf("%w: redfish inspection is synchronous", driver.ErrUnsupported)
}

// Finish has nothing to do.
func (i *Inspect) Finish(context.Context, *driver.Task, driver.InspectStatus) error { return nil }

// inventoryJSON is inv as generic JSON, as stored for the inventory API.
func inventoryJSON(inv *inventory.Inventory) map[string]any { return toJSON(inv) }

func diskJSON(d inventory.Disk) map[string]any { return toJSON(d) }

func toJSON(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}
