package redfish

import (
	"context"
	"fmt"
	"net/http"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// Hardware is what out-of-band inspection learns from a System.
type Hardware struct {
	Manufacturer, Model, SerialNumber, BIOSVersion string

	// CPUs is the number of logical CPUs, as Ironic counts them.
	CPUs         int
	CPUArch      string // x86_64, aarch64, … (Ironic's names)
	CPUModel     string
	CPUSockets   int
	CPUMaxMHz    int
	MemoryMiB    int64
	MemorySource string // "Memory" (the DIMMs) or "MemorySummary"
	NICs         []NIC
	Disks        []Disk
	// BootMode is uefi or bios from BootSourceOverrideMode, or "".
	BootMode string
}

// NIC is one EthernetInterface.
type NIC struct {
	Name      string
	MAC       string
	SpeedMbps int
	LinkUp    bool
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

// Hardware reads processors, memory, NICs and disks of the System.
func (c *Client) Hardware(ctx context.Context, ep Endpoint) (*Hardware, error) {
	var hw *Hardware
	err := c.withSystem(ctx, ep, "read hardware", func(_ *remote, sys *schemas.ComputerSystem) error {
		h, err := readHardware(sys)
		hw = h
		return err
	})
	return hw, err
}

// archNames maps Redfish InstructionSet values to Ironic's cpu_arch.
var archNames = map[schemas.InstructionSet]string{
	"x86": "i686", "x86-64": "x86_64", "IA-64": "ia64", "ARM-A32": "arm",
	"ARM-A64": "aarch64", "MIPS32": "mips", "MIPS64": "mips64", "PowerISA": "ppc64le",
	"RV32": "riscv32", "RV64": "riscv64",
}

func readHardware(sys *schemas.ComputerSystem) (*Hardware, error) {
	hw := &Hardware{Manufacturer: sys.Manufacturer, Model: sys.Model, SerialNumber: sys.SerialNumber, BIOSVersion: sys.BiosVersion}
	switch sys.Boot.BootSourceOverrideMode {
	case schemas.UEFIBootSourceOverrideMode:
		hw.BootMode = "uefi"
	case schemas.LegacyBootSourceOverrideMode:
		hw.BootMode = "bios"
	}

	procs, err := sys.Processors()
	if err != nil && status(err) != http.StatusNotFound {
		return nil, fmt.Errorf("read Processors: %w", err)
	}
	threads := 0
	for _, p := range procs {
		if p.ProcessorType != "" && p.ProcessorType != schemas.CPUProcessorType {
			continue
		}
		hw.CPUSockets++
		threads += gofish.Deref(p.TotalThreads)
		if hw.CPUModel == "" {
			hw.CPUModel = p.Model
		}
		if hw.CPUArch == "" {
			hw.CPUArch = archNames[p.InstructionSet]
		}
		hw.CPUMaxMHz = max(hw.CPUMaxMHz, gofish.Deref(p.MaxSpeedMHz))
	}
	ps := sys.ProcessorSummary
	switch {
	case threads > 0:
		hw.CPUs = threads
	case ps.LogicalProcessorCount != nil && *ps.LogicalProcessorCount > 0:
		hw.CPUs = int(*ps.LogicalProcessorCount)
	default:
		hw.CPUs = int(gofish.Deref(ps.Count))
	}
	if hw.CPUSockets == 0 {
		hw.CPUSockets = int(gofish.Deref(ps.Count))
	}
	if hw.CPUModel == "" {
		hw.CPUModel = ps.Model
	}

	// Memory: the DIMMs when the System has a Memory collection that
	// answers, else MemorySummary (many BMCs have no /Memory).
	dimms, err := sys.Memory()
	if err == nil {
		for _, m := range dimms {
			if m.MemoryType == "" || m.MemoryType == schemas.DRAMMemoryType {
				hw.MemoryMiB += int64(gofish.Deref(m.CapacityMiB))
			}
		}
		hw.MemorySource = "Memory"
	}
	if hw.MemoryMiB == 0 {
		if gib := gofish.Deref(sys.MemorySummary.TotalSystemMemoryGiB); gib > 0 {
			hw.MemoryMiB = int64(gib * 1024)
			hw.MemorySource = "MemorySummary"
		}
	}

	nics, err := sys.EthernetInterfaces()
	if err != nil && status(err) != http.StatusNotFound {
		return nil, fmt.Errorf("read EthernetInterfaces: %w", err)
	}
	for _, n := range nics {
		mac := n.MACAddress
		if mac == "" {
			mac = n.PermanentMACAddress
		}
		if mac == "" {
			continue
		}
		hw.NICs = append(hw.NICs, NIC{Name: n.ID, MAC: mac, SpeedMbps: gofish.Deref(n.SpeedMbps), LinkUp: n.LinkStatus == schemas.LinkUpLinkStatus})
	}

	// Disks: Storage drives, else SimpleStorage devices (a BMC that has
	// both usually lists the same disks twice).
	storages, err := sys.Storage()
	if err != nil && status(err) != http.StatusNotFound {
		return nil, fmt.Errorf("read Storage: %w", err)
	}
	for _, s := range storages {
		drives, err := s.Drives()
		if err != nil {
			return nil, fmt.Errorf("read Drives of %s: %w", s.ODataID, err)
		}
		for _, d := range drives {
			hw.Disks = append(hw.Disks, Disk{Name: d.ID, SizeBytes: int64(gofish.Deref(d.CapacityBytes)), Model: d.Model,
				Vendor: d.Manufacturer, Serial: d.SerialNumber, Rotational: d.MediaType == schemas.HDDMediaType})
		}
	}
	if len(hw.Disks) == 0 {
		simple, err := sys.SimpleStorage()
		if err != nil && status(err) != http.StatusNotFound {
			return nil, fmt.Errorf("read SimpleStorage: %w", err)
		}
		for _, s := range simple {
			for _, d := range s.Devices {
				if d.CapacityBytes == nil {
					continue // an empty bay or a CD drive
				}
				hw.Disks = append(hw.Disks, Disk{Name: d.Name, SizeBytes: int64(*d.CapacityBytes), Model: d.Model, Vendor: d.Manufacturer})
			}
		}
	}
	return hw, nil
}
