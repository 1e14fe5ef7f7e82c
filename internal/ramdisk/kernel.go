package ramdisk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// Kernel is a kernel image and its module tree.
type Kernel struct {
	Image      string // the bzImage (vmlinuz)
	ModulesDir string // /lib/modules/<version>; "" when unknown
	Version    string
}

// DebianMetaPackage is the package whose dependency names the current
// Debian kernel.
const DebianMetaPackage = "linux-image-amd64"

// DefaultKernelCache is where Debian's kernel is kept unless told
// otherwise: ferro/kernels under the user cache directory (else the
// temporary directory). `ferro ramdisk build`, `ferro lab` and the boot
// tests share it, so a machine downloads each kernel once.
func DefaultKernelCache() string {
	c, err := os.UserCacheDir()
	if err != nil {
		c = os.TempDir()
	}
	return filepath.Join(c, "ferro", "kernels")
}

var debVersionRe = regexp.MustCompile(`^[0-9][0-9A-Za-z.+~-]*$`)

// FetchDebianKernel returns Debian's linux-image-<version> unpacked under
// cacheDir, downloading it with `apt-get download` and unpacking it with
// `dpkg-deb -x` (neither needs root) when it is not cached yet. An empty
// version means the one linux-image-amd64 depends on. Concurrent calls, in
// this process or others (test packages run in parallel), fetch it once:
// the others wait for the first.
func FetchDebianKernel(ctx context.Context, cacheDir, version string) (*Kernel, error) {
	if version == "" {
		v, err := debianKernelVersion(ctx)
		if err != nil {
			return nil, err
		}
		version = v
	}
	if !debVersionRe.MatchString(version) {
		return nil, fmt.Errorf("kernel version %q: not a Debian kernel version", version)
	}
	dir := filepath.Join(cacheDir, "linux-image-"+version)
	k := &Kernel{
		Image:      filepath.Join(dir, "root/boot/vmlinuz-"+version),
		ModulesDir: filepath.Join(dir, "root/lib/modules", version),
		Version:    version,
	}
	complete := func() bool {
		_, err := os.Stat(filepath.Join(dir, ".complete"))
		return err == nil
	}
	if complete() {
		return k, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	unlock, err := lockCache(cacheDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if complete() { // fetched while this call waited
		return k, nil
	}
	tmp, err := os.MkdirTemp(cacheDir, ".fetch-")
	if err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	pkg := "linux-image-" + version
	if err := run(ctx, tmp, "apt-get", "download", pkg); err != nil {
		return nil, fmt.Errorf("download %s: %w", pkg, err)
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, pkg+"_*.deb"))
	if len(debs) != 1 {
		return nil, fmt.Errorf("download %s: expected one .deb, found %d", pkg, len(debs))
	}
	if err := run(ctx, tmp, "dpkg-deb", "-x", debs[0], filepath.Join(tmp, "root")); err != nil {
		return nil, fmt.Errorf("unpack %s: %w", pkg, err)
	}
	if err := os.Remove(debs[0]); err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	os.RemoveAll(dir) // an earlier, incomplete attempt
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	if _, err := os.Stat(k.Image); err != nil {
		return nil, fmt.Errorf("unpacked %s: %w", pkg, err)
	}
	return k, nil
}

// lockCache takes the cache directory's lock, an flock(2) on its .lock
// file, which holds between processes and between calls of one process
// alike (each opens the file anew); the kernel frees it if the process dies.
func lockCache(cacheDir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(cacheDir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("kernel cache lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("kernel cache lock: %w", err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// debianKernelVersion asks apt which linux-image-<version> the meta package
// depends on.
func debianKernelVersion(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "apt-cache", "depends", DebianMetaPackage).Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache depends %s: %w", DebianMetaPackage, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Depends: linux-image-"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("apt-cache depends %s: no linux-image dependency", DebianMetaPackage)
}

// KernelFromPath describes a kernel given by path: its version from the
// file name (vmlinuz-<version>) unless given, its modules in modulesDir or
// else /lib/modules/<version> when that exists.
func KernelFromPath(image, modulesDir string) (*Kernel, error) {
	if _, err := os.Stat(image); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	k := &Kernel{Image: image, ModulesDir: modulesDir}
	if v, ok := strings.CutPrefix(filepath.Base(image), "vmlinuz-"); ok {
		k.Version = v
	}
	if k.ModulesDir == "" && k.Version != "" {
		for _, d := range []string{
			filepath.Join(filepath.Dir(image), "../lib/modules", k.Version), // an unpacked package
			filepath.Join("/lib/modules", k.Version),
		} {
			if _, err := os.Stat(d); err == nil {
				k.ModulesDir = filepath.Clean(d)
				break
			}
		}
	}
	if k.ModulesDir != "" {
		if _, err := os.Stat(k.ModulesDir); err != nil {
			return nil, fmt.Errorf("kernel modules: %w", err)
		}
	}
	return k, nil
}

func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return fmt.Errorf("%s not found (a Debian system is needed, or pass --kernel): %w", name, err)
		}
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
