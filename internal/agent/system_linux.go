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
// root/listFile (see ParseModuleList), as udev's coldplug would: the
// modules whose aliases match a device in root/sys (with their
// dependencies), then those matching the devices these drivers created
// (loading a bus driver such as virtio_pci makes the devices appear that
// virtio_net binds to), until no new device needs a module. /sys is
// scanned once; the devices each module created are learnt from the
// kernel's uevents rather than by rescanning, which cost ~0.5 s a round
// under emulation; when the event socket is unavailable or overflows,
// /sys is scanned again.
//
// extra names modules to load regardless; "all" loads the whole list.
// netdev, when not nil, is called with each network interface a loaded
// driver creates, as the kernel announces it, so its link can come up
// while the other modules load. A module already loaded is fine; one that
// finds no device is logged. It returns how many it loaded.
func LoadModules(log *slog.Logger, root, listFile string, extra []string, netdev func(name string)) (int, error) {
	b, err := os.ReadFile(filepath.Join(root, listFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // not a ferro ramdisk: the kernel has what it has
	}
	if err != nil {
		return 0, fmt.Errorf("read module list: %w", err)
	}
	mods := ParseModuleList(string(b))
	// Subscribe before the scan: what appears after it is in the queue.
	var events deviceEventSource
	if sock, err := openUevents(); err != nil {
		log.Debug("no uevents, rescanning /sys after each module", "err", err)
	} else {
		defer sock.Close()
		events = sock
	}
	return loadModules(log, root, mods, extra, netdev, func(path string) error {
		return finitModule(filepath.Join(root, path))
	}, events)
}

// deviceEventSource tells what devices appeared since it was last asked:
// the uevent socket, or a test's fake. lost says it cannot tell.
type deviceEventSource interface {
	drain() (ev deviceEvents, lost bool, err error)
}

// loadModules is LoadModules with the module loader (given a module's
// path in the list) and the event source (nil: rescan /sys) passed in.
func loadModules(log *slog.Logger, root string, mods ModuleList, extra []string, netdev func(string), finit func(path string) error, events deviceEventSource) (int, error) {
	loaded := map[string]bool{}
	count := 0
	var errs []error
	// One module at a time: loading independent ones concurrently was
	// measured slower under QEMU/TCG (5.7–8.3 s → 13.4–14.0 s for the
	// same 23 modules).
	load := func(names []string) {
		for _, m := range mods.Closure(names) {
			if loaded[m.Name] {
				continue
			}
			loaded[m.Name] = true
			err := finit(m.Path)
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
	// created returns the modaliases of the devices that appeared since
	// the last call and hands the new network interfaces to netdev; ok is
	// false when the events cannot tell (no socket, or it overflowed).
	created := func() (aliases []string, ok bool) {
		if events == nil {
			return nil, false
		}
		ev, lost, err := events.drain()
		if netdev != nil {
			for _, n := range ev.netdevs {
				netdev(n)
			}
		}
		if err != nil || lost {
			log.Debug("uevents lost, rescanning /sys", "err", err)
			return nil, false
		}
		return ev.modaliases, true
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
	created() // what the forced modules made is in the scan below
	// Depth first: after each module, the drivers for the devices it
	// created load before the rest of the batch, so a NIC behind a bus
	// driver (virtio_net behind virtio_pci) comes up while the disk
	// controllers load. rescan is set when the events could not tell
	// what appeared: then /sys is scanned again, a level at a time.
	rescan := false
	var visit func(aliases []string, depth int)
	visit = func(aliases []string, depth int) {
		if depth > 16 {
			return // a driver that keeps making devices
		}
		for _, n := range mods.Matching(aliases) {
			if loaded[n] {
				continue
			}
			load([]string{n})
			if fresh, ok := created(); !ok {
				rescan = true
			} else if len(fresh) > 0 {
				visit(fresh, depth+1)
			}
		}
	}
	visit(Modaliases(root), 0)
	for round := 0; rescan && round < 16; round++ {
		rescan = false // set again only when something was loaded
		visit(Modaliases(root), 0)
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
