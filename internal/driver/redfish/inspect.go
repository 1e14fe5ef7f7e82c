package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/rootdevice"
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

const gib = int64(1) << 30

// LocalGB is Ironic's local_gb of a root disk: size // GiB - 1, 0 without
// a disk.
func LocalGB(size int64) int64 {
	return max(0, size/gib-1)
}

// essentialProperties are the properties an inspection must leave set,
// discovered or enrolled (Ironic master's ESSENTIAL_PROPERTIES).
var essentialProperties = []string{"memory_mb", "local_gb", "cpu_arch"}

// InspectHardware reads the hardware as Ironic's redfish inspect interface
// does, sets cpus, cpu_arch, memory_mb, local_gb and (when the node has
// none) the boot_mode capability, adds ports for the enabled NICs and
// stores the inventory in the agent's schema. What the BMC does not tell
// keeps the value the node was enrolled with; storage errors are logged
// and skipped. It finishes synchronously.
func (i *Inspect) InspectHardware(ctx context.Context, t *driver.Task) (string, error) {
	ep, err := Endpoint(t, i.o.AuthType)
	if err != nil {
		return "", &driver.PhaseError{Phase: "reading redfish driver_info", Err: err}
	}
	hw, err := i.o.Client.Hardware(ctx, ep)
	if err != nil {
		return "", &driver.PhaseError{Phase: "inspecting out of band", Err: err}
	}
	log := logger(t)
	for _, s := range hw.Skipped {
		log.WarnContext(ctx, "storage resource skipped, as Ironic skips storage errors", "bmc", ep.Address, "error", s)
	}
	inv := Inventory(hw)
	var root *inventory.Disk
	localBytes := hw.LocalBytes
	if hints, _ := t.Node.Properties["root_device"].(map[string]any); len(hints) > 0 {
		// The node's root device hints, as the in-band root_disk_selection
		// hook applies them (Ironic's redfish inspection ignores them).
		r, err := rootdevice.Match(inv.Disks, hints)
		if err != nil {
			return "", &driver.PhaseError{Phase: "choosing the root disk", Err: err}
		}
		root, localBytes = &inv.Disks[r], inv.Disks[r].Size
	} else if hw.LocalSource == "drive" || hw.LocalSource == "simple storage" {
		for k := range inv.Disks {
			if inv.Disks[k].Size == hw.LocalBytes {
				root = &inv.Disks[k]
				break
			}
		}
	}
	props := maps.Clone(t.Node.Properties)
	if props == nil {
		props = map[string]any{}
	}
	// Strings, as the in-band scheduler and root_disk_selection hooks write them.
	if inv.CPU.Count > 0 {
		props["cpus"] = strconv.Itoa(inv.CPU.Count)
	}
	if inv.CPU.Architecture != "" {
		props["cpu_arch"] = inv.CPU.Architecture
	}
	if inv.Memory.PhysicalMB > 0 {
		props["memory_mb"] = strconv.Itoa(inv.Memory.PhysicalMB)
	}
	props["local_gb"] = strconv.FormatInt(LocalGB(localBytes), 10)
	var missing []string
	for _, k := range essentialProperties {
		if v, ok := props[k]; !ok || v == nil || v == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return "", &driver.PhaseError{Phase: "inspecting out of band", Err: &bmc.Error{BMC: ep.Address, Step: "read hardware",
			Err: fmt.Errorf("failed to discover the following properties: %s (neither the BMC nor the enrolled properties have them)", strings.Join(missing, ", "))}}
	}
	t.Node.Properties = props
	if hw.BootMode != "" && capability(t, "boot_mode") == "" {
		setCapability(t, "boot_mode", hw.BootMode)
	}
	if err := i.addPorts(ctx, t, hw.NICs); err != nil {
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
	log.InfoContext(ctx, "inspected out of band", "bmc", ep.Address, "cpus", inv.CPU.Count,
		"memory_mb", inv.Memory.PhysicalMB, "local_gb", props["local_gb"], "local_from", hw.LocalSource, "nics", len(inv.Interfaces),
		"memory_source", hw.MemorySource, "storage_skipped", len(hw.Skipped), "most_fetches_of_one_resource", hw.Fetches)
	return states.Manageable, nil
}

// addPorts creates a port for every enabled NIC (Ironic's rule: Status
// Enabled, Health OK) whose MAC no port has yet; a MAC that belongs to
// another node's port is left alone, with a warning.
func (i *Inspect) addPorts(ctx context.Context, t *driver.Task, nics []bmc.NIC) error {
	if i.o.Ports == nil {
		return nil
	}
	have := map[string]bool{}
	for _, p := range t.Ports {
		if mac, ok := inventory.NormalizeMAC(p.Address); ok {
			have[mac] = true
		}
	}
	for _, n := range nics {
		mac, ok := inventory.NormalizeMAC(n.MAC)
		if !n.Enabled || !ok || have[mac] {
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
