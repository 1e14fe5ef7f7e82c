package ramdisk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ferrometal/ferro/internal/progress"
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
	return fetchDebianKernel(ctx, cacheDir, version, nil)
}

// fetchDebianKernel is FetchDebianKernel telling report what it does: the
// download with its bytes (the .deb's size from apt-cache), the unpacking.
func fetchDebianKernel(ctx context.Context, cacheDir, version string, report progress.Func) (*Kernel, error) {
	if version == "" {
		step := "finding the kernel " + DebianMetaPackage + " depends on (apt-cache)"
		report.Report(progress.Event{Step: step})
		v, err := debianKernelVersion(ctx)
		if err != nil {
			return nil, err
		}
		version = v
		report.Report(progress.Event{Step: step, End: true})
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
	pkg := "linux-image-" + version
	if complete() {
		report.Report(progress.Event{Step: "using the cached " + pkg, End: true})
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
		report.Report(progress.Event{Step: "using the cached " + pkg, End: true})
		return k, nil
	}
	tmp, err := os.MkdirTemp(cacheDir, ".fetch-")
	if err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	step := "downloading " + pkg + " (apt-get download)"
	var total, done int64
	stopWatch := func() int64 { return 0 }
	if report != nil {
		total = debSize(ctx, pkg)
		stopWatch = watchBytes(tmp, func(done int64) { report.Report(progress.Event{Step: step, Done: done, Total: total}) })
	}
	err = run(ctx, tmp, "apt-get", "download", pkg)
	done = stopWatch()
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", pkg, err)
	}
	report.Report(progress.Event{Step: step, Done: done, Total: max(total, done), End: true})
	report.Report(progress.Event{Step: "unpacking " + pkg})
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
	report.Report(progress.Event{Step: "unpacking " + pkg, End: true})
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

// debSize is the size of pkg's .deb as apt-cache knows it, 0 when it cannot tell.
func debSize(ctx context.Context, pkg string) int64 {
	out, err := exec.CommandContext(ctx, "apt-cache", "show", "--no-all-versions", pkg).Output()
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(line, "Size:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// watchBytes calls f every half second with the bytes of the files under
// dir (what a download has written so far) until the returned stop, which
// returns the last count.
func watchBytes(dir string, f func(int64)) (stop func() int64) {
	quit, finished := make(chan struct{}), make(chan int64)
	count := func() int64 {
		var n int64
		filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
		return n
	}
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				finished <- count()
				return
			case <-t.C:
				f(count())
			}
		}
	}()
	return func() int64 { close(quit); return <-finished }
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
