package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ferrometal/ferro/internal/inventory"
)

// Kernel block devices that are not disks (lsblk types other than "disk").
var notDisk = []string{"loop", "ram", "zram", "sr", "fd", "dm-", "md", "nbd", "mtdblock"}

var (
	hctlRe = regexp.MustCompile(`^\d+:\d+:\d+:\d+$`)
	pciRe  = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)
)

// Disks lists the whole-disk block devices under root/sys/block, as IPA's
// lsblk call does (type "disk"), sorted by name. Size is in bytes.
func Disks(root string) ([]inventory.Disk, error) {
	base := filepath.Join(root, "sys/block")
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("list block devices: %w", err)
	}
	disks := []inventory.Disk{}
	for _, e := range entries {
		name := e.Name()
		if skipBlock(name) {
			continue
		}
		dir := filepath.Join(base, name)
		sectors, ok := readInt(filepath.Join(dir, "size"))
		if !ok || sectors == 0 {
			continue // an empty removable drive
		}
		d := inventory.Disk{
			Name:       "/dev/" + name,
			Size:       sectors * 512, // sysfs counts 512-byte sectors whatever the device's
			Rotational: readString(filepath.Join(dir, "queue/rotational")) == "1",
			Model:      readString(filepath.Join(dir, "device/model")),
			Vendor:     readString(filepath.Join(dir, "device/vendor")),
			Serial:     diskSerial(dir),
			WWN:        diskWWN(readString(filepath.Join(dir, "device/wwid"))),
		}
		if n, ok := readInt(filepath.Join(dir, "queue/logical_block_size")); ok {
			d.LogicalSectors = int(n)
		}
		if n, ok := readInt(filepath.Join(dir, "queue/physical_block_size")); ok {
			d.PhysicalSectors = int(n)
		}
		if h := linkBase(filepath.Join(dir, "device")); hctlRe.MatchString(h) {
			d.HCTL = h
		}
		d.ByPath = byPath(dir, d.HCTL)
		disks = append(disks, d)
	}
	sort.Slice(disks, func(i, j int) bool { return disks[i].Name < disks[j].Name })
	return disks, nil
}

func skipBlock(name string) bool {
	for _, p := range notDisk {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// diskSerial is the serial number where the driver exposes it: virtio-blk
// in the block directory, NVMe on the controller, SCSI in the unit serial
// number VPD page (0x80: 4-byte header, then the ASCII serial).
func diskSerial(dir string) string {
	for _, p := range []string{"serial", "device/serial", "device/device/serial"} {
		if s := readString(filepath.Join(dir, p)); s != "" {
			return s
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "device/vpd_pg80")); err == nil && len(b) > 4 {
		return strings.TrimSpace(strings.Trim(string(b[4:]), "\x00"))
	}
	return ""
}

// diskWWN turns the kernel's wwid ("naa.5000c500a1b2c3d4") into udev's
// ID_WWN form that lsblk shows ("0x5000c500a1b2c3d4"); other designators
// (t10., eui.) are kept as they are.
func diskWWN(wwid string) string {
	if v, ok := strings.CutPrefix(wwid, "naa."); ok {
		return "0x" + v
	}
	return wwid
}

// byPath rebuilds udev's /dev/disk/by-path name from the device's place in
// sysfs, since the ramdisk runs no udev: the PCI function, plus the SCSI
// address for SCSI disks ("pci-0000:00:05.0-scsi-0:0:0:0"). ATA and USB
// paths, which udev names differently, are left out.
func byPath(dir, hctl string) string {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	parts := strings.Split(real, string(filepath.Separator))
	pci := ""
	for _, p := range parts {
		if pciRe.MatchString(p) {
			pci = p
		}
		if strings.HasPrefix(p, "ata") || strings.HasPrefix(p, "usb") {
			return ""
		}
	}
	if pci == "" {
		return ""
	}
	if hctl != "" {
		return "/dev/disk/by-path/pci-" + pci + "-scsi-" + hctl
	}
	return "/dev/disk/by-path/pci-" + pci
}

// RootDisk is IPA's guess when no root device hints are given: the smallest
// disk of at least 4 GiB, by size then name; nil when none is big enough.
func RootDisk(disks []inventory.Disk) *inventory.Disk {
	const minSize = 4 << 30
	var best *inventory.Disk
	for i := range disks {
		d := &disks[i]
		if d.Size < minSize {
			continue
		}
		if best == nil || d.Size < best.Size || (d.Size == best.Size && d.Name < best.Name) {
			best = d
		}
	}
	if best == nil {
		return nil
	}
	c := *best
	return &c
}
