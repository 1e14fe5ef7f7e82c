package agent

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

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

// LoadModules loads the kernel modules listed in root/callback.ModuleList
// (paths relative to root, in dependency order) and then the named extra
// modules, found by name in that list. A module already loaded (or built
// in) is fine; a module whose hardware is absent may refuse to load, which
// is logged, not failed. It returns how many it loaded.
func LoadModules(log *slog.Logger, root, listFile string, extra []string) (int, error) {
	f, err := os.Open(filepath.Join(root, listFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // not a ferro ramdisk: the kernel has what it has
	}
	if err != nil {
		return 0, fmt.Errorf("read module list: %w", err)
	}
	defer f.Close()
	var paths []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			paths = append(paths, l)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read module list: %w", err)
	}
	byName := map[string]string{}
	for _, p := range paths {
		byName[ModuleName(p)] = p
	}
	var errs []error
	for _, name := range extra {
		p, ok := byName[strings.ReplaceAll(name, "-", "_")]
		if !ok {
			errs = append(errs, fmt.Errorf("load module %s: not in the ramdisk", name))
			continue
		}
		paths = append(paths, p)
	}
	loaded := 0
	for _, p := range paths {
		err := finitModule(filepath.Join(root, p))
		switch {
		case err == nil:
			loaded++
		case errors.Is(err, unix.EEXIST):
		case errors.Is(err, unix.ENODEV), errors.Is(err, unix.ENXIO), errors.Is(err, unix.ENOENT):
			log.Debug("module found no device", "module", ModuleName(p), "err", err)
		default:
			errs = append(errs, fmt.Errorf("load module %s: %w", ModuleName(p), err))
		}
	}
	return loaded, errors.Join(errs...)
}

func finitModule(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.FinitModule(int(f.Fd()), "", 0)
}

// ModuleName is the kernel's name for a module file: the base name without
// .ko (and compression suffix), dashes as underscores.
func ModuleName(path string) string {
	b := filepath.Base(path)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}

// PowerOff syncs and powers the machine off. It returns only on failure.
func PowerOff() error {
	unix.Sync()
	return unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
}
