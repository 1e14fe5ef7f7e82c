package redfish

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// Hardware is what out-of-band inspection learns from a System, read as
// Ironic's redfish inspect interface (and sushy under it) reads it.
type Hardware struct {
	Manufacturer, Model, SerialNumber, BIOSVersion string

	// CPUs is the number of logical CPUs: the sum of the processors'
	// TotalThreads (sushy's ProcessorCollection.summary), else
	// ProcessorSummary's LogicalProcessorCount.
	CPUs int
	// CPUArch is Ironic's name (x86_64, aarch64, …) of the first
	// processor's InstructionSet, or "" when the System does not say.
	CPUArch    string
	CPUModel   string
	CPUSockets int
	CPUMaxMHz  int
	// MemoryMiB is MemorySummary.TotalSystemMemoryGiB, as Ironic reads it;
	// the DIMMs are summed only when the System has no MemorySummary size.
	MemoryMiB    int64
	MemorySource string // "MemorySummary" or "Memory" (the DIMMs)
	NICs         []NIC
	// Disks are the Storage drives, else the SimpleStorage devices.
	Disks []Disk
	// LocalBytes is the size Ironic's local_gb comes from
	// (_detect_local_gb): the smallest volume of at least 4 GiB, else the
	// smallest drive of at least 4 GiB, and the smallest enabled
	// SimpleStorage device of at least 4 GiB; the smaller of the two when
	// both exist. 0 means no disk.
	LocalBytes int64
	// LocalSource says where LocalBytes came from: "volume", "drive",
	// "simple storage", or "".
	LocalSource string
	// BootMode is uefi or bios from BootSourceOverrideMode, or "".
	BootMode string
	// Skipped are the storage resources that could not be read: Ironic
	// ignores storage errors, so they are reported, not failed on.
	Skipped []string
	// Fetches is the largest number of requests one resource took (1 when
	// each was read once), and FetchedMost that resource.
	Fetches     int
	FetchedMost string
}

// NIC is one EthernetInterface.
type NIC struct {
	Name      string
	MAC       string
	SpeedMbps int
	LinkUp    bool
	// Enabled is Ironic's rule for creating a port (redfish_utils
	// get_enabled_macs over sushy's EthernetInterfaceCollection.summary):
	// a MACAddress, a Status whose Health is OK and whose State is Enabled.
	Enabled bool
}

// Disk is one Drive (Storage) or Device (SimpleStorage).
type Disk struct {
	Name       string
	SizeBytes  int64
	Model      string
	Vendor     string
	Serial     string
	Rotational bool
}

// Hardware reads processors, memory, NICs and disks of the System. Each
// resource is fetched once, whatever links to it, and again only after it
// failed, when the whole read is tried again.
func (c *Client) Hardware(ctx context.Context, ep Endpoint) (*Hardware, error) {
	var hw *Hardware
	m := newMemo()
	err := c.withSystemMemo(ctx, ep, "read hardware", m, func(_ *remote, sys *schemas.ComputerSystem) error {
		h, err := readHardware(sys)
		hw = h
		return err
	})
	if hw != nil {
		hw.FetchedMost, hw.Fetches = m.maxFetches()
	}
	return hw, err
}

// archNames maps Redfish InstructionSet values to Ironic's cpu_arch
// (PROCESSOR_INSTRUCTION_SET_MAP), with the sets Ironic does not map yet.
var archNames = map[schemas.InstructionSet]string{
	"x86": "i686", "x86-64": "x86_64", "IA-64": "ia64", "ARM-A32": "arm",
	"ARM-A64": "aarch64", "MIPS32": "mips", "MIPS64": "mips64", "PowerISA": "ppc64le",
	"RV32": "riscv32", "RV64": "riscv64",
}

const minRootBytes = 4 << 30

func readHardware(sys *schemas.ComputerSystem) (*Hardware, error) {
	hw := &Hardware{Manufacturer: sys.Manufacturer, Model: sys.Model, SerialNumber: sys.SerialNumber, BIOSVersion: sys.BiosVersion}
	switch sys.Boot.BootSourceOverrideMode {
	case schemas.UEFIBootSourceOverrideMode:
		hw.BootMode = "uefi"
	case schemas.LegacyBootSourceOverrideMode:
		hw.BootMode = "bios"
	}
	if err := readProcessors(sys, hw); err != nil {
		return nil, err
	}
	if gib := gofish.Deref(sys.MemorySummary.TotalSystemMemoryGiB); gib > 0 {
		hw.MemoryMiB, hw.MemorySource = int64(gib*1024), "MemorySummary"
	} else if dimms, err := sys.Memory(); err == nil {
		for _, m := range dimms {
			if m.MemoryType == "" || m.MemoryType == schemas.DRAMMemoryType {
				hw.MemoryMiB += int64(gofish.Deref(m.CapacityMiB))
			}
		}
		if hw.MemoryMiB > 0 {
			hw.MemorySource = "Memory"
		}
	}
	if err := readNICs(sys, hw); err != nil {
		return nil, err
	}
	readStorage(sys, hw)
	return hw, nil
}

// readProcessors counts logical CPUs as sushy's ProcessorCollection.summary
// does and takes the architecture from the first processor, as Ironic's
// _get_processor_info does.
func readProcessors(sys *schemas.ComputerSystem, hw *Hardware) error {
	procs, err := sys.Processors()
	if err = flatten(err); err != nil && status(err) != http.StatusNotFound {
		return fmt.Errorf("read Processors: %w", err)
	}
	threads := 0
	for i, p := range procs {
		threads += gofish.Deref(p.TotalThreads)
		if i == 0 {
			hw.CPUArch = archNames[p.InstructionSet]
			hw.CPUModel = p.Model
			hw.CPUMaxMHz = gofish.Deref(p.MaxSpeedMHz)
		}
		if p.ProcessorType == "" || p.ProcessorType == schemas.CPUProcessorType {
			hw.CPUSockets++
		}
	}
	ps := sys.ProcessorSummary
	hw.CPUs = threads
	if hw.CPUs == 0 {
		hw.CPUs = int(gofish.Deref(ps.LogicalProcessorCount))
	}
	if hw.CPUSockets == 0 {
		hw.CPUSockets = int(gofish.Deref(ps.Count))
	}
	if hw.CPUModel == "" {
		hw.CPUModel = ps.Model
	}
	return nil
}

func readNICs(sys *schemas.ComputerSystem, hw *Hardware) error {
	nics, err := sys.EthernetInterfaces()
	if err = flatten(err); err != nil && status(err) != http.StatusNotFound {
		return fmt.Errorf("read EthernetInterfaces: %w", err)
	}
	for _, n := range nics {
		mac := n.MACAddress
		if _, err := net.ParseMAC(mac); err != nil {
			mac = n.PermanentMACAddress
		}
		if _, err := net.ParseMAC(mac); err != nil {
			continue // "not available", "" (Ironic skips invalid MACs)
		}
		_, validMAC := net.ParseMAC(n.MACAddress)
		hw.NICs = append(hw.NICs, NIC{Name: n.ID, MAC: mac, SpeedMbps: gofish.Deref(n.SpeedMbps),
			LinkUp:  n.LinkStatus == schemas.LinkUpLinkStatus,
			Enabled: validMAC == nil && n.Status.Health == schemas.OKHealth && n.Status.State == schemas.EnabledState})
	}
	return nil
}

// readStorage reads the drives, the volumes and the SimpleStorage devices
// and sizes the root disk as Ironic's _detect_local_gb does. A storage
// resource that cannot be read is skipped and reported: Ironic ignores
// storage errors. (Where one failure makes Ironic give up a whole kind —
// all volumes, all drives — ferro skips only the failing resource.)
func readStorage(sys *schemas.ComputerSystem, hw *Hardware) {
	skip := func(what string, err error) {
		if err = flatten(err); err != nil && status(err) != http.StatusNotFound {
			hw.Skipped = append(hw.Skipped, fmt.Sprintf("%s: %v", what, err))
		}
	}
	storages, err := sys.Storage()
	skip("Storage", err)
	var volumes, drives []int64
	seen := map[string]bool{}
	for _, s := range storages {
		ds, err := s.Drives()
		skip("Drives of "+s.ODataID, err)
		for _, d := range ds {
			// One drive linked many times (an Intel S2600 lists its only
			// drive 32 times) or by two controllers is one disk.
			if d.ODataID != "" && seen[d.ODataID] {
				continue
			}
			seen[d.ODataID] = true
			size := int64(gofish.Deref(d.CapacityBytes))
			if d.CapacityBytes != nil {
				drives = append(drives, size)
			}
			hw.Disks = append(hw.Disks, Disk{Name: d.ID, SizeBytes: size, Model: d.Model,
				Vendor: d.Manufacturer, Serial: d.SerialNumber, Rotational: d.MediaType == schemas.HDDMediaType})
		}
		vs, err := s.Volumes()
		skip("Volumes of "+s.ODataID, err)
		for _, v := range vs {
			if v.CapacityBytes != nil {
				volumes = append(volumes, int64(*v.CapacityBytes))
			}
		}
	}
	simple, err := sys.SimpleStorage()
	skip("SimpleStorage", err)
	var devices []int64
	var simpleDisks []Disk
	for _, s := range simple {
		for _, d := range s.Devices {
			if d.CapacityBytes == nil {
				continue // an empty bay or a CD drive
			}
			// sushy's disks_sizes_bytes counts enabled devices only (and
			// fails on a device without Status: ferro skips it).
			if d.Status.State == schemas.EnabledState {
				devices = append(devices, int64(*d.CapacityBytes))
			}
			simpleDisks = append(simpleDisks, Disk{Name: d.Name, SizeBytes: int64(*d.CapacityBytes), Model: d.Model, Vendor: d.Manufacturer})
		}
	}
	if len(hw.Disks) == 0 {
		// A BMC that has both usually lists the same disks twice.
		hw.Disks = simpleDisks
	}
	storage, source := smallestRoot(volumes), "volume"
	if storage == 0 {
		storage, source = smallestRoot(drives), "drive"
	}
	simpleSize := smallestRoot(devices)
	switch {
	case storage > 0 && simpleSize > 0:
		hw.LocalBytes, hw.LocalSource = min(storage, simpleSize), source
		if simpleSize < storage {
			hw.LocalSource = "simple storage"
		}
	case storage > 0:
		hw.LocalBytes, hw.LocalSource = storage, source
	case simpleSize > 0:
		hw.LocalBytes, hw.LocalSource = simpleSize, "simple storage"
	}
}

// smallestRoot is the smallest size of at least 4 GiB, or 0.
func smallestRoot(sizes []int64) int64 {
	slices.Sort(sizes)
	for _, s := range sizes {
		if s >= minRootBytes {
			return s
		}
	}
	return 0
}
