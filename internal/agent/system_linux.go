package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MountPseudoFS mounts what an init needs: /proc, /sys and devtmpfs on
// /dev. It is what Run does when the agent is PID 1; already mounted
// file systems are left alone.
func MountPseudoFS() error {
	var errs []error
	for _, m := range []struct{ src, dir, fstype string }{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"devtmpfs", "/dev", "devtmpfs"},
		{"tmpfs", "/run", "tmpfs"},
	} {
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			errs = append(errs, fmt.Errorf("mount %s: %w", m.dir, err))
			continue
		}
		err := unix.Mount(m.src, m.dir, m.fstype, unix.MS_NOSUID|unix.MS_NOEXEC, "")
		if err != nil && !errors.Is(err, unix.EBUSY) {
			errs = append(errs, fmt.Errorf("mount %s on %s: %w", m.fstype, m.dir, err))
		}
	}
	return errors.Join(errs...)
}

// LoadModules loads the kernel modules the machine needs from the list in
// root/listFile (see ParseModuleList), as udev's coldplug would: in rounds,
// the modules whose aliases match a device in root/sys (with their
// dependencies), until a round finds no new device, since loading a bus
// driver (virtio_pci) makes the devices its drivers bind to appear. extra
// names modules to load regardless; "all" loads the whole list. A module
// already loaded is fine; one that finds no device is logged. It returns
// how many it loaded.
func LoadModules(log *slog.Logger, root, listFile string, extra []string) (int, error) {
	b, err := os.ReadFile(filepath.Join(root, listFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // not a ferro ramdisk: the kernel has what it has
	}
	if err != nil {
		return 0, fmt.Errorf("read module list: %w", err)
	}
	mods := ParseModuleList(string(b))
	loaded := map[string]bool{}
	count := 0
	var errs []error
	load := func(names []string) {
		for _, m := range mods.Closure(names) {
			if loaded[m.Name] {
				continue
			}
			loaded[m.Name] = true
			err := finitModule(filepath.Join(root, m.Path))
			switch {
			case err == nil:
				count++
				log.Debug("module loaded", "module", m.Name)
			case errors.Is(err, unix.EEXIST):
			case errors.Is(err, unix.ENODEV), errors.Is(err, unix.ENXIO), errors.Is(err, unix.ENOENT):
				log.Debug("module found no device", "module", m.Name, "err", err)
			default:
				errs = append(errs, fmt.Errorf("load module %s: %w", m.Name, err))
			}
		}
	}
	var forced []string
	for _, name := range extra {
		if name == "all" {
			for _, m := range mods {
				forced = append(forced, m.Name)
			}
			continue
		}
		n := ModuleName(name)
		if mods.index(n) < 0 {
			errs = append(errs, fmt.Errorf("load module %s: not in the ramdisk", name))
			continue
		}
		forced = append(forced, n)
	}
	load(forced)
	for round := 0; round < 8; round++ {
		want := mods.Matching(Modaliases(root))
		fresh := want[:0]
		for _, n := range want {
			if !loaded[n] {
				fresh = append(fresh, n)
			}
		}
		if len(fresh) == 0 {
			break
		}
		load(fresh)
	}
	return count, errors.Join(errs...)
}

func finitModule(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.FinitModule(int(f.Fd()), "", 0)
}

// PowerOff syncs and powers the machine off. It returns only on failure.
func PowerOff() error {
	unix.Sync()
	return unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
}
